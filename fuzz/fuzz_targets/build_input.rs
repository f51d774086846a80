//! Target 4: `rete build` on damaged N-Triples, N-Quads, Turtle or TriG
//! (`rete_fuzz::build_input`).
#![no_main]

libfuzzer_sys::fuzz_target!(init: rete_fuzz::init_build_input(), |data: &[u8]| {
    rete_fuzz::within_time_limit(|| rete_fuzz::build_input(data));
});
