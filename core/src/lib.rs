//! rete-core: the `.rete` format and its reader.
//!
//! A `.rete` file holds an RDF dataset as a term dictionary plus the six orders
//! of its quads in small compressed blocks (see `docs/FORMAT.md`). This crate
//! encodes and decodes those bytes and answers quad patterns over them. It does
//! no I/O of its own: reads go through a [`RangeSource`] the host supplies (a
//! file, an HTTP client, an R2 binding), so the same code runs in the `rete`
//! CLI and in a wasm Worker. [`sparql`] evaluates SPARQL 1.1 queries over a
//! [`Store`] within a caller's budget, and [`results`] writes their answers.
#![warn(missing_docs)]

mod error;
pub mod format;
pub mod graph;
pub mod read;
pub mod results;
pub mod search;
pub mod sparql;

pub use error::{FormatError, ReadError, ReadLimit};
pub use format::header::{Header, SectionKind};
pub use format::permutation::Permutation;
pub use format::term::{TermId, decode_term, encode_term};
pub use read::{ByteRange, QuadPattern, RangeSource, Store};
