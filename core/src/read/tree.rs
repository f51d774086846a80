//! Node-aware lookups (FORMAT.md §4.3): every question about where a block
//! is (which dictionary block holds a term or an id, which permutation
//! blocks a key prefix spans) walks a directory from its root in INDEX down
//! to the blocks. In a flat file the root lists the blocks and no node is
//! read. With a directory, a node not in memory is read like a block: a miss
//! the store records, so the host fetches it in the next round and runs
//! again (docs/READ-PATH.md). Blocks keep one number per section (FORMAT.md
//! §4.3 `block_count`), so cache keys, read-ahead and whole scans name a block
//! without the nodes above it.

use super::{Block, BlockKey, RangeSource, Store};
use crate::format::directory::{Body, Entry, Head};
use crate::format::header::SectionKind;
use crate::format::index::{Index, entries_for_bounds};
use crate::format::permutation::{Key, Permutation};
use crate::{ByteRange, ReadError, TermId};
use std::ops::Range;
use std::sync::Arc;

/// One of the seven directories of INDEX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Directory {
    /// The dictionary's.
    Dictionary,
    /// A permutation's.
    Permutation(Permutation),
}

impl Directory {
    /// Name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dictionary => "dictionary",
            Self::Permutation(p) => p.name(),
        }
    }

    /// The section its blocks are in.
    pub(crate) fn section(self) -> SectionKind {
        match self {
            Self::Dictionary => SectionKind::Dictionary,
            Self::Permutation(p) => SectionKind::Permutation(p.id()),
        }
    }
}

/// A block as its directory places it: enough to read it and to number its items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    /// Its number in its section.
    pub number: usize,
    /// Absolute byte range.
    pub range: ByteRange,
    /// Id of its first term, or ordinal of its first quad.
    pub first_item: u64,
    /// Terms or quads in it.
    pub item_count: u64,
}

impl Located {
    fn of<H>(entry: &Entry<H>) -> Self {
        Self { number: entry.first_block, range: entry.range, first_item: entry.first_item, item_count: entry.item_count }
    }

    /// The ids (or quad ordinals) it holds.
    pub fn items(&self) -> Range<u64> {
        self.first_item..self.first_item + self.item_count
    }
}

/// The entry of a node or block the store asked for (one a directory node
/// places): where it is and what it must hold, kept so that it can be fed and
/// checked (FORMAT.md §4.3) even if the node listing it has left the cache.
#[derive(Debug, Clone)]
pub(crate) enum Place {
    Dictionary(Entry<Vec<u8>>),
    Permutation(Entry<Key>),
}

impl Place {
    pub(crate) fn range(&self) -> ByteRange {
        match self {
            Self::Dictionary(entry) => entry.range,
            Self::Permutation(entry) => entry.range,
        }
    }
}

/// The heads of a directory the store walks: ties a head type to its root
/// in INDEX and to its nodes in the block cache.
pub(crate) trait TreeHead: Head + 'static {
    fn root(index: &Index, directory: Directory) -> &Arc<Body<Self>>;
    fn from_block(block: &Block) -> Option<Arc<Body<Self>>>;
    fn place(entry: &Entry<Self>) -> Place;
}

impl TreeHead for Vec<u8> {
    fn root(index: &Index, _: Directory) -> &Arc<Body<Self>> {
        &index.dictionary
    }

    fn from_block(block: &Block) -> Option<Arc<Body<Self>>> {
        match block {
            Block::DictionaryNode(body) => Some(body.clone()),
            _ => None,
        }
    }

    fn place(entry: &Entry<Self>) -> Place {
        Place::Dictionary(entry.clone())
    }
}

impl TreeHead for Key {
    fn root(index: &Index, directory: Directory) -> &Arc<Body<Self>> {
        let p = match directory {
            Directory::Permutation(p) => p,
            Directory::Dictionary => Permutation::Spo,
        };
        &index.permutations[usize::from(p.id())]
    }

    fn from_block(block: &Block) -> Option<Arc<Body<Self>>> {
        match block {
            Block::PermutationNode(body) => Some(body.clone()),
            _ => None,
        }
    }

    fn place(entry: &Entry<Self>) -> Place {
        Place::Permutation(entry.clone())
    }
}

