//! Quad patterns: pick the permutation whose key prefix is the bound
//! positions, then walk only the blocks that can hold that prefix. A scan
//! that meets a missing block asks for the next few blocks of its range too
//! (read-ahead), doubling with what it has already read, so a long scan
//! costs a logarithmic number of rounds.

use super::{BlockKey, PermutationKeys, RangeSource, RowCursor, Store};
use crate::format::permutation::Permutation;
use crate::{ReadError, TermId};
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

    /// The blocks a scan of this pattern reads, for prefetching.
    pub fn blocks<S: RangeSource>(&self, store: &Store<S>) -> Vec<BlockKey> {
        let (permutation, prefix) = self.plan();
        store.index().blocks_for_prefix(permutation, &prefix).map(|n| BlockKey::Permutation(permutation, n)).collect()
    }
}

/// Iterator over the `[s, p, o, g]` quads matching a pattern.
pub struct QuadIter<'a, S> {
    store: &'a Store<S>,
    pattern: QuadPattern,
    permutation: Permutation,
    prefix: Vec<TermId>,
    blocks: std::ops::Range<usize>,
    current: Option<(Arc<PermutationKeys>, RowCursor)>,
    /// Bytes of the blocks read so far: the read-ahead doubles with it.
    read_bytes: u64,
    done: bool,
}

impl<'a, S: RangeSource> QuadIter<'a, S> {
    pub(super) fn new(store: &'a Store<S>, pattern: QuadPattern) -> Self {
        let (permutation, prefix) = pattern.plan();
        let blocks = store.index().blocks_for_prefix(permutation, &prefix);
        Self { store, pattern, permutation, prefix, blocks, current: None, read_bytes: 0, done: false }
    }

    /// The permutation being scanned.
    pub fn permutation(&self) -> Permutation {
        self.permutation
    }
}

impl<S: RangeSource> QuadIter<'_, S> {
    /// Wants the blocks after a missing one (`self.blocks` starts there).
    fn read_ahead(&self) {
        let budget = self.read_bytes.clamp(READAHEAD_FIRST_BYTES, READAHEAD_MAX_BYTES);
        let mut bytes = 0;
        for number in self.blocks.clone().take(READAHEAD_MAX_BLOCKS) {
            let key = BlockKey::Permutation(self.permutation, number);
            bytes += self.store.block_range(key).map_or(0, |r| r.length);
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
        let bound = self.prefix.len();
        while !self.done {
            if let Some((keys, cursor)) = &mut self.current {
                while let Some(key) = cursor.next(keys) {
                    match key[..bound].cmp(&self.prefix) {
                        std::cmp::Ordering::Less => continue,
                        std::cmp::Ordering::Greater => {
                            self.done = true;
                            return None;
                        }
                        std::cmp::Ordering::Equal if self.pattern.graph.accepts(key[3]) => {
                            return Some(Ok(self.permutation.quad(key)));
                        }
                        std::cmp::Ordering::Equal => {}
                    }
                }
            }
            let Some(number) = self.blocks.next() else { break };
            match self.store.permutation_block(self.permutation, number) {
                Ok(keys) => {
                    let cursor = keys.seek(&self.prefix);
                    self.current = Some((keys, cursor));
                    self.read_bytes += self.store.block_range(BlockKey::Permutation(self.permutation, number)).map_or(0, |r| r.length);
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
