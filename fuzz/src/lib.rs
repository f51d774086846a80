//! rete's fuzz targets as plain functions: each `fuzz_targets/*.rs` binary
//! hands libFuzzer's input to one of them, and `tests/replay.rs` runs them on
//! stable Rust over every input that once failed (`fuzz/regressions/`), and
//! `tests/smoke.rs` runs each on a few thousand mutated inputs. A function
//! returns normally for any input; a panic, an abort (the allocation limit),
//! a hang or a broken invariant asserted here is a finding. README.md says how to run the campaigns.

pub mod limits;
mod bases;
mod build;
mod damage;
mod repair;
mod request;
mod walk;

pub use bases::{BaseFile, base_files};
pub use build::{Built, build_input, init as init_build_input};
pub use limits::within_time_limit;
pub use damage::{Damage, Edit, Mutation, Outcome, init as init_query_damaged, parts_of, query, query_damaged};
pub use repair::repair;
pub use request::{init as init_request, request};
pub use walk::walk;

#[global_allocator]
static ALLOCATOR: limits::Limited = limits::Limited;

/// Target `read_file`: arbitrary bytes as a `.rete` file, read every way a
/// host reads one, then read again with their checksums repaired (so that
/// the decoders behind each checksum see the fuzzer's bytes too).
pub fn read_file(data: &[u8]) {
    let _ = walk(data);
    let mut repaired = data.to_vec();
    if repair(&mut repaired) {
        let _ = walk(&repaired);
    }
}
