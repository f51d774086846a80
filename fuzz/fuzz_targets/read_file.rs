//! Target 1: arbitrary bytes as a `.rete` file (`rete_fuzz::read_file`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rete_fuzz::within_time_limit(|| rete_fuzz::read_file(data)));
