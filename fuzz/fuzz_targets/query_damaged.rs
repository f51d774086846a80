//! Target 2: queries and DESCRIBE over a real file with damaged blocks and
//! directories (`rete_fuzz::query_damaged`).
#![no_main]

libfuzzer_sys::fuzz_target!(init: rete_fuzz::init_query_damaged(), |data: &[u8]| rete_fuzz::within_time_limit(|| rete_fuzz::query_damaged(data)));
