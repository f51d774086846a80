//! One level of a search: the stored triples that leave the nodes of a
//! frontier along the chosen predicates and direction. Every node's block
//! is found from INDEX first (no read), all of the level's blocks are asked
//! for together (one round), and each block is then walked once: seeking each
//! node when the frontier is sparse in it, merging when it is dense.

use crate::format::permutation::Key;
use crate::read::PermutationKeys;
use crate::{Permutation, RangeSource, ReadError, Store, TermId};
use std::sync::Arc;

/// Which way stored triples are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Subject to object.
    Forward,
    /// Object to subject.
    Inverse,
    /// Both ways.
    Both,
}

impl Direction {
    /// The other way round (a search from the target walks edges backwards).
    pub fn reversed(self) -> Self {
        match self {
            Self::Forward => Self::Inverse,
            Self::Inverse => Self::Forward,
            Self::Both => Self::Both,
        }
    }
}

/// The edges a search follows: some predicates, or every one, in a direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edges {
    /// Predicate ids; `None` follows every predicate.
    pub predicates: Option<Vec<TermId>>,
    /// Which way.
    pub direction: Direction,
}

/// One way a level is read: a permutation whose key starts with the
/// predicate (when given) and then the frontier node.
#[derive(Debug, Clone, Copy)]
struct Scan {
    permutation: Permutation,
    predicate: Option<TermId>,
    forward: bool,
}

impl Edges {
    fn scans(&self) -> Vec<Scan> {
        let ways: &[bool] = match self.direction {
            Direction::Forward => &[true],
            Direction::Inverse => &[false],
            Direction::Both => &[true, false],
        };
        let mut scans = Vec::new();
        for &forward in ways {
            match &self.predicates {
                None => scans.push(Scan { permutation: if forward { Permutation::Spo } else { Permutation::Osp }, predicate: None, forward }),
                Some(predicates) => {
                    for &p in predicates {
                        scans.push(Scan { permutation: if forward { Permutation::Pso } else { Permutation::Pos }, predicate: Some(p), forward });
                    }
                }
            }
        }
        scans
    }
}

impl Scan {
    /// The key prefix of a frontier node's rows.
    fn prefix(&self, node: TermId) -> ([TermId; 2], usize) {
        match self.predicate {
            Some(p) => ([p, node], 2),
            None => ([node, 0], 1),
        }
    }

    /// The neighbour and the predicate of a row.
    fn step(&self, key: Key) -> (TermId, TermId) {
        match (self.permutation, self.predicate) {
            // PSO (p, s, o) and POS (p, o, s): the neighbour is third.
            (_, Some(p)) => (key[2], p),
            // SPO (s, p, o).
            (Permutation::Spo, None) => (key[2], key[1]),
            // OSP (o, s, p).
            _ => (key[1], key[2]),
        }
    }
}

/// The stored triples leaving a frontier, one entry per distinct triple:
/// `from[k]` is the position in the frontier of the node it leaves, `to[k]`
/// the neighbour; with labels, `predicate[k]` and `forward[k]` (whether the
/// triple is stored `from p to`, else `to p from`).
#[derive(Debug, Default)]
pub(crate) struct Level {
    /// Frontier positions.
    pub from: Vec<u32>,
    /// Neighbours.
    pub to: Vec<TermId>,
    /// Predicates (empty without labels).
    pub predicate: Vec<TermId>,
    /// Directions (empty without labels).
    pub forward: Vec<bool>,
}

impl Level {
    fn push(&mut self, from: u32, to: TermId, predicate: TermId, forward: bool, labels: bool) {
        let k = self.to.len();
        // Rows of one triple in several graphs are next to each other.
        if k > 0 && self.from[k - 1] == from && self.to[k - 1] == to && (!labels || (self.predicate[k - 1] == predicate && self.forward[k - 1] == forward)) {
            return;
        }
        self.from.push(from);
        self.to.push(to);
        if labels {
            self.predicate.push(predicate);
            self.forward.push(forward);
        }
    }

