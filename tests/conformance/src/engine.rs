//! The interface between the harness and a SPARQL engine.
//!
//! The harness knows nothing about how an engine stores data: it hands over the query text,
//! its base IRI and the test's data files, and gets back plain RDF terms. That keeps the same
//! manifests, comparison rules and report usable for the in-memory reference engine
//! ([`crate::SparevalMemory`]) and for rete's own engine over a built `.rete` file.

use oxrdf::{Term, Triple, Variable};
use oxrdfio::{RdfFormat, RdfParser};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// A data file of a test and the IRI it is known by: its base IRI when parsing, and the
/// graph name when it is loaded as a named graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathAndIri {
    pub path: PathBuf,
    pub iri: String,
}

/// Maps an absolute IRI from the query's `FROM` / `FROM NAMED` clauses to a local file,
/// `None` when the suite has no such file.
pub type Resolver<'a> = &'a dyn Fn(&str) -> Option<PathBuf>;

/// What a query returned.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// SELECT: a solution sequence.
    Solutions(Solutions),
    /// ASK.
    Boolean(bool),
    /// CONSTRUCT / DESCRIBE.
    Graph(Vec<Triple>),
}

/// A solution sequence: `rows[i][j]` is the value of `variables[j]` in solution `i`
/// (`None` when unbound). Row order is the engine's output order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Solutions {
    pub variables: Vec<Variable>,
    pub rows: Vec<Vec<Option<Term>>>,
}

/// Why an engine could not answer. The harness reports the message as the failure reason.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("query rejected: {0}")]
    Parse(String),
    #[error("cannot load {}: {message}", path.display())]
    Load { path: PathBuf, message: String },
    #[error("evaluation failed: {0}")]
    Evaluation(String),
    #[error("not supported: {0}")]
    Unsupported(String),
}

/// A SPARQL engine under test.
pub trait Engine {
    /// Name shown in reports.
    fn name(&self) -> &str {
        "engine"
    }

    /// Builds the test's dataset and evaluates `query` (parsed with base IRI `base`) over it.
    ///
    /// * `default_graph`: files whose triples together form the default graph.
    /// * `named_graphs`: files that each become a named graph named by `iri`.
    /// * `resolve`: for the query's own `FROM <iri>` / `FROM NAMED <iri>` clauses; each such
    ///   file is loaded as a named graph named by its IRI, and the query's dataset clause then
    ///   picks the graphs (when present, it replaces the manifest's dataset).
    ///
    /// Files are RDF in the format given by their extension (`.ttl`, `.rdf`, `.nt`);
    /// [`read_triples`] parses them. Blank nodes of different files are distinct.
    /// Literals must keep their lexical form: results are compared term by term.
    fn evaluate(
        &self,
        query: &str,
        base: &str,
        default_graph: &[PathAndIri],
        named_graphs: &[PathAndIri],
        resolve: Resolver<'_>,
    ) -> Result<Answer, EngineError>;

    /// Markdown closing the conformance report: why the failures fail.
    fn notes(&self) -> &str {
        ""
    }

    /// Parses `query` with base IRI `base` without evaluating it (syntax tests):
    /// `Err` with the parser's message when the query is not valid SPARQL 1.1.
    fn parse_only(&self, query: &str, base: &str) -> Result<(), String>;
}

/// Reads the triples of an RDF file (format from its extension), with `file.iri` as base IRI
/// and fresh blank nodes, so that two files never share a blank node.
pub fn read_triples(file: &PathAndIri) -> Result<Vec<Triple>, EngineError> {
    let load_error = |message: String| EngineError::Load {
        path: file.path.clone(),
        message,
    };
    let format =
        rdf_format(&file.path).ok_or_else(|| load_error("unknown RDF file extension".into()))?;
    let reader = File::open(&file.path).map_err(|e| load_error(e.to_string()))?;
    let parser = RdfParser::from_format(format)
        .with_base_iri(file.iri.as_str())
        .map_err(|e| load_error(e.to_string()))?
        .rename_blank_nodes();
    parser
        .for_reader(BufReader::new(reader))
        .map(|quad| {
            let quad = quad.map_err(|e| load_error(e.to_string()))?;
            if quad.graph_name.is_default_graph() {
                Ok(Triple::new(quad.subject, quad.predicate, quad.object))
            } else {
                Err(load_error(
                    "file holds named graphs; a graph file was expected".into(),
                ))
            }
        })
        .collect()
}

/// RDF syntax of a file, by extension.
pub fn rdf_format(path: &Path) -> Option<RdfFormat> {
    RdfFormat::from_extension(path.extension()?.to_str()?)
}
