//! Reading W3C test manifests (Turtle, `mf:`/`qt:` vocabularies) into [`TestCase`]s.
//!
//! A manifest is any node typed `mf:Manifest` (some manifests use a blank node rather than
//! `<>`); its `mf:include` list names further manifests and its `mf:entries` list the tests.
//! A malformed entry does not abort reading: it becomes a test of kind
//! [`TestKind::Invalid`], which the runner reports as a failure with the reason.

use crate::suite::{Suite, suite_relative};
use oxrdf::vocab::rdf;
use oxrdf::{Graph, NamedNodeRef, NamedOrBlankNodeRef, TermRef};
use oxttl::TurtleParser;
use std::fs::File;
use std::io::BufReader;

const MF: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#";

/// The manifest vocabulary terms the harness reads.
mod vocab {
    use oxrdf::NamedNodeRef;

    macro_rules! terms {
        ($($name:ident = $iri:literal;)*) => {
            $(pub const $name: NamedNodeRef<'static> = NamedNodeRef::new_unchecked($iri);)*
        };
    }

    terms! {
        MANIFEST = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#Manifest";
        INCLUDE = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#include";
        ENTRIES = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#entries";
        NAME = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#name";
        ACTION = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#action";
        RESULT = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#result";
        RESULT_CARDINALITY = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#resultCardinality";
        LAX_CARDINALITY = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#LaxCardinality";
        QUERY = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#query";
        DATA = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#data";
        GRAPH_DATA = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#graphData";
        COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment";
    }
}

/// One test of the suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    /// The test's IRI.
    pub id: String,
    /// `mf:name`.
    pub name: String,
    /// `rdfs:comment`, if any.
    pub comment: Option<String>,
    /// Folder of the manifest listing the test, e.g. `sparql10/basic`.
    pub directory: String,
    pub kind: TestKind,
    /// IRI of the query file (`qt:query`, or `mf:action` for syntax tests).
    pub query: String,
    /// `qt:data`: files forming the default graph.
    pub data: Vec<String>,
    /// `qt:graphData`: files each loaded as the named graph of its IRI.
    pub graph_data: Vec<String>,
    /// `mf:result`: IRI of the expected results.
    pub result: Option<String>,
    /// `mf:resultCardinality mf:LaxCardinality` (REDUCED): duplicates may or may not appear.
    pub lax_cardinality: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestKind {
    /// `mf:PositiveSyntaxTest` / `mf:PositiveSyntaxTest11`: the query must parse.
    PositiveSyntax,
    /// `mf:NegativeSyntaxTest` / `mf:NegativeSyntaxTest11`: the query must be rejected.
    NegativeSyntax,
    /// `mf:QueryEvaluationTest`: results must match `mf:result`.
    QueryEvaluation,
    /// `mf:CSVResultFormatTest`: results, written as CSV, must match the `.csv` file.
    CsvResultFormat,
    /// An entry the harness cannot run, with the reason (reported as a failure).
    Invalid(String),
}

impl TestCase {
    /// Syntax tests are counted apart from evaluation tests.
    pub fn is_syntax(&self) -> bool {
        matches!(
            self.kind,
            TestKind::PositiveSyntax | TestKind::NegativeSyntax
        )
    }

