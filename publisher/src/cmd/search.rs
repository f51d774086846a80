//! `rete search`: finds resources by name through a file's label search
//! index (FORMAT.md §12), reading the file where it sits (a path or a URL) in
//! rounds as a remote host would, and says what that cost.

use super::UsageError;
use crate::source::Location;
use anyhow::{Context, Result};
use rete_core::RangeSource;
use rete_core::read::{RoundOptions, RoundStats, run_in_rounds};
use rete_core::search::{MAX_LIMIT, SearchAnswer, SearchRequest, search};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// The JSON `rete search --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchOutput {
    /// The query as given.
    pub query: String,
    /// Hits, best first.
    pub results: Vec<SearchResult>,
    /// Whether hits may be missing (a word too common to be listed whole).
    pub cut: bool,
    /// Sequential rounds of reads, the open included.
    pub rounds: u64,
    /// Range requests.
    pub requests: u64,
    /// Bytes fetched.
    pub bytes: u64,
}

/// One hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    /// The resource's IRI.
    pub iri: String,
    /// The label that matched.
    pub label: String,
    /// The label's language tag, `""` when it has none.
    pub lang: String,
    /// Rank score: the resource's weight from its links, plus 16 when every word matched whole.
    pub score: u64,
}

impl SearchResult {
    /// A hit as printed.
    pub fn from_hit(hit: &rete_core::search::SearchHit) -> Self {
        let iri = match &hit.subject {
            oxrdf::Term::NamedNode(node) => node.as_str().to_owned(),
            other => other.to_string(),
        };
        let (label, lang) = match &hit.label {
            oxrdf::Term::Literal(literal) => (literal.value().to_owned(), literal.language().unwrap_or_default().to_owned()),
            other => (other.to_string(), String::new()),
        };
        Self { iri, label, lang, score: hit.score }
    }
}

/// Searches the file at `location`.
pub fn search_location(location: &Path, query: &str, lang: Option<&str>, limit: usize) -> Result<SearchOutput> {
    if limit == 0 || limit > MAX_LIMIT {
        return Err(UsageError(format!("--limit {limit} is out of range; give 1 to {MAX_LIMIT}")).into());
    }
    let request = SearchRequest::typed(query, lang, limit);
    let location = Location::open(location)?;
    let (store, opened) = location.open_in_rounds(super::CACHE_BYTES)?;
    let (answer, stats) = run_in_rounds(&store, &RoundOptions::default(), |ranges| location.read_ranges(ranges), |store| search(store, &request))
        .with_context(|| format!("cannot search {}", location.name()))?;
    let answer: SearchAnswer = answer.with_context(|| format!("cannot search {}", location.name()))?;
    let total: RoundStats = opened + stats;
    Ok(SearchOutput {
        query: query.to_owned(),
        results: answer.hits.iter().map(SearchResult::from_hit).collect(),
        cut: answer.cut,
        rounds: total.rounds,
        requests: total.requests,
        bytes: total.bytes,
    })
}

/// `rete search`: searches and prints.
pub fn run(location: &Path, query: &str, lang: Option<&str>, limit: usize, json: bool, mut out: impl Write) -> Result<()> {
    let output = search_location(location, query, lang, limit)?;
    if json {
        serde_json::to_writer(&mut out, &output)?;
        writeln!(out)?;
        return Ok(());
    }
    for result in &output.results {
        let lang = if result.lang.is_empty() { String::new() } else { format!("@{}", result.lang) };
        writeln!(out, "{:>4}  {}{lang}  <{}>", result.score, result.label, result.iri)?;
    }
    let cut = if output.cut { " (cut: a word is too common to list every hit)" } else { "" };
    writeln!(out, "{} results{cut}; {} rounds, {} requests, {} bytes", output.results.len(), output.rounds, output.requests, output.bytes)?;
    Ok(())
}