/// How a walk treats a node that is not in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// Read it: a miss, recorded for the next round, ends the walk with [`ReadError::Missing`].
    Read,
    /// Stop there: planning from what is in memory, no miss recorded.
    Peek,
}

/// Where a walk down a directory ended.
pub(crate) enum Descent<H> {
    /// Before the first entry: no block can hold what was looked for.
    Before,
    /// At a block: the level-0 body and the entry's position in it.
    Block(Arc<Body<H>>, usize),
    /// At a node not in memory (a peek): the entry of that node.
    Node(Directory, u8, Entry<H>),
}

/// Speculation reads at most this many nodes of one pattern (a dictionary
/// node's id range spans about one permutation node: FORMAT.md §4.3).
const SPECULATE_MAX_NODES: usize = 4;

/// When the dictionary's nodes (a depth-1 dictionary) are at most this many
/// bytes in all, the first dictionary node a run misses wants them all: the
/// terms a query prints may lie under any of them, and a node in memory
/// saves the printed terms a round (docs/READ-PATH.md "Directory nodes").
/// 32 KiB is about 4,000 dictionary blocks, LUBM's ~50M quads.
const DICTIONARY_NODES_WHOLE_BYTES: u64 = 32 << 10;

impl<S: RangeSource> Store<S> {
    /// The node under `entry` (a child of level `level`), from memory or the
    /// source; `Ok(None)` when it is not in memory and `walk` is a peek.
    fn node<H: TreeHead>(&self, directory: Directory, level: u8, entry: &Entry<H>, walk: Walk) -> Result<Option<Arc<Body<H>>>, ReadError> {
        let key = BlockKey::Node(directory, level, entry.first_block);
        let cached = self.cache.borrow_mut().get(self.header.content_hash, &key);
        let block = match (cached, walk) {
            (Some(block), _) => block,
            (None, Walk::Peek) => return Ok(None),
            (None, Walk::Read) => {
                self.places.borrow_mut().entry(key).or_insert_with(|| H::place(entry));
                if directory == Directory::Dictionary {
                    self.want_dictionary_nodes();
                }
                self.block(key)?
            }
        };
        H::from_block(&block).map(Some).ok_or_else(|| ReadError::Source("cache returned the wrong block kind".into()))
    }

    /// Walks `directory` down to the last entry `pick` holds for at each level
    /// (`pick` holds for a prefix of every body's entries).
    pub(crate) fn descend<H: TreeHead>(&self, directory: Directory, pick: impl Fn(&Entry<H>) -> bool, walk: Walk) -> Result<Descent<H>, ReadError> {
        let mut body = H::root(&self.index, directory).clone();
        loop {
            let Some(i) = body.last_where(&pick) else { return Ok(Descent::Before) };
            if body.level == 0 {
                return Ok(Descent::Block(body, i));
            }
            let level = body.level - 1;
            match self.node(directory, level, &body.entries[i], walk)? {
                Some(child) => body = child,
                None => return Ok(Descent::Node(directory, level, body.entries[i].clone())),
            }
        }
    }

    /// Block `number` of a directory and its entry's body and position.
    pub(crate) fn leaf<H: TreeHead>(&self, directory: Directory, number: usize, walk: Walk) -> Result<Descent<H>, ReadError> {
        let root = H::root(&self.index, directory);
        // A flat directory: the root lists the blocks.
        if root.level == 0 {
            return Ok(match root.entries.get(number) {
                Some(_) => Descent::Block(root.clone(), number),
                None => Descent::Before,
            });
        }
        match self.descend::<H>(directory, |e| e.first_block <= number, walk)? {
            Descent::Block(body, i) if body.entries[i].first_block != number => Ok(Descent::Before),
            other => Ok(other),
        }
    }

    /// Where block `number` of a directory is, walking down to it.
    pub(crate) fn locate(&self, directory: Directory, number: usize, walk: Walk) -> Result<Option<Located>, ReadError> {
        let descent = match directory {
            Directory::Dictionary => match self.leaf::<Vec<u8>>(directory, number, walk)? {
                Descent::Block(body, i) => Some(Located::of(&body.entries[i])),
                _ => None,
            },
            Directory::Permutation(_) => match self.leaf::<Key>(directory, number, walk)? {
                Descent::Block(body, i) => Some(Located::of(&body.entries[i])),
                _ => None,
            },
        };
        Ok(descent)
    }

