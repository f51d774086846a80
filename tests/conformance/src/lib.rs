//! W3C SPARQL conformance harness for rete, independent of any one engine.
//!
//! The harness reads the W3C manifests ([`manifest`]), the expected results in every format
//! the suite uses ([`expected`]), runs each test through an [`Engine`] ([`runner`]) and
//! compares by the W3C rules ([`compare`]): exact terms, blank nodes up to one bijection,
//! order only under ORDER BY. Keeping the engine behind a trait lets the same run validate
//! the harness with an in-memory reference engine ([`SparevalMemory`]) and then measure
//! rete's own engine over `.rete` files.
//!
//! A new engine implements [`Engine`] and calls [`cli_main`] from a binary, or
//! [`run_tests`] from a test.

pub mod compare;
pub mod engine;
pub mod expected;
pub mod manifest;
mod rete_engine;
pub mod runner;
mod spareval_memory;
pub mod suite;

pub use engine::{Answer, Engine, EngineError, PathAndIri, Resolver, Solutions, read_triples};
pub use manifest::{TestCase, TestKind, load_manifest};
pub use runner::{
    Counts, Floor, Outcome, Report, SKIPPED, TestResult, cli_main, load_all, load_directory,
    run_test, run_tests,
};
pub use rete_engine::Rete;
pub use spareval_memory::SparevalMemory;
pub use suite::Suite;
