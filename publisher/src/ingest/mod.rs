//! Turning RDF text into a `.rete` file with bounded memory: parse on all
//! cores (numbering terms in order of appearance), merge the term runs into
//! the sorted dictionary, renumber quads, then sort them six times.

pub mod axioms;
pub mod build;
pub mod community;
pub mod dictionary;
pub mod heads;
pub mod input;
pub mod metadata;
pub mod parse;
pub mod readback;
pub mod search;
pub mod sort;
pub mod stats;
pub mod summary;