    /// Number of steps.
    pub(crate) fn len(&self) -> usize {
        self.to.len()
    }
}

/// Below this many frontier nodes per block row a block is walked by
/// seeking each node (a seek decodes up to 64 rows); above, by one merge.
const SEEK_ROWS_PER_NODE: usize = 64;

/// Reads one level: the triples leaving `frontier` (ascending, distinct)
/// along `edges`. `Ok(None)` when some of its blocks were missing: they are
/// all recorded in the store for one round. `labels` keeps each triple's
/// predicate and direction.
pub(crate) fn read_level<S: RangeSource>(store: &Store<S>, edges: &Edges, frontier: &[TermId], labels: bool) -> Result<Option<Level>, ReadError> {
    let scans = edges.scans();
    // (scan, block, frontier position) for every block a node's rows may lie in.
    let mut wanted: Vec<(usize, usize, u32)> = Vec::new();
    // Planning may need directory nodes (FORMAT.md §4.3): every one is asked for in one round.
    let mut missing = false;
    for (s, scan) in scans.iter().enumerate() {
        for (i, &node) in frontier.iter().enumerate() {
            let (prefix, bound) = scan.prefix(node);
            match store.blocks_for_prefix(scan.permutation, &prefix[..bound]) {
                Ok(blocks) => wanted.extend(blocks.map(|block| (s, block, i as u32))),
                Err(ReadError::Missing(_)) => missing = true,
                Err(error) => return Err(error),
            }
        }
    }
    if missing {
        return Ok(None);
    }
    wanted.sort_unstable();
    let mut blocks: Vec<(usize, usize)> = wanted.iter().map(|&(s, b, _)| (s, b)).collect();
    blocks.dedup();
    let Some(keys) = super::collect_or_missing(blocks.iter().map(|&(s, b)| store.permutation_block(scans[s].permutation, b)))? else {
        return Ok(None);
    };
    let mut level = Level::default();
    let mut start = 0;
    for (&(s, b), keys) in blocks.iter().zip(&keys) {
        let end = start + wanted[start..].partition_point(|&(ws, wb, _)| (ws, wb) == (s, b));
        let nodes: Vec<u32> = wanted[start..end].iter().map(|&(_, _, i)| i).collect();
        walk_block(&scans[s], keys, frontier, &nodes, labels, &mut level);
        start = end;
    }
    Ok(Some(level))
}

/// The rows of one block that start with the prefix of a node in `nodes`
/// (frontier positions, ascending).
fn walk_block(scan: &Scan, keys: &Arc<PermutationKeys>, frontier: &[TermId], nodes: &[u32], labels: bool, level: &mut Level) {
    let emit = |level: &mut Level, i: u32, key: Key| {
        let (to, predicate) = scan.step(key);
        level.push(i, to, predicate, scan.forward, labels);
    };
    if nodes.len().saturating_mul(SEEK_ROWS_PER_NODE) < keys.len() {
        for &i in nodes {
            let (prefix, bound) = scan.prefix(frontier[i as usize]);
            let mut cursor = keys.seek(&prefix[..bound]);
            while let Some(key) = cursor.next(keys) {
                if key[..bound] != prefix[..bound] {
                    break;
                }
                emit(level, i, key);
            }
        }
        return;
    }
    let Some(&first) = nodes.first() else { return };
    let (first_prefix, bound) = scan.prefix(frontier[first as usize]);
    let mut cursor = keys.seek(&first_prefix[..bound]);
    let mut j = 0;
    while let Some(key) = cursor.next(keys) {
        let row = &key[..bound];
        // Move to the first node whose prefix is not below the row's.
        while j < nodes.len() && scan.prefix(frontier[nodes[j] as usize]).0[..bound] < *row {
            j += 1;
        }
        let Some(&i) = nodes.get(j) else { break };
        if scan.prefix(frontier[i as usize]).0[..bound] == *row {
            emit(level, i, key);
        }
    }
}
