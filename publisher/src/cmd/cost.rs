//! `rete cost`: what a query reads from a file where it sits. The file (a
//! path or a URL) is opened and the query evaluated exactly as a remote
//! host would, in rounds (`docs/READ-PATH.md`): each round one batch of
//! parallel range requests. It prints the rounds (the open counts as one),
//! the requests, the bytes fetched and their share of the file.

use super::query::QueryFailed;
use crate::source::Location;
use anyhow::{Context, Result, bail};
use rete_core::{ByteRange, RangeSource};
use rete_core::read::{RoundOptions, RoundStats, run_in_rounds};
use rete_core::sparql::{Answer, QueryError, QueryOptions, evaluate, parse_query};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What one query cost.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Cost {
    /// Sequential rounds of reads, the open included.
    pub rounds: u64,
    /// Range requests.
    pub requests: u64,
    /// Bytes fetched.
    pub bytes: u64,
    /// The file's length.
    pub file_bytes: u64,
    /// Rounds spent opening the file (1, or 2 when INDEX is past the first 16 KiB).
    #[serde(skip)]
    pub open_rounds: u64,
    /// Solutions, triples, or 1 for an ASK.
    #[serde(skip)]
    pub rows: u64,
    /// Bytes of decoded blocks the query held in memory at once (the block cache it needs).
    #[serde(skip)]
    pub memory_bytes: u64,
    /// What each round after the open read (`--rounds`).
    #[serde(skip)]
    pub log: Vec<RoundLog>,
}

/// What one round read: its requests, and its bytes by the section they lie in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundLog {
    /// Range requests (merged ranges).
    pub requests: usize,
    /// Bytes per section, in file order (a merged range may span two).
    pub sections: Vec<(String, u64)>,
}

impl RoundLog {
    fn of(header: &rete_core::Header, ranges: &[ByteRange]) -> Self {
        let mut sections: Vec<(u64, String, u64)> = Vec::new();
        for range in ranges {
            let (start, end) = (range.offset, range.offset + range.length);
            let mut inside = 0;
            for section in &header.sections {
                let overlap = end.min(section.offset + section.length).saturating_sub(start.max(section.offset));
                if overlap > 0 {
                    inside += overlap;
                    match sections.iter_mut().find(|(offset, ..)| *offset == section.offset) {
                        Some((_, _, bytes)) => *bytes += overlap,
                        None => sections.push((section.offset, section.kind.name(), overlap)),
                    }
                }
            }
            if inside < range.length {
                // The header and section table, or gaps between sections a merge read.
                sections.push((0, "other".into(), range.length - inside));
            }
        }
        sections.sort_by_key(|(offset, ..)| *offset);
        Self { requests: ranges.len(), sections: sections.into_iter().map(|(_, name, bytes)| (name, bytes)).collect() }
    }
}

/// The query text from the argument or from `--file` (`-` is stdin).
pub fn query_text(text: Option<String>, file: Option<PathBuf>) -> Result<String> {
    match (text, file) {
        (Some(text), _) => Ok(text),
        (None, Some(path)) if path.as_os_str() == "-" => std::io::read_to_string(std::io::stdin()).context("cannot read the query from stdin"),
        (None, Some(path)) => std::fs::read_to_string(&path).with_context(|| format!("cannot read the query file {}", path.display())),
        (None, None) => bail!("no query: give its text or --file"),
    }
}

/// Evaluates `query` over the file at `location` in rounds and measures it.
pub fn measure(location: &Path, query: &str) -> Result<Cost> {
    let query = parse_query(query, None).map_err(QueryFailed::Query)?;
    let location = Location::open(location)?;
    let (store, opened) = location.open_in_rounds(super::CACHE_BYTES)?;
    let options = QueryOptions::default();
    let mut log = Vec::new();
    let fetch = |ranges: &[ByteRange]| {
        log.push(RoundLog::of(store.header(), ranges));
        location.read_ranges(ranges)
    };
    let (rows, stats) = run_in_rounds(&store, &RoundOptions::default(), fetch, |store| count(evaluate(store, &query, &options))).map_err(|error| QueryFailed::Query(QueryError::Read(error)))?;
    let rows = rows.map_err(QueryFailed::Query)?;
    let total: RoundStats = opened + stats;
    let (pinned, _) = store.cache_bytes();
    Ok(Cost { rounds: total.rounds, requests: total.requests, bytes: total.bytes, file_bytes: store.header().file_length, open_rounds: opened.rounds, rows, memory_bytes: pinned as u64, log })
}

fn count(answer: Result<Answer<'_>, QueryError>) -> Result<u64, QueryError> {
    Ok(match answer? {
        Answer::Solutions(solutions) => solutions.map(|s| s.map(|_| 1)).sum::<Result<u64, _>>()?,
        Answer::Graph(triples) => triples.map(|t| t.map(|_| 1)).sum::<Result<u64, _>>()?,
        Answer::Boolean(_) => 1,
        _ => 0,
    })
}

/// `rete cost`: measures and prints (with `rounds`, what each round read).
pub fn run(location: &Path, query: &str, json: bool, rounds: bool, mut out: impl Write) -> Result<()> {
    let cost = measure(location, query)?;
    if rounds {
        for (i, round) in cost.log.iter().enumerate() {
            let sections: Vec<String> = round.sections.iter().map(|(name, bytes)| format!("{name} {bytes}")).collect();
            let s = if round.requests == 1 { "" } else { "s" };
            writeln!(out, "round {}: {} request{s}: {}", cost.open_rounds + i as u64 + 1, round.requests, sections.join(", "))?;
        }
    }
    if json {
        serde_json::to_writer(&mut out, &cost)?;
        writeln!(out)?;
    } else {
        let share = if cost.file_bytes > 0 { 100.0 * cost.bytes as f64 / cost.file_bytes as f64 } else { 0.0 };
        writeln!(out, "rounds    {} ({} to open, {} for the query)", cost.rounds, cost.open_rounds, cost.rounds - cost.open_rounds)?;
        writeln!(out, "requests  {}", cost.requests)?;
        writeln!(out, "bytes     {} ({share:.3}% of the file's {})", cost.bytes, cost.file_bytes)?;
        writeln!(out, "rows      {}", cost.rows)?;
        writeln!(out, "memory    {} bytes of decoded blocks", cost.memory_bytes)?;
    }
    Ok(())
}
