#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| connect_state_tests::fuzzing::simulator(data));
