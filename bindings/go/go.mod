module example.invalid/connect-state/bindings/go

go 1.26
