#![no_main]
// The dump reader: any bytes are lines that parse or fail with a numbered error, never a panic.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = connect_state_cli::kcat::read_dump(data, false);
    if let Ok(dump) = connect_state_cli::kcat::read_dump(data, true) {
        for record in &dump.records {
            let _ = record.as_record();
        }
    }
});
