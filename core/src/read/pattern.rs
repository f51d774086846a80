//! Quad patterns: pick the permutation whose key prefix is the bound
//! positions, then walk only the blocks that can hold that prefix. A bound
//! position may be a range of ids (the triple terms a pattern's triple term
//! with free parts can match, FORMAT.md §5.1), walked after the single ids.
//! A scan that meets a missing block asks for the next few blocks of its
//! range too (read-ahead), doubling with what it has already read, so a long
//! scan costs a logarithmic number of rounds.
//!
//! A query evaluated as a for-loop join (or OPTIONAL, or a property path)
//! looks a pattern up once per outer row, most of them in a block read a
//! moment before. The blocks such lookups read are placed by the keys they
//! span ([`KeysPlace`]): a prefix that lies within one of them, while it is
//! in memory, takes it and the cursor where the last lookup in it landed,
//! without the directory walk and the cache lookup, and the seek walks on
//! from that cursor when the prefix is ahead of it (issue 14: schema-org 08's
//! 687 lookups of ~2,000 instructions each were a fifth of the query). The
//! rounds and bytes are those of the walk: a placed block is one in memory.

use super::tree::{Descent, Walk};
use super::{BlockKey, Directory, Landing, PermutationKeys, RangeSource, RowCursor, Store};
use crate::format::permutation::{Key, Permutation};
use crate::{ReadError, TermId};
use std::ops::Range;
use std::sync::Arc;

/// Bytes of blocks a scan wants past the one it misses when it has read
/// none yet; later misses want as many bytes as the scan has read so far.
const READAHEAD_FIRST_BYTES: u64 = 256 << 10;
/// Most bytes one miss of a scan wants past the missing block…
const READAHEAD_MAX_BYTES: u64 = 8 << 20;
/// … and most blocks.
const READAHEAD_MAX_BLOCKS: usize = 64;

/// Which graphs a pattern matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFilter {
    /// The default graph and every named graph.
    Any,
    /// Only the default graph.
    Default,
    /// Only named graphs (any of them).
    AnyNamed,
    /// One named graph.
    Named(TermId),
}

impl GraphFilter {
    fn accepts(self, g: TermId) -> bool {
        match self {
            Self::Any => true,
            Self::Default => g == 0,
            Self::AnyNamed => g != 0,
            Self::Named(id) => g == id,
        }
    }
}

/// A quad pattern over term ids; `None` is a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuadPattern {
    /// Subject.
    pub subject: Option<TermId>,
    /// Predicate.
    pub predicate: Option<TermId>,
    /// Object.
    pub object: Option<TermId>,
    /// Graphs.
    pub graph: GraphFilter,
}

impl QuadPattern {
    /// The permutation serving the pattern and the bound key prefix.
    pub fn plan(&self) -> (Permutation, Vec<TermId>) {
        let (permutation, bound) = Permutation::for_bound(self.subject.is_some(), self.predicate.is_some(), self.object.is_some());
        let spo = [self.subject.unwrap_or(0), self.predicate.unwrap_or(0), self.object.unwrap_or(0), 0];
        (permutation, permutation.key(spo)[..bound].to_vec())
    }
}

/// A quad pattern whose positions are id ranges; `None` is a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuadRanges {
    /// Subject ids.
    pub subject: Option<Range<TermId>>,
    /// Predicate ids.
    pub predicate: Option<Range<TermId>>,
    /// Object ids.
    pub object: Option<Range<TermId>>,
    /// Graphs.
    pub graph: GraphFilter,
}

impl From<QuadPattern> for QuadRanges {
    fn from(pattern: QuadPattern) -> Self {
        let one = |id: Option<TermId>| id.map(|id| id..id.saturating_add(1));
        Self { subject: one(pattern.subject), predicate: one(pattern.predicate), object: one(pattern.object), graph: pattern.graph }
    }
}

impl QuadRanges {
    /// The permutation serving the pattern and its bound key components, in
    /// key order: single ids first, then ranges ([`Permutation::for_ranges`]).
    pub fn plan(&self) -> (Permutation, Vec<Range<TermId>>) {
        let (permutation, bounds, count) = self.planned();
        (permutation, bounds[..count].to_vec())
    }

    /// [`Self::plan`] without allocating: the bound components in the first
    /// `count` places (a scan is planned per pattern lookup, issue 14).
    /// Single ids only (every lookup of a join) take [`Permutation::for_bound`]
    /// directly, and the bounds are picked by key position, not collected.
    fn planned(&self) -> (Permutation, [Range<TermId>; 3], usize) {
        let spo = [&self.subject, &self.predicate, &self.object];
        let bound = spo.map(Option::is_some);
        let ranged = spo.map(|r| r.as_ref().is_some_and(|r| r.end.checked_sub(r.start) != Some(1)));
        let (permutation, count) = match ranged {
            [false, false, false] => Permutation::for_bound(bound[0], bound[1], bound[2]),
            _ => Permutation::for_ranges(bound, ranged),
        };
        // The key's first `count` components are bound positions (both
        // choices above make them so).
        let order = permutation.key([0, 1, 2, 3]);
        let count = count.min(3);
        let bounds = std::array::from_fn(|i| if i < count { spo[order[i] as usize].clone().unwrap_or(0..0) } else { 0..0 });
        (permutation, bounds, count)
    }
}

