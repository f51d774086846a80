//! The CARD section (FORMAT.md §7): a small JSON description of the dataset.
//! Kept as JSON so the edge can serve it with no translation.

use serde::{Deserialize, Serialize};

/// The card's members known to this build; unknown members are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Card {
    /// Version of rete that wrote the file.
    pub rete_version: String,
    /// Distinct quads.
    pub quads: u64,
    /// Distinct terms.
    pub terms: u64,
    /// Named graphs.
    pub graphs: u64,
    /// Predicates by quad count.
    pub predicates: Vec<PredicateCount>,
    /// Predicates left out of `predicates`.
    #[serde(default)]
    pub predicates_more: u64,
    /// Classes by instance count.
    pub classes: Vec<ClassCount>,
    /// Classes left out of `classes`.
    #[serde(default)]
    pub classes_more: u64,
    /// Input files.
    #[serde(default)]
    pub sources: Vec<SourceFile>,
    /// Members this build does not know.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// A predicate and the quads using it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredicateCount {
    /// Predicate IRI.
    pub iri: String,
    /// Quads with that predicate.
    pub quads: u64,
}

/// A class and its instances.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassCount {
    /// Class IRI.
    pub iri: String,
    /// Distinct (subject, graph) pairs typed with it.
    pub instances: u64,
}

/// An input file of the build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    /// File name as given.
    pub name: String,
    /// Size in bytes (0 when unknown, e.g. stdin).
    pub bytes: u64,
}

/// FORMAT.md §7: lists are capped at this many entries.
pub const CARD_LIST_CAP: usize = 1000;
