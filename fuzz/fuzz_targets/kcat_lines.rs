#![no_main]
// The dump reader: any bytes are lines that parse or fail with a numbered error, never a panic;
// with a small line limit, longer lines are skipped and counted.
use connect_state_ops::kcat::{read_dump, ReadOptions};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = read_dump(data, ReadOptions::STRICT);
    let small = ReadOptions {
        skip_bad_lines: true,
        max_line_bytes: 64,
    };
    if let Ok(dump) = read_dump(data, small) {
        for record in &dump.records {
            let _ = record.as_record();
        }
        assert!(dump.bad_lines.first.len() <= dump.bad_lines.count);
    }
});