    /// Wants the deepest node not in memory on the way to block `number`
    /// (a read-ahead past the nodes read so far).
    pub(crate) fn want_path(&self, directory: Directory, number: usize) {
        match directory {
            Directory::Dictionary => {
                if let Ok(Descent::Node(d, level, entry)) = self.leaf::<Vec<u8>>(directory, number, Walk::Peek) {
                    self.want_node(d, level, &entry);
                }
            }
            Directory::Permutation(_) => {
                if let Ok(Descent::Node(d, level, entry)) = self.leaf::<Key>(directory, number, Walk::Peek) {
                    self.want_node(d, level, &entry);
                }
            }
        }
    }

    /// Remembers the entry of a block of a directory with nodes, from the
    /// node in memory that lists it (see [`Place`]).
    pub(crate) fn remember_place(&self, key: BlockKey) {
        let place = match key {
            BlockKey::Dictionary(n) if self.index.dictionary.level > 0 => match self.leaf::<Vec<u8>>(Directory::Dictionary, n, Walk::Peek) {
                Ok(Descent::Block(body, i)) => Place::Dictionary(body.entries[i].clone()),
                _ => return,
            },
            BlockKey::Permutation(p, n) if self.depth(Directory::Permutation(p)) > 0 => match self.leaf::<Key>(Directory::Permutation(p), n, Walk::Peek) {
                Ok(Descent::Block(body, i)) => Place::Permutation(body.entries[i].clone()),
                _ => return,
            },
            _ => return,
        };
        self.places.borrow_mut().entry(key).or_insert(place);
    }

    /// Wants every node of a depth-1 dictionary when they are at most
    /// [`DICTIONARY_NODES_WHOLE_BYTES`] in all.
    fn want_dictionary_nodes(&self) {
        let root = &self.index.dictionary;
        if root.level != 1 || root.entries.iter().map(|e| e.range.length).sum::<u64>() > DICTIONARY_NODES_WHOLE_BYTES {
            return;
        }
        for entry in &root.entries {
            self.want_node(Directory::Dictionary, 0, entry);
        }
    }

    /// Lists a node for the next round without making the run incomplete.
    fn want_node<H: TreeHead>(&self, directory: Directory, level: u8, entry: &Entry<H>) {
        let key = BlockKey::Node(directory, level, entry.first_block);
        self.places.borrow_mut().entry(key).or_insert_with(|| H::place(entry));
        self.want(key);
    }

    /// Number of blocks of a directory (from its root).
    pub fn block_count(&self, directory: Directory) -> usize {
        match directory {
            Directory::Dictionary => self.index.dictionary.block_count(),
            Directory::Permutation(p) => self.index.permutations[usize::from(p.id())].block_count(),
        }
    }

    /// Depth of a directory: 0 when INDEX lists its blocks.
    pub fn depth(&self, directory: Directory) -> u8 {
        match directory {
            Directory::Dictionary => self.index.dictionary.level,
            Directory::Permutation(p) => self.index.permutations[usize::from(p.id())].level,
        }
    }

    /// The dictionary block that would hold an encoded term (the last whose
    /// head ≤ it), `None` when the term sorts before every term.
    pub fn dictionary_for_term(&self, encoded: &[u8]) -> Result<Option<Located>, ReadError> {
        match self.descend::<Vec<u8>>(Directory::Dictionary, |e| e.head.as_slice() <= encoded, Walk::Read)? {
            Descent::Block(body, i) => Ok(Some(Located::of(&body.entries[i]))),
            _ => Ok(None),
        }
    }

    /// The dictionary block holding an id, `None` when no block does.
    pub fn dictionary_for_id(&self, id: TermId) -> Result<Option<Located>, ReadError> {
        self.dictionary_for_id_walk(id, Walk::Read)
    }

    pub(crate) fn dictionary_for_id_walk(&self, id: TermId, walk: Walk) -> Result<Option<Located>, ReadError> {
        match self.descend::<Vec<u8>>(Directory::Dictionary, |e| e.first_item <= id, walk)? {
            Descent::Block(body, i) => Ok(Some(Located::of(&body.entries[i])).filter(|l| l.items().contains(&id))),
            _ => Ok(None),
        }
    }

