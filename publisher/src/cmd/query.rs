//! `rete query`: a SPARQL query over a local file, its answer streamed to
//! stdout in the asked-for format. Evaluation and serialization live in
//! `rete_core::sparql` and `rete_core::results`; this file only wires flags
//! to them and shapes errors for a person.

use anyhow::{Context, Result};
use rete_core::results::{ResultFormat, WriteError, write_answer};
use rete_core::sparql::{Budget, Query, QueryError, QueryOptions, evaluate, parse_query};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `rete query` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct QueryArgs {
    /// The query text.
    pub query: String,
    /// Base IRI for relative IRIs in the query.
    pub base_iri: Option<String>,
    /// Output format; by default JSON for SELECT/ASK, N-Triples for graphs.
    pub format: Option<ResultFormat>,
    /// `default-graph-uri` IRIs.
    pub default_graphs: Vec<String>,
    /// `named-graph-uri` IRIs.
    pub named_graphs: Vec<String>,
    /// Stop after this long.
    pub timeout: Option<Duration>,
}

/// A query that could not be answered. Its `Display` shows a syntax error
/// with the query line and a caret under the column.
#[derive(Debug)]
pub enum QueryFailed {
    /// Parsing or evaluation failed.
    Query(QueryError),
    /// `--format` cannot hold what the query returns.
    Format(WriteError),
}

impl QueryFailed {
    /// 1 for a bad query or a corrupt file, 2 for a format that does not fit
    /// the query form, 5 for a budget, 3 otherwise (see `EXIT_CODES`).
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Query(QueryError::Syntax(_) | QueryError::Unsupported { .. } | QueryError::Read(rete_core::ReadError::Format(_))) => 1,
            Self::Query(QueryError::Budget { .. }) => 5,
            Self::Format(_) => 2,
            Self::Query(_) => 3,
        }
    }
}

impl std::fmt::Display for QueryFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Query(QueryError::Syntax(error)) => {
                write!(f, "{error}")?;
                for line in error.pointer().iter().flat_map(|p| p.lines()) {
                    write!(f, "\n  {line}")?;
                }
                Ok(())
            }
            Self::Query(error) => write!(f, "{error}"),
            Self::Format(error) => write!(f, "{error} (--format)"),
        }
    }
}

impl std::error::Error for QueryFailed {}

/// Evaluates the query over the file at `path` and writes the answer to `out`.
pub fn run(path: &Path, args: &QueryArgs, out: impl Write) -> Result<()> {
    let query = parse_query(&args.query, args.base_iri.as_deref()).map_err(QueryFailed::Query)?;
    if let Some(format) = args.format {
        check_format(&query, format).map_err(QueryFailed::Format)?;
    }
    let store = super::open(path)?;
    let iris = |iris: &[String], flag: &str| iris.iter().map(|iri| oxrdf::NamedNode::new(iri.as_str()).with_context(|| format!("invalid {flag} <{iri}>"))).collect::<Result<Vec<_>>>();
    let mut budget = Budget::unlimited();
    if let Some(timeout) = args.timeout {
        let deadline = Instant::now() + timeout;
        budget.should_stop = Some(Arc::new(move || Instant::now() >= deadline));
    }
    let options = QueryOptions { default_graphs: iris(&args.default_graphs, "--default-graph")?, named_graphs: iris(&args.named_graphs, "--named-graph")?, budget };
    let answer = evaluate(&store, &query, &options).map_err(QueryFailed::Query)?;
    let format = args.format.unwrap_or_else(|| ResultFormat::default_for(&answer));
    let mut out = BufWriter::with_capacity(1 << 16, out);
    match write_answer(answer, format, &mut out) {
        Ok(_) => {}
        Err(WriteError::Io(error)) => return Err(error.into()),
        Err(WriteError::Query(error)) => {
            // Keep what was written, then say why it stops there.
            let _ = out.flush();
            return Err(QueryFailed::Query(error).into());
        }
        Err(error) => return Err(QueryFailed::Format(error).into()),
    }
    out.flush()?;
    Ok(())
}

/// Rejects a format that cannot hold the query's answer before any work.
fn check_format(query: &Query, format: ResultFormat) -> Result<(), WriteError> {
    let (graph, answer) = match query {
        Query::Select { .. } => (false, "SELECT solutions"),
        Query::Ask { .. } => (false, "an ASK boolean"),
        Query::Construct { .. } | Query::Describe { .. } => (true, "a graph"),
    };
    if format.is_graph() == graph {
        return Ok(());
    }
    let suggestion = if graph { "nt, ttl, nq, trig, jsonld or rdf" } else { "json, xml, csv or tsv" };
    Err(WriteError::FormatMismatch { format, answer, suggestion })
}