/// Iterator over the `[s, p, o, g]` quads matching a pattern.
pub struct QuadIter<'a, S> {
    store: &'a Store<S>,
    graph: GraphFilter,
    permutation: Permutation,
    /// The bound key components, in key order: the first `bound` of them.
    bounds: [Range<TermId>; 3],
    bound: usize,
    /// Their first and last keys: the scan runs from `low` (a seek) to `high`.
    low: [TermId; 3],
    high: [TermId; 3],
    /// Every bound component a single id (`low == high`): a key between
    /// them matches, no range to check.
    exact: bool,
    /// The blocks left to scan: planned at the first `next` (planning may
    /// need directory nodes, FORMAT.md §4.3, and so may miss).
    blocks: Option<Blocks>,
    current: Option<(Arc<PermutationKeys>, RowCursor)>,
    /// The blocks as planned, and how many of them were read: the
    /// read-ahead doubles with their bytes, summed only when a block misses
    /// (a pattern lookup of a join reads one block and misses none).
    planned: Option<Blocks>,
    read_blocks: usize,
    done: bool,
}

impl<'a, S: RangeSource> QuadIter<'a, S> {
    pub(super) fn new(store: &'a Store<S>, pattern: QuadRanges) -> Self {
        let mut quads = Self { store, graph: pattern.graph, permutation: Permutation::Spo, bounds: [0..0, 0..0, 0..0], bound: 0, low: [0; 3], high: [0; 3], exact: true, blocks: None, current: None, planned: None, read_blocks: 0, done: true };
        quads.aim(pattern);
        quads
    }

    /// Aims the iterator at `pattern` over the same store, from its start:
    /// what [`Store::quads_in`] returns, written in place. A join's pattern
    /// lookup reuses the box of the last lookup's iterator; a new iterator
    /// moved into it was a 232-byte `memory.copy` per lookup in the
    /// Worker's wasm, a call out of V8's code (issue 14).
    pub fn aim(&mut self, pattern: QuadRanges) {
        let (permutation, bounds, bound) = pattern.planned();
        self.done = bounds[..bound].iter().any(Range::is_empty);
        self.low = std::array::from_fn(|i| bounds[i].start);
        self.high = std::array::from_fn(|i| bounds[i].end.saturating_sub(1));
        // Compared by component: a slice comparison was a call of `memcmp`.
        self.exact = self.low.iter().zip(&self.high).take(bound).all(|(low, high)| low == high);
        self.graph = pattern.graph;
        self.permutation = permutation;
        self.bounds = bounds;
        self.bound = bound;
        self.blocks = None;
        self.current = None;
        self.planned = None;
        self.read_blocks = 0;
    }

    /// The permutation being scanned.
    pub fn permutation(&self) -> Permutation {
        self.permutation
    }
}

/// The blocks of a scan: a run of block numbers (a key prefix), or those a
/// range of ids may touch.
#[derive(Clone)]
enum Blocks {
    Run(Range<usize>),
    Chosen(std::vec::IntoIter<usize>),
}

impl Iterator for Blocks {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        match self {
            Self::Run(run) => run.next(),
            Self::Chosen(chosen) => chosen.next(),
        }
    }
}

impl<S: RangeSource> QuadIter<'_, S> {
    /// The blocks to scan, from the directory (FORMAT.md §6).
    fn plan(&self) -> Result<Blocks, ReadError> {
        if self.exact {
            Ok(Blocks::Run(self.store.blocks_for_prefix(self.permutation, &self.low[..self.bound])?))
        } else {
            Ok(Blocks::Chosen(self.store.blocks_for_bounds(self.permutation, &self.bounds[..self.bound])?.into_iter()))
        }
    }

    /// Wants the blocks after a missing one (`self.blocks` starts there); past
    /// the directory nodes in memory, the next node.
    fn read_ahead(&self) {
        let read = self.planned.clone().into_iter().flatten().take(self.read_blocks);
        let read_bytes: u64 = read.filter_map(|number| self.store.block_range(BlockKey::Permutation(self.permutation, number))).map(|r| r.length).sum();
        let budget = read_bytes.clamp(READAHEAD_FIRST_BYTES, READAHEAD_MAX_BYTES);
        let mut bytes = 0;
        for number in self.blocks.clone().into_iter().flatten().take(READAHEAD_MAX_BLOCKS) {
            let key = BlockKey::Permutation(self.permutation, number);
            let Some(range) = self.store.block_range(key) else {
                self.store.want(key);
                break;
            };
            bytes += range.length;
            if bytes > budget {
                break;
            }
            self.store.want(key);
        }
    }
}

