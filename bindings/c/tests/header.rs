//! The committed header is what cbindgen makes of the crate (CI fails when it is out of date).

#[test]
fn the_committed_header_is_cbindgens() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let config =
        cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_src(format!("{dir}/src/lib.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = format!("{dir}/include/connect_state.h");
    if std::env::var_os("CONNECT_STATE_WRITE_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("the header is writable");
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "bindings/c/include/connect_state.h is out of date: run \
         CONNECT_STATE_WRITE_HEADER=1 cargo test -p connect-state-c --test header"
    );
}