    /// The ids an encoded term's id lies in, from what is in memory: its
    /// dictionary block's, or the deepest node's on the way there (for
    /// speculative reads before the term's block arrives). `None` when it
    /// sorts before every term.
    pub fn ids_around_term(&self, encoded: &[u8]) -> Option<Range<TermId>> {
        match self.descend::<Vec<u8>>(Directory::Dictionary, |e| e.head.as_slice() <= encoded, Walk::Peek).ok()? {
            Descent::Block(body, i) => Some(Located::of(&body.entries[i]).items()),
            Descent::Node(_, _, entry) => Some(Located::of(&entry).items()),
            Descent::Before => None,
        }
    }

    /// Numbers of the blocks of `permutation` that may hold keys starting
    /// with `prefix`: from the last block whose first key ≤ (prefix, 0…) to
    /// the last whose first key ≤ (prefix, max…) (FORMAT.md §6). Both ends
    /// are walked even when the first misses, so one round reads both nodes.
    /// An empty prefix is every block, known from the root: walking its high
    /// end would read the last node, which a scan from the first block does
    /// not need first.
    pub fn blocks_for_prefix(&self, permutation: Permutation, prefix: &[TermId]) -> Result<Range<usize>, ReadError> {
        if prefix.is_empty() {
            return Ok(0..self.block_count(Directory::Permutation(permutation)));
        }
        let mut low: Key = [0; 4];
        let mut high: Key = [TermId::MAX; 4];
        low[..prefix.len()].copy_from_slice(prefix);
        high[..prefix.len()].copy_from_slice(prefix);
        let directory = Directory::Permutation(permutation);
        let first = self.descend::<Key>(directory, |e| e.head <= low, Walk::Read);
        // The prefix's keys mostly end in the block they start in: when the
        // entry after it starts past them, no second walk (a pattern lookup
        // of a join walked twice, issue 14).
        if let Ok(Descent::Block(body, i)) = &first
            && let (Some(entry), Some(next)) = (body.entries.get(*i), body.entries.get(*i + 1))
            && next.head > high
        {
            return Ok(entry.first_block..entry.first_block + 1);
        }
        let number = |descent: Result<Descent<Key>, ReadError>| -> Result<Option<usize>, ReadError> {
            match descent? {
                Descent::Block(body, i) => Ok(Some(body.entries[i].first_block)),
                _ => Ok(None),
            }
        };
        match (number(first), number(self.descend::<Key>(directory, |e| e.head <= high, Walk::Read))) {
            (Ok(first), Ok(last)) => {
                let first = first.unwrap_or(0);
                Ok(first..last.map_or(0, |n| n + 1).max(first))
            }
            (Err(ReadError::Missing(mut a)), Err(ReadError::Missing(b))) => {
                a.extend(b);
                Err(ReadError::Missing(a))
            }
            (Err(error), _) | (_, Err(error)) => Err(error),
        }
    }

    /// Numbers of the blocks of `permutation` that may hold a key whose
    /// leading components fall in `bounds`, one id range per component in
    /// the permutation's order (FORMAT.md §6; a term whose id is not known
    /// yet is bounded by its dictionary block's ids). Every node the answer
    /// needs is asked for in one round.
    pub fn blocks_for_bounds(&self, permutation: Permutation, bounds: &[Range<TermId>]) -> Result<Vec<usize>, ReadError> {
        let mut selection = Selection::default();
        let root = self.index.permutations[usize::from(permutation.id())].clone();
        self.select(Directory::Permutation(permutation), &root, None, bounds, Walk::Read, &mut selection)?;
        match selection.missing {
            Some(error) => Err(error),
            None => Ok(selection.blocks.into_iter().map(|(n, _)| n).collect()),
        }
    }

