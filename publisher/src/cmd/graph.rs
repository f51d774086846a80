//! What `reach`, `path` and `check` share: a node given on the command line,
//! and the open and the rounds of reads (`docs/READ-PATH.md`) over a local
//! file or a URL, with their cost counted the way `rete cost` counts it.

use super::{CACHE_BYTES, InvalidNode};
use crate::source::Location;
use anyhow::Result;
use rete_core::graph::{Machine, parse_node, run};
use rete_core::read::{FirstRead, RoundOptions, RoundStats};
use rete_core::{RangeSource, Store};
use oxrdf::Term;

/// Rounds a graph command may take: one a level, so as many as the longest
/// search needs (the Worker caps them per request instead).
const MAX_ROUNDS: u64 = 1 << 20;

/// A node argument: an IRI (angle brackets optional) or `_:label`; an
/// invalid one is [`InvalidNode`] (exit code 1).
pub fn node_argument(text: &str, what: &str) -> Result<Term> {
    parse_node(text).map_err(|reason| InvalidNode(format!("{what}: {reason}")).into())
}

/// The store of an open file and how it reads more.
pub struct Rounds<'a> {
    location: &'a Location,
    stats: RoundStats,
}

impl Rounds<'_> {
    /// Runs a graph machine to its end, counting its rounds.
    pub fn run<M: Machine>(&mut self, store: &Store<FirstRead>, machine: &mut M) -> Result<M::Output> {
        let options = RoundOptions { max_rounds: MAX_ROUNDS, ..RoundOptions::default() };
        let (output, stats) = run(store, &options, |ranges| self.location.read_ranges(ranges), machine)?;
        self.stats = self.stats + stats;
        Ok(output)
    }

    /// Reads ranges outside the blocks (sections), as one round.
    pub fn read(&mut self, ranges: &[rete_core::ByteRange]) -> Result<Vec<Vec<u8>>> {
        let bodies = self.location.read_ranges(ranges)?;
        self.stats = self.stats + RoundStats { rounds: 1, requests: ranges.len() as u64, bytes: bodies.iter().map(|b| b.len() as u64).sum() };
        Ok(bodies)
    }
}

/// Opens `location` in rounds and runs `work` over it; returns its result
/// and every round's cost, the open's included.
pub fn run_rounds<T>(location: &Location, work: impl FnOnce(&Store<FirstRead>, &mut Rounds<'_>) -> Result<T>) -> Result<(T, RoundStats)> {
    let (store, opened) = location.open_in_rounds(CACHE_BYTES)?;
    let mut rounds = Rounds { location, stats: opened };
    let output = work(&store, &mut rounds)?;
    Ok((output, rounds.stats))
}
