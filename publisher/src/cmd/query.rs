//! `rete query`: a SPARQL query over a local file or a URL, its answer
//! written to stdout in the asked-for format. Evaluation and serialization
//! live in `rete_core::sparql` and `rete_core::results`; this file only wires
//! flags to them and shapes errors for a person. A local file is read as
//! evaluation goes and the answer streams; a URL is read in rounds (one
//! parallel batch of ranged GETs each, `docs/READ-PATH.md`), and the answer
//! is written once a run has missed nothing.

use crate::source::Location;
use crate::source::http::is_url;
use anyhow::{Context, Result};
use rete_core::read::{RoundOptions, run_in_rounds};
use rete_core::results::{Capped, ResultFormat, WriteError, write_answer};
use rete_core::sparql::{Answer, Budget, Limit, Query, QueryError, QueryOptions, evaluate, parse_query, warnings};
use rete_core::{RangeSource, ReadError, Store};
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
            Self::Query(QueryError::Syntax(_) | QueryError::Unsupported { .. } | QueryError::Read(ReadError::Format(_))) => 1,
            Self::Query(QueryError::Budget { .. } | QueryError::Read(ReadError::Budget { .. })) => 5,
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

/// An answer larger than this is not kept in memory while a URL is read in
/// rounds: the complete run is evaluated once more, streaming.
const MAX_BUFFERED_ANSWER_BYTES: usize = 16 << 20;

/// Evaluates the query over the file at `location` (a path or an http(s)
/// URL) and writes the answer to `out`.
pub fn run(location: &Path, args: &QueryArgs, out: impl Write) -> Result<()> {
    let query = parse_query(&args.query, args.base_iri.as_deref()).map_err(QueryFailed::Query)?;
    for warning in warnings(&query) {
        eprintln!("rete: warning: {warning}");
    }
    if let Some(format) = args.format {
        check_format(&query, format).map_err(QueryFailed::Format)?;
    }
    let options = options(args)?;
    if location.to_str().is_some_and(is_url) {
        return run_in_rounds_to(&Location::open(location)?, &query, args.format, &options, out);
    }
    let store = super::open(location)?;
    let answer = evaluate(&store, &query, &options).map_err(QueryFailed::Query)?;
    let mut out = BufWriter::with_capacity(1 << 16, out);
    write(answer, args.format, &mut out)?;
    out.flush()?;
    Ok(())
}

/// The evaluation options the flags ask for.
fn options(args: &QueryArgs) -> Result<QueryOptions> {
    let iris = |iris: &[String], flag: &str| iris.iter().map(|iri| oxrdf::NamedNode::new(iri.as_str()).with_context(|| format!("invalid {flag} <{iri}>"))).collect::<Result<Vec<_>>>();
    let mut budget = Budget::unlimited();
    if let Some(timeout) = args.timeout {
        let deadline = Instant::now() + timeout;
        budget.should_stop = Some(Arc::new(move || (Instant::now() >= deadline).then_some(Limit::Deadline)));
    }
    Ok(QueryOptions { default_graphs: iris(&args.default_graphs, "--default-graph")?, named_graphs: iris(&args.named_graphs, "--named-graph")?, budget })
}

/// Writes an answer, keeping what was written when evaluation fails midway
/// and then saying why it stops there.
fn write(answer: Answer<'_>, format: Option<ResultFormat>, out: &mut impl Write) -> Result<()> {
    let format = format.unwrap_or_else(|| ResultFormat::default_for(&answer));
    match write_answer(answer, format, &mut *out) {
        Ok(_) => Ok(()),
        Err(WriteError::Io(error)) => Err(error.into()),
        Err(WriteError::Query(error)) => {
            let _ = out.flush();
            Err(QueryFailed::Query(error).into())
        }
        Err(error) => Err(QueryFailed::Format(error).into()),
    }
}

/// Reads the file in rounds until a run misses nothing, then writes that
/// run's answer (kept in memory up to [`MAX_BUFFERED_ANSWER_BYTES`], else
/// evaluated once more from the fetched blocks, streaming).
fn run_in_rounds_to(location: &Location, query: &Query, format: Option<ResultFormat>, options: &QueryOptions, out: impl Write) -> Result<()> {
    let (store, _) = location.open_in_rounds(super::CACHE_BYTES)?;
    let mut buffer = Capped::new(MAX_BUFFERED_ANSWER_BYTES);
    let (outcome, _) = run_in_rounds(&store, &RoundOptions::default(), |ranges| location.read_ranges(ranges), |store| {
        buffer.clear();
        let answer = evaluate(store, query, options).map_err(QueryFailed::Query)?;
        write(answer, format, &mut buffer)
    })
    .map_err(|error| QueryFailed::Query(QueryError::Read(error)))?;
    let mut out = BufWriter::with_capacity(1 << 16, out);
    match buffer.into_bytes() {
        Some(bytes) => {
            out.write_all(&bytes)?;
            outcome?;
        }
        None => stream(&store, query, format, options, &mut out)?,
    }
    out.flush()?;
    store.release_fed();
    Ok(())
}

fn stream<S: RangeSource>(store: &Store<S>, query: &Query, format: Option<ResultFormat>, options: &QueryOptions, out: &mut impl Write) -> Result<()> {
    let answer = evaluate(store, query, options).map_err(QueryFailed::Query)?;
    write(answer, format, out)
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
