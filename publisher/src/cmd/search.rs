//! `rete search`: finds resources by name through a file's label search
//! index (FORMAT.md §12), reading the file where it sits (a path or a URL) in
//! rounds as a remote host would, and says what that cost.

use super::UsageError;
use crate::source::Location;
use anyhow::{Context, Result};
use rete_core::RangeSource;
use rete_core::read::{RoundOptions, RoundStats, run_in_rounds};
use rete_core::search::{MAX_LIMIT, SearchAnswer, SearchOutput, SearchRequest, search};
use std::io::Write;
use std::path::Path;

/// Searches the file at `location`.
pub fn search_location(location: &Path, query: &str, lang: Option<&str>, limit: usize, types: bool) -> Result<SearchOutput> {
    if limit == 0 || limit > MAX_LIMIT {
        return Err(UsageError(format!("--limit {limit} is out of range; give 1 to {MAX_LIMIT}")).into());
    }
    let mut request = SearchRequest::typed(query, lang, limit);
    request.types = types;
    let location = Location::open(location)?;
    let (store, opened) = location.open_in_rounds(super::CACHE_BYTES)?;
    let (answer, stats) = run_in_rounds(&store, &RoundOptions::default(), |ranges| location.read_ranges(ranges), |store| search(store, &request))
        .with_context(|| format!("cannot search {}", location.name()))?;
    let answer: SearchAnswer = answer.with_context(|| format!("cannot search {}", location.name()))?;
    let total: RoundStats = opened + stats;
    Ok(SearchOutput::new(query, &answer, total.rounds, total.requests, total.bytes))
}

/// `rete search`: searches and prints.
pub fn run(location: &Path, query: &str, lang: Option<&str>, limit: usize, types: bool, json: bool, mut out: impl Write) -> Result<()> {
    let output = search_location(location, query, lang, limit, types)?;
    if json {
        serde_json::to_writer(&mut out, &output)?;
        writeln!(out)?;
        return Ok(());
    }
    for result in &output.results {
        let lang = if result.lang.is_empty() { String::new() } else { format!("@{}", result.lang) };
        let types = result.types.as_ref().map(|types| types.iter().map(|t| format!(" a <{t}>")).collect::<String>()).unwrap_or_default();
        writeln!(out, "{:>4}  {}{lang}  <{}>{types}", result.score, result.label, result.iri)?;
    }
    let cut = if output.cut { " (cut: a word is too common to list every hit)" } else { "" };
    writeln!(out, "{} results{cut}; {} rounds, {} requests, {} bytes", output.results.len(), output.rounds, output.requests, output.bytes)?;
    Ok(())
}