impl<S: RangeSource> Iterator for QuadIter<'_, S> {
    type Item = Result<[TermId; 4], ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let bound = self.bound;
        while !self.done {
            if let Some((keys, cursor)) = &mut self.current {
                while let Some(key) = cursor.next(keys) {
                    if key[..bound] < self.low[..bound] {
                        continue;
                    }
                    if key[..bound] > self.high[..bound] {
                        self.done = true;
                        return None;
                    }
                    // Between low and high, a range that is not the last
                    // bound component lets other keys through.
                    if self.graph.accepts(key[3]) && (self.exact || key.iter().zip(&self.bounds[..bound]).all(|(id, range)| range.contains(id))) {
                        return Some(Ok(self.permutation.quad(key)));
                    }
                }
            }
            if self.blocks.is_none()
                && self.exact
                && bound > 0
                && let Some((number, keys, cursor)) = self.store.placed_keys(self.permutation, &self.low[..bound])
            {
                self.planned = Some(Blocks::Run(number..number + 1));
                self.blocks = Some(Blocks::Run(number + 1..number + 1));
                self.current = Some((keys, cursor));
                self.read_blocks = 1;
                continue;
            }
            if self.blocks.is_none() {
                match self.plan() {
                    Ok(blocks) => {
                        self.planned = Some(blocks.clone());
                        self.blocks = Some(blocks);
                    }
                    Err(error) => {
                        self.done = true;
                        return Some(Err(error));
                    }
                }
            }
            let Some(number) = self.blocks.as_mut().and_then(Iterator::next) else { break };
            match self.store.permutation_block(self.permutation, number) {
                Ok(keys) => {
                    let landing = keys.landing(&self.low[..bound]);
                    if self.read_blocks == 0 && self.exact && bound > 0 && matches!(&self.planned, Some(Blocks::Run(run)) if run.len() == 1) {
                        self.store.place_keys(self.permutation, number, &keys, landing);
                    }
                    let cursor = landing.at;
                    self.current = Some((keys, cursor));
                    self.read_blocks += 1;
                }
                Err(error) => {
                    if matches!(error, ReadError::Missing(_)) {
                        self.read_ahead();
                    }
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
        None
    }
}

/// Where a block of a permutation that [`QuadIter`] lookups read lies: its
/// first key and the next block's (`None` past the last block), and where
/// the last lookup in it landed.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeysPlace {
    first: Key,
    next: Option<Key>,
    number: usize,
    /// Where the last lookup's seek landed ([`PermutationKeys::seek_on`]).
    landing: Landing,
}

impl<S: RangeSource> Store<S> {
    /// The placed block holding every key that starts with `prefix`, while
    /// in memory, its number and a cursor at the first of those keys.
    fn placed_keys(&self, permutation: Permutation, prefix: &[TermId]) -> Option<(usize, Arc<PermutationKeys>, RowCursor)> {
        // Each component picked, not copied: a copy of the prefix's length
        // and a fill of the rest made two `memory.copy` and two `memory.fill`
        // per lookup in the wasm, each a call out of V8's code (issue 14).
        let low: Key = std::array::from_fn(|i| prefix.get(i).copied().unwrap_or(0));
        let high: Key = std::array::from_fn(|i| prefix.get(i).copied().unwrap_or(TermId::MAX));
        let mut placed = self.placed_keys[usize::from(permutation.id())].borrow_mut();
        let at = placed.last_where_again(|p| p.first <= low)?;
        let keys = placed.block_at(at)?;
        let place = placed.place_at(at);
        if place.next.is_some_and(|next| next <= high) {
            return None;
        }
        keys.seek_on(&mut place.landing, prefix);
        Some((place.number, keys, place.landing.at))
    }

    /// Places block `number` of `permutation`, read by a lookup whose seek
    /// landed at `landing` (see [`KeysPlace`]), when its directory entry is in memory
    /// with the next one's (the last entry of a node of a directory with
    /// nodes is left out: the next block's first key is in another node).
    fn place_keys(&self, permutation: Permutation, number: usize, keys: &Arc<PermutationKeys>, landing: Landing) {
        let directory = Directory::Permutation(permutation);
        let Ok(Descent::Block(body, i)) = self.leaf::<Key>(directory, number, Walk::Peek) else { return };
        let next = match body.entries.get(i + 1) {
            Some(entry) => Some(entry.head),
            None if self.depth(directory) == 0 => None,
            None => return,
        };
        let first = body.entries[i].head;
        let place = KeysPlace { first, next, number, landing };
        self.placed_keys[usize::from(permutation.id())].borrow_mut().place(place, keys, |p| p.first.cmp(&first));
    }
}