    /// Short id for reports: `sparql10/basic/manifest#base-prefix-1`.
    pub fn short_id(&self) -> String {
        crate::suite::short(&self.id)
    }
}

/// A manifest that cannot be read at all.
#[derive(Debug, thiserror::Error)]
#[error("manifest {iri}: {message}")]
pub struct ManifestError {
    pub iri: String,
    pub message: String,
}

/// Reads the manifest at `iri` and, recursively, the manifests it includes; returns the tests
/// in manifest order.
pub fn load_manifest(suite: &Suite, iri: &str) -> Result<Vec<TestCase>, ManifestError> {
    let mut tests = Vec::new();
    load_into(suite, iri, &mut tests, 0)?;
    Ok(tests)
}

fn load_into(
    suite: &Suite,
    iri: &str,
    tests: &mut Vec<TestCase>,
    depth: usize,
) -> Result<(), ManifestError> {
    let error = |message: String| ManifestError {
        iri: iri.to_owned(),
        message,
    };
    if depth > 8 {
        return Err(error("mf:include nested too deeply".into()));
    }
    let graph = read_manifest_graph(suite, iri).map_err(error)?;
    let directory = suite_relative(iri)
        .and_then(|relative| relative.rsplit_once('/').map(|(dir, _)| dir.to_owned()))
        .unwrap_or_default();

    let manifests: Vec<NamedOrBlankNodeRef<'_>> = graph
        .subjects_for_predicate_object(rdf::TYPE, vocab::MANIFEST)
        .collect();
    if manifests.is_empty() {
        return Err(error("no node typed mf:Manifest".into()));
    }
    for manifest in manifests {
        if let Some(list) = graph.object_for_subject_predicate(manifest, vocab::INCLUDE) {
            for included in read_list(&graph, list).map_err(error)? {
                match included {
                    TermRef::NamedNode(node) => load_into(suite, node.as_str(), tests, depth + 1)?,
                    other => return Err(error(format!("mf:include member {other} is not an IRI"))),
                }
            }
        }
        if let Some(list) = graph.object_for_subject_predicate(manifest, vocab::ENTRIES) {
            for entry in read_list(&graph, list).map_err(error)? {
                tests.push(read_test(&graph, entry, &directory));
            }
        }
    }
    Ok(())
}

fn read_manifest_graph(suite: &Suite, iri: &str) -> Result<Graph, String> {
    let path = suite
        .local_path(iri)
        .ok_or_else(|| "IRI outside the test suite".to_owned())?;
    let file = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let parser = TurtleParser::new()
        .with_base_iri(iri)
        .map_err(|e| e.to_string())?
        .for_reader(BufReader::new(file));
    parser
        .map(|triple| triple.map_err(|e| e.to_string()))
        .collect()
}

fn read_test(graph: &Graph, entry: TermRef<'_>, directory: &str) -> TestCase {
    let (id, subject) = match entry {
        TermRef::NamedNode(node) => (node.as_str().to_owned(), Some(node.into())),
        TermRef::BlankNode(node) => (node.to_string(), Some(node.into())),
        other => (other.to_string(), None),
    };
    let mut test = TestCase {
        id,
        name: String::new(),
        comment: None,
        directory: directory.to_owned(),
        kind: TestKind::Invalid("manifest entry is a literal".into()),
        query: String::new(),
        data: Vec::new(),
        graph_data: Vec::new(),
        result: None,
        lax_cardinality: false,
    };
    let Some(subject) = subject else {
        return test;
    };
    test.name = literal(graph, subject, vocab::NAME).unwrap_or_default();
    test.comment = literal(graph, subject, vocab::COMMENT);
    test.lax_cardinality = graph
        .object_for_subject_predicate(subject, vocab::RESULT_CARDINALITY)
        .is_some_and(|value| value == vocab::LAX_CARDINALITY.into());
    test.result = iri(graph, subject, vocab::RESULT);
    test.kind = match read_kind_and_action(graph, subject, &mut test) {
        Ok(kind) => kind,
        Err(reason) => TestKind::Invalid(reason),
    };
    test
}

/// Fills `query`, `data` and `graph_data` from `mf:action` and returns the test kind.
fn read_kind_and_action(
    graph: &Graph,
    subject: NamedOrBlankNodeRef<'_>,
    test: &mut TestCase,
) -> Result<TestKind, String> {
    let types: Vec<String> = graph
        .objects_for_subject_predicate(subject, rdf::TYPE)
        .filter_map(|t| match t {
            TermRef::NamedNode(node) => node.as_str().strip_prefix(MF).map(str::to_owned),
            _ => None,
        })
        .collect();
    let kind = match types.first().map(String::as_str) {
        Some("PositiveSyntaxTest" | "PositiveSyntaxTest11") => TestKind::PositiveSyntax,
        Some("NegativeSyntaxTest" | "NegativeSyntaxTest11") => TestKind::NegativeSyntax,
        Some("QueryEvaluationTest") => TestKind::QueryEvaluation,
        Some("CSVResultFormatTest") => TestKind::CsvResultFormat,
        Some(other) => return Err(format!("unsupported test type mf:{other}")),
        None => return Err("no mf: test type".into()),
    };
    let action = graph
        .object_for_subject_predicate(subject, vocab::ACTION)
        .ok_or("no mf:action")?;
    match (&kind, action) {
        (TestKind::PositiveSyntax | TestKind::NegativeSyntax, TermRef::NamedNode(query)) => {
            test.query = query.as_str().to_owned();
        }
        (TestKind::QueryEvaluation | TestKind::CsvResultFormat, TermRef::BlankNode(action)) => {
            let action = NamedOrBlankNodeRef::from(action);
            test.query = iri(graph, action, vocab::QUERY).ok_or("mf:action has no qt:query")?;
            test.data = iris(graph, action, vocab::DATA)?;
            test.graph_data = iris(graph, action, vocab::GRAPH_DATA)?;
            if test.result.is_none() {
                return Err("no mf:result".into());
            }
        }
        _ => return Err(format!("unexpected mf:action {action}")),
    }
    Ok(kind)
}

fn literal(
    graph: &Graph,
    subject: NamedOrBlankNodeRef<'_>,
    predicate: NamedNodeRef<'_>,
) -> Option<String> {
    match graph.object_for_subject_predicate(subject, predicate)? {
        TermRef::Literal(literal) => Some(literal.value().to_owned()),
        _ => None,
    }
}

fn iri(
    graph: &Graph,
    subject: NamedOrBlankNodeRef<'_>,
    predicate: NamedNodeRef<'_>,
) -> Option<String> {
    match graph.object_for_subject_predicate(subject, predicate)? {
        TermRef::NamedNode(node) => Some(node.as_str().to_owned()),
        _ => None,
    }
}

/// All IRI values of `predicate`, sorted so runs are reproducible.
fn iris(
    graph: &Graph,
    subject: NamedOrBlankNodeRef<'_>,
    predicate: NamedNodeRef<'_>,
) -> Result<Vec<String>, String> {
    let mut values = graph
        .objects_for_subject_predicate(subject, predicate)
        .map(|value| match value {
            TermRef::NamedNode(node) => Ok(node.as_str().to_owned()),
            other => Err(format!("{predicate} value {other} is not an IRI")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    values.sort();
    Ok(values)
}

/// Members of an RDF collection.
fn read_list<'a>(graph: &'a Graph, head: TermRef<'a>) -> Result<Vec<TermRef<'a>>, String> {
    let mut members = Vec::new();
    let mut node = head;
    while node != rdf::NIL.into() {
        let cell = match node {
            TermRef::NamedNode(n) => NamedOrBlankNodeRef::from(n),
            TermRef::BlankNode(n) => NamedOrBlankNodeRef::from(n),
            _ => return Err(format!("malformed RDF list at {node}")),
        };
        members.push(
            graph
                .object_for_subject_predicate(cell, rdf::FIRST)
                .ok_or_else(|| format!("RDF list cell {cell} has no rdf:first"))?,
        );
        node = graph
            .object_for_subject_predicate(cell, rdf::REST)
            .ok_or_else(|| format!("RDF list cell {cell} has no rdf:rest"))?;
        if members.len() > 100_000 {
            return Err("RDF list too long (cycle?)".into());
        }
    }
    Ok(members)
}