    /// Wants the blocks of `permutation` that a pattern would read, its bound
    /// components given as id ranges ([`Store::blocks_for_bounds`]), when
    /// they are at most `max_blocks` blocks and `max_bytes` bytes; where the
    /// nodes that place them are not in memory, wants those nodes instead (at
    /// most a few). Otherwise wants nothing. Returns the bytes it wanted.
    pub fn speculate(&self, permutation: Permutation, bounds: &[Range<TermId>], max_blocks: usize, max_bytes: u64) -> u64 {
        let mut selection = Selection::default();
        let directory = Directory::Permutation(permutation);
        let root = self.index.permutations[usize::from(permutation.id())].clone();
        if self.select(directory, &root, None, bounds, Walk::Peek, &mut selection).is_err() || selection.too_wide {
            return 0;
        }
        let bytes: u64 = selection.blocks.iter().map(|(_, length)| length).chain(selection.nodes.iter().map(|(_, e)| &e.range.length)).sum();
        if selection.blocks.len() > max_blocks || selection.nodes.len() > SPECULATE_MAX_NODES || bytes > max_bytes {
            return 0;
        }
        for &(number, _) in &selection.blocks {
            self.want(BlockKey::Permutation(permutation, number));
        }
        for (level, entry) in &selection.nodes {
            self.want_node(directory, *level, entry);
        }
        bytes
    }

    /// The entries of `body` (and below) that may hold keys in `bounds`,
    /// `high` being the first key after the body (its parent's next head).
    fn select(&self, directory: Directory, body: &Arc<Body<Key>>, high: Option<&Key>, bounds: &[Range<TermId>], walk: Walk, out: &mut Selection) -> Result<(), ReadError> {
        let chosen = entries_for_bounds(&body.entries, high, bounds);
        if body.level == 0 {
            out.blocks.extend(chosen.iter().map(|&i| (body.entries[i].first_block, body.entries[i].range.length)));
            return Ok(());
        }
        if walk == Walk::Peek && chosen.len() > SPECULATE_MAX_NODES {
            out.too_wide = true;
            return Ok(());
        }
        for i in chosen {
            let entry = &body.entries[i];
            let next = body.entries.get(i + 1).map(|e| &e.head).or(high);
            match self.node::<Key>(directory, body.level - 1, entry, walk) {
                Ok(Some(child)) => self.select(directory, &child, next, bounds, walk, out)?,
                Ok(None) => out.nodes.push((body.level - 1, entry.clone())),
                Err(ReadError::Missing(ranges)) => match &mut out.missing {
                    Some(ReadError::Missing(all)) => all.extend(ranges),
                    _ => out.missing = Some(ReadError::Missing(ranges)),
                },
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

/// What [`Store::select`] found: blocks (number, bytes), nodes not in memory
/// (on a peek), a miss (on a read).
#[derive(Default)]
struct Selection {
    blocks: Vec<(usize, u64)>,
    nodes: Vec<(u8, Entry<Key>)>,
    too_wide: bool,
    missing: Option<ReadError>,
}

impl<S: RangeSource> Store<S> {
    /// The number of the dictionary block holding an id, from what is in
    /// memory (`None` also when its directory node is not).
    pub fn dictionary_block_for_id(&self, id: TermId) -> Option<usize> {
        self.dictionary_for_id_walk(id, Walk::Peek).ok().flatten().map(|located| located.number)
    }

    /// The first key of block `number` of a permutation, from what is in
    /// memory (`None` also when its directory node is not).
    pub fn permutation_head(&self, permutation: Permutation, number: usize) -> Option<Key> {
        match self.leaf::<Key>(Directory::Permutation(permutation), number, Walk::Peek).ok()? {
            Descent::Block(body, i) => Some(body.entries[i].head),
            _ => None,
        }
    }

    /// The first term of the dictionary block holding an id, from what is in memory.
    pub fn dictionary_head_for_id(&self, id: TermId) -> Option<Vec<u8>> {
        match self.descend::<Vec<u8>>(Directory::Dictionary, |e| e.first_item <= id, Walk::Peek).ok()? {
            Descent::Block(body, i) if body.entries[i].item_end() > id => Some(body.entries[i].head.clone()),
            _ => None,
        }
    }
}

impl<S: RangeSource> Store<S> {
    /// Where a dictionary or permutation block is and what it holds, walking
    /// its directory (a node not in memory is read, or missed); `None` for
    /// another key or a number past the last block.
    pub fn located(&self, key: BlockKey) -> Result<Option<Located>, ReadError> {
        match key {
            BlockKey::Dictionary(n) => self.locate(Directory::Dictionary, n, Walk::Read),
            BlockKey::Permutation(p, n) => self.locate(Directory::Permutation(p), n, Walk::Read),
            _ => Ok(None),
        }
    }
}
