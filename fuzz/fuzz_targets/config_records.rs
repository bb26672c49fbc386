#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| connect_state_core::fuzzing::config_records(data));
