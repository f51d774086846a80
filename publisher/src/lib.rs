//! The `rete` command line as a library: building, reading and checking
//! `.rete` files. `main.rs` is only argument parsing and error printing;
//! tests and the conformance harness call these modules directly.

pub mod cmd;
pub mod ingest;
pub mod r2;
pub mod source;
