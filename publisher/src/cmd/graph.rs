//! What `reach`, `path` and `check` share: a node given on the command line,
//! and the open and the rounds of reads (`docs/READ-PATH.md`) over a local
//! file or a URL, with their cost counted the way `rete cost` counts it.

use super::{CACHE_BYTES, InvalidNode};
use crate::source::Location;
use anyhow::Result;
use rete_core::graph::{Machine, parse_node, run};
use rete_core::read::{RoundOptions, RoundStats};
use oxrdf::Term;
use rete_core::RangeSource;

/// Rounds a graph command may take: one a level, so as many as the longest
/// search needs (the Worker caps them per request instead).
const MAX_ROUNDS: u64 = 1 << 20;

/// A node argument: an IRI (angle brackets optional) or `_:label`; an
/// invalid one is [`InvalidNode`] (exit code 1).
pub fn node_argument(text: &str, what: &str) -> Result<Term> {
    parse_node(text).map_err(|reason| InvalidNode(format!("{what}: {reason}")).into())
}

/// Opens `location` in rounds and runs `machine` to its end over it;
/// returns its output and every round's cost, the open's included.
pub fn run_machine<M: Machine>(location: &Location, machine: &mut M) -> Result<(M::Output, RoundStats)> {
    let (store, opened) = location.open_in_rounds(CACHE_BYTES)?;
    let options = RoundOptions { max_rounds: MAX_ROUNDS, ..RoundOptions::default() };
    let (output, stats) = run(&store, &options, |ranges| location.read_ranges(ranges), machine)?;
    Ok((output, opened + stats))
}
