//! Target 3: requests through the Worker's request handling, natively over
//! an in-memory bucket (`rete_fuzz::request`).
#![no_main]

libfuzzer_sys::fuzz_target!(init: rete_fuzz::init_request(), |data: &[u8]| rete_fuzz::within_time_limit(|| rete_fuzz::request(data)));
