//! Decoded blocks kept in memory under a hard byte budget. Entries are keyed
//! by the file's content hash and the block, so one cache can serve several
//! files in turn (a host keeps it across queries and files). Blocks fed for
//! the query in progress are *pinned*: they count against the same budget
//! but are never evicted, so a re-run finds every one of them; the others
//! leave least recently used first. Each entry carries its last use, and a
//! lookup, which a query makes per printed term and per pattern, only stamps
//! the entry (issue 14: an age-ordered map kept up on every lookup was a
//! twentieth of a DESCRIBE). Evictions take the oldest from a min-heap of
//! ages that lookups do not touch: a popped age older than its entry's
//! stamp goes back in with the stamp, so the first current age popped is
//! the least recently used entry, in O(log n) amortized. Scanning every
//! entry for the oldest, as before, cost O(n) per eviction: a file of tiny
//! blocks (a hostile one, or a forced layout) read through a full cache of
//! thousands of them spent most of its time there (issue 18, the
//! `build_input` fuzz target: 74 % of a campaign sample's CPU).
//!
//! A query whose own blocks fill the cache does not cycle it (issue 14): a
//! scan that touches more blocks than the cache holds, in the same order on
//! every request (CLDR's CONTAINS or STRLEN over every label in the Worker:
//! 21 MB decoded through 16 MiB), evicted under plain LRU each block just
//! before the next request asked for it again, and decoded every block on
//! every request. Now:
//! - once a query would evict a block it used itself (it has *filled* the
//!   cache), the blocks it brings in after that take turns in a *window* of
//!   a sixteenth of the budget (least recently used out first) and leave its
//!   earlier blocks be;
//! - when it ends, its window's blocks are *overflow*, the first out in any
//!   later query, and the other blocks it used are *scanned*: when the
//!   least recently used block is a scanned one the current query has not
//!   used, the most recently used such block goes instead (a scan asks for
//!   its blocks again in the order it used them, so its last ones are
//!   needed last; under LRU each miss evicted the block asked for next).
//!
//! So the next run of the same scan finds its first blocks still there, its
//! misses take the overflow's and the scan's last blocks' places, and all
//! but about two windows of the cache are hits, where plain LRU hit none. A
//! block a query asks for again after the cache dropped it is reuse, not a
//! scan: it comes back as a plain block, evicting the least recently used,
//! so a working set larger than the window is kept as plain LRU keeps it.
//! A query that fits the cache never fills it and sees plain LRU. A query
//! ends at [`BlockCache::unpin_all`] (a host's request ends, or
//! `release_fed`); a cache that never ends a query takes its life for one.
//! "Used" is what [`BlockCache::get`] sees: a store that finds a block by
//! its weak handle (`placed.rs`) does not stamp it, but a Worker's store is
//! new each request, so each block's first use in a request is a lookup.

use super::{Block, BlockKey};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A block of one file: the file's content hash and the block.
type Entry = (u128, BlockKey);

/// Ages of entries, oldest first; each is checked against its entry when it
/// comes to the top (entries are stamped on lookup without touching it).
type Ages = BinaryHeap<Reverse<(u64, Entry)>>;

/// The window's share of the budget: 1/16.
const WINDOW_SHARE: usize = 16;

/// Blocks remembered as dropped during one query, at most (then forgotten:
/// a block asked for again after that is taken for a scanned one).
const MAX_DROPPED: usize = 4096;

/// An LRU cache of decoded blocks bounded by their heap size, which a query
/// larger than it does not cycle (module docs).
#[derive(Debug)]
pub struct BlockCache {
    budget_bytes: usize,
    used_bytes: usize,
    pinned_bytes: usize,
    clock: u64,
    entries: FxHashMap<Entry, Slot>,
    /// An age for every unpinned entry, at most its stamp (a lookup since
    /// makes it stale), plus ages of entries since removed, pinned or
    /// stamped again: each is checked against its entry when popped.
    ages: Ages,
    /// The same for the window's and overflow entries.
    window_ages: Ages,
    /// Ages of scanned entries, *newest* first, each checked likewise.
    scanned_ages: BinaryHeap<(u64, Entry)>,
    /// Bytes of the current query's window.
    window_bytes: usize,
    /// The clock when the current query began: a later stamp is a use by it.
    query_start: u64,
    /// Whether the current query has evicted a block it used.
    filled: bool,
    /// Blocks the current query used that the cache has dropped since.
    dropped: FxHashSet<Entry>,
}

#[derive(Debug)]
struct Slot {
    block: Block,
    size: usize,
    /// Last use, or `None` while pinned.
    age: Option<u64>,
    kind: Kind,
}

/// What an entry is to eviction (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    /// Brought in after the current query filled the cache.
    Window,
    /// Brought in after an earlier query filled the cache, not used since.
    Overflow,
    /// Used by the last query that used it, which filled the cache.
    Scanned,
}

/// Pinning a block would take the cache over its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheFull {
    /// The cache's budget.
    pub budget_bytes: usize,
    /// Bytes the pinned blocks would need with this one.
    pub needed_bytes: usize,
}

impl BlockCache {
    /// An empty cache holding at most `budget_bytes` of decoded blocks.
    pub fn new(budget_bytes: usize) -> Self {
        Self {
            budget_bytes,
            used_bytes: 0,
            pinned_bytes: 0,
            clock: 0,
            entries: FxHashMap::default(),
            ages: BinaryHeap::new(),
            window_ages: BinaryHeap::new(),
            scanned_ages: BinaryHeap::new(),
            window_bytes: 0,
            query_start: 0,
            filled: false,
            dropped: FxHashSet::default(),
        }
    }

    /// The budget.
    pub fn budget_bytes(&self) -> usize {
        self.budget_bytes
    }

    /// Bytes currently held (pinned or not); never above the budget.
    pub fn used_bytes(&self) -> usize {
        self.used_bytes
    }

    /// Bytes held by pinned blocks.
    pub fn pinned_bytes(&self) -> usize {
        self.pinned_bytes
    }

    /// Whether a block is cached (without touching its age).
    pub fn contains(&self, file: u128, key: &BlockKey) -> bool {
        self.entries.contains_key(&(file, *key))
    }

    /// A cached block, marked as just used.
    pub fn get(&mut self, file: u128, key: &BlockKey) -> Option<Block> {
        self.clock += 1;
        let slot = self.entries.get_mut(&(file, *key))?;
        if let Some(age) = &mut slot.age {
            *age = self.clock;
        }
        if slot.kind == Kind::Overflow {
            slot.kind = Kind::Plain;
        }
        Some(slot.block.clone())
    }

    /// Adds a block, evicting to stay within the budget: blocks the current
    /// query has not used, least recently used first, then as the module
    /// docs say. A block that does not fit beside the pinned ones is not
    /// kept (the caller still has it). A pinned block stays pinned.
    pub fn insert(&mut self, file: u128, key: BlockKey, block: Block) {
        let entry = (file, key);
        if self.entries.get(&entry).is_some_and(|slot| slot.age.is_none()) {
            return;
        }
        self.remove(entry);
        let size = heap_bytes(&block);
        if self.pinned_bytes.saturating_add(size) > self.budget_bytes {
            return;
        }
        let reused = self.dropped.remove(&entry);
        let window = self.evict_until_free(size, reused) && !reused;
        self.clock += 1;
        let kind = if window { Kind::Window } else { Kind::Plain };
        self.entries.insert(entry, Slot { block, size, age: Some(self.clock), kind });
        self.ages = push_age(std::mem::take(&mut self.ages), self.clock, entry, &self.entries, |_| true);
        if window {
            self.window_ages = push_age(std::mem::take(&mut self.window_ages), self.clock, entry, &self.entries, in_window);
            self.window_bytes += size;
        }
        self.used_bytes += size;
    }

    /// Adds a block that must stay until [`BlockCache::unpin_all`], evicting
    /// unpinned ones for room. Fails, keeping nothing new, when the pinned
    /// blocks alone would exceed the budget.
    pub fn pin(&mut self, file: u128, key: BlockKey, block: Block) -> Result<(), CacheFull> {
        let entry = (file, key);
        if self.entries.get(&entry).is_some_and(|slot| slot.age.is_none()) {
            return Ok(());
        }
        let size = heap_bytes(&block);
        let needed_bytes = self.pinned_bytes.saturating_add(size);
        if needed_bytes > self.budget_bytes {
            return Err(CacheFull { budget_bytes: self.budget_bytes, needed_bytes });
        }
        self.remove(entry);
        self.dropped.remove(&entry);
        self.evict_until_free(size, false);
        self.entries.insert(entry, Slot { block, size, age: None, kind: Kind::Plain });
        self.used_bytes += size;
        self.pinned_bytes += size;
        Ok(())
    }

    /// Unpins every block (they become the most recently used) and ends the
    /// current query: its window's blocks become overflow, the others it
    /// used scanned if it filled the cache, else plain.
    pub fn unpin_all(&mut self) {
        if self.scanned_ages.len() >= 2 * self.entries.len() + 64 {
            self.scanned_ages = self.entries.iter().filter(|(_, slot)| slot.kind == Kind::Scanned).filter_map(|(entry, slot)| Some((slot.age?, *entry))).collect();
        }
        for (entry, slot) in self.entries.iter_mut() {
            if slot.age.is_none() {
                self.clock += 1;
                slot.age = Some(self.clock);
                self.ages.push(Reverse((self.clock, *entry)));
            }
            match slot.kind {
                Kind::Window => slot.kind = Kind::Overflow,
                Kind::Plain | Kind::Scanned if slot.age >= Some(self.query_start) => {
                    slot.kind = if self.filled { Kind::Scanned } else { Kind::Plain };
                    if let (Kind::Scanned, Some(age)) = (slot.kind, slot.age) {
                        self.scanned_ages.push((age, *entry));
                    }
                }
                _ => {}
            }
        }
        self.pinned_bytes = 0;
        self.window_bytes = 0;
        self.dropped.clear();
        self.filled = false;
        self.query_start = self.clock + 1;
    }

    fn remove(&mut self, entry: Entry) {
        if let Some(slot) = self.entries.remove(&entry) {
            if slot.age.is_none() {
                self.pinned_bytes -= slot.size;
            }
            if slot.kind == Kind::Window {
                self.window_bytes -= slot.size;
            }
            self.used_bytes -= slot.size;
        }
    }

    /// Evicts until `size` more bytes fit: overflow first (least recently
    /// used first), then the least recently used block; but in its place
    /// the most recently used scanned block the current query has not used
    /// when it is one (a scan asks for its blocks again in the order it
    /// used them: the last ones are needed last), and the window's least
    /// recently used when the current query used it and its window is full
    /// (`reused`: the new block is one the query asked for again, which
    /// takes the least recently used). Whether a block the current query
    /// used was evicted: the query has filled the cache.
    fn evict_until_free(&mut self, size: usize, reused: bool) -> bool {
        let mut filled = false;
        while self.used_bytes.saturating_add(size) > self.budget_bytes {
            // Overflow ages are older than the window's (the query began since).
            if let Some((_, overflow)) = least_recent(&mut self.window_ages, &self.entries, in_window).filter(|(_, e)| self.entries[e].kind == Kind::Overflow) {
                self.remove(overflow);
                continue;
            }
            let Some((age, oldest)) = least_recent(&mut self.ages, &self.entries, |_| true) else { break };
            let mut victim = oldest;
            if age < self.query_start && self.entries[&oldest].kind == Kind::Scanned {
                victim = self.most_recent_scanned().unwrap_or(oldest);
            } else if age >= self.query_start {
                filled = true;
                self.filled = true;
                if !reused && self.window_bytes >= self.budget_bytes / WINDOW_SHARE {
                    if let Some((_, in_window)) = least_recent(&mut self.window_ages, &self.entries, in_window) {
                        victim = in_window;
                    }
                }
                if self.dropped.len() >= MAX_DROPPED {
                    self.dropped.clear();
                }
                self.dropped.insert(victim);
            }
            self.remove(victim);
        }
        filled
    }

    /// The scanned entry the current query has not used with the newest
    /// age, left in its heap (stale ages on top dropped).
    fn most_recent_scanned(&mut self) -> Option<Entry> {
        while let Some(&(age, entry)) = self.scanned_ages.peek() {
            match self.entries.get(&entry) {
                Some(slot) if slot.kind == Kind::Scanned && slot.age == Some(age) && age < self.query_start => return Some(entry),
                _ => {
                    self.scanned_ages.pop();
                }
            }
        }
        None
    }
}

/// Window and overflow entries: [`BlockCache::window_ages`]'s.
fn in_window(kind: Kind) -> bool {
    matches!(kind, Kind::Window | Kind::Overflow)
}

/// The entry with the oldest current age in `ages` among those of a kind
/// `of` takes, left in the heap; stale ages on top are dropped or, for an
/// entry used since, put back with its stamp.
fn least_recent(ages: &mut Ages, entries: &FxHashMap<Entry, Slot>, of: fn(Kind) -> bool) -> Option<(u64, Entry)> {
    while let Some(&Reverse((age, entry))) = ages.peek() {
        match entries.get(&entry).filter(|slot| of(slot.kind)).and_then(|slot| slot.age) {
            Some(stamp) if stamp == age => return Some((age, entry)),
            // Used since this age was recorded: it goes back with its stamp.
            Some(stamp) if stamp > age => {
                ages.pop();
                ages.push(Reverse((stamp, entry)));
            }
            // Removed, pinned, out of the window, or an age recorded before a
            // newer one (the newer one is in the heap).
            _ => {
                ages.pop();
            }
        }
    }
    None
}

/// Records an entry's age for eviction; when the heap has more than twice
/// the entries, it is rebuilt from the current ages instead (of the
/// entries of a kind `of` takes).
fn push_age(mut ages: Ages, age: u64, entry: Entry, entries: &FxHashMap<Entry, Slot>, of: fn(Kind) -> bool) -> Ages {
    if ages.len() >= 2 * entries.len() + 64 {
        entries.iter().filter(|(_, slot)| of(slot.kind)).filter_map(|(entry, slot)| Some(Reverse((slot.age?, *entry)))).collect()
    } else {
        ages.push(Reverse((age, entry)));
        ages
    }
}

/// The heap bytes a decoded block holds, as the budget counts them.
pub(crate) fn heap_bytes(block: &Block) -> usize {
    match block {
        Block::Dictionary(block) => block.heap_bytes() + 64,
        Block::Permutation(keys) => keys.heap_bytes() + 64,
        Block::SearchRoot(root) => root.blocks.iter().map(|b| b.head.capacity() + std::mem::size_of_val(b)).sum::<usize>() + 64,
        Block::Search(block) => block.heap_bytes() + 64,
        Block::DictionaryNode(body) => body.entries.iter().map(|e| e.head.capacity()).sum::<usize>() + std::mem::size_of_val(&body.entries[..]) + 64,
        Block::PermutationNode(body) => std::mem::size_of_val(&body.entries[..]) + 64,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::read::DictionaryTerms;
    use std::sync::Arc;

    /// A dictionary block of `terms` one-byte-suffix terms: about `terms` × 3 bytes.
    fn block(terms: usize) -> Block {
        let mut raw = Vec::new();
        crate::format::varint::put(&mut raw, terms as u64);
        for i in 0..terms {
            let term = format!("t{i:06}");
            raw.extend_from_slice(&[0, term.len() as u8]);
            raw.extend_from_slice(term.as_bytes());
        }
        Block::Dictionary(Arc::new(DictionaryTerms::decode(&raw, "t", 0).unwrap()))
    }

    fn key(n: usize) -> BlockKey {
        BlockKey::Permutation(crate::Permutation::Spo, n)
    }

    /// Block `n` looked up and, on a miss, inserted, as a query reads it;
    /// whether it was cached.
    fn read(cache: &mut BlockCache, n: usize) -> bool {
        let hit = cache.get(1, &key(n)).is_some();
        if !hit {
            cache.insert(1, key(n), block(10));
        }
        assert!(cache.used_bytes() <= cache.budget_bytes());
        hit
    }

    #[test]
    fn stays_within_budget_and_evicts_oldest() {
        let size = heap_bytes(&block(10));
        let mut cache = BlockCache::new(size * 2 + size / 2);
        // One block per query: none fills the cache alone, so plain LRU.
        for n in 0..10 {
            cache.insert(1, key(n), block(10));
            cache.unpin_all();
            assert!(cache.used_bytes() <= cache.budget_bytes());
        }
        assert!(cache.contains(1, &key(9)) && cache.contains(1, &key(8)));
        assert!(!cache.contains(1, &key(0)));
        assert!(!cache.contains(2, &key(9)), "another file's block 9");
        // A lookup makes a block the most recently used.
        assert!(cache.get(1, &key(8)).is_some());
        cache.insert(1, key(10), block(10));
        assert!(cache.contains(1, &key(8)) && cache.contains(1, &key(10)) && !cache.contains(1, &key(9)));
        cache.insert(1, BlockKey::Dictionary(0), block(1000));
        assert!(!cache.contains(1, &BlockKey::Dictionary(0)), "larger than the budget");
    }

    /// The policy of the module docs, by scanning every entry (as the cache
    /// before issue 18 found the oldest): blocks by (block, last use, kind),
    /// the current query's start, the blocks it dropped.
    #[derive(Default)]
    struct Model {
        blocks: Vec<(usize, u64, Kind)>,
        pinned: Vec<usize>,
        query_start: u64,
        filled: bool,
        dropped: Vec<usize>,
    }

    impl Model {
        /// Makes room for one more block; whether the query had filled the cache.
        fn evict_for_one(&mut self, budget_blocks: usize, reused: bool) -> bool {
            let mut filled = false;
            while self.blocks.len() + self.pinned.len() + 1 > budget_blocks && !self.blocks.is_empty() {
                let oldest = |blocks: &[(usize, u64, Kind)], kind: Option<Kind>| blocks.iter().enumerate().filter(|(_, b)| kind.is_none_or(|k| b.2 == k)).min_by_key(|(_, b)| b.1).map(|(i, _)| i);
                if let Some(overflow) = oldest(&self.blocks, Some(Kind::Overflow)) {
                    self.blocks.remove(overflow);
                    continue;
                }
                let mut victim = oldest(&self.blocks, None).unwrap();
                let query_start = self.query_start;
                if self.blocks[victim].1 < query_start && self.blocks[victim].2 == Kind::Scanned {
                    let newest = self.blocks.iter().enumerate().filter(|(_, b)| b.2 == Kind::Scanned && b.1 < query_start).max_by_key(|(_, b)| b.1);
                    victim = newest.unwrap().0;
                } else if self.blocks[victim].1 >= query_start {
                    filled = true;
                    self.filled = true;
                    let window_blocks = self.blocks.iter().filter(|b| b.2 == Kind::Window).count();
                    if !reused && window_blocks * 16 >= budget_blocks {
                        victim = oldest(&self.blocks, Some(Kind::Window)).unwrap_or(victim);
                    }
                    self.dropped.push(self.blocks[victim].0);
                }
                self.blocks.remove(victim);
            }
            filled
        }

        fn forget(&mut self, n: usize) -> bool {
            self.blocks.retain(|b| b.0 != n);
            let dropped = self.dropped.contains(&n);
            self.dropped.retain(|&m| m != n);
            dropped
        }
    }

    /// Against [`Model`]: the same blocks stay through lookups, re-inserts,
    /// pins and unpins (queries ending), many of them, so that stale ages
    /// pile up and the heaps are compacted.
    #[test]
    fn evicts_as_the_model_does() {
        let size = heap_bytes(&block(10));
        let budget_blocks = 40;
        let mut cache = BlockCache::new(size * budget_blocks);
        let mut model = Model::default();
        let mut clock = 0u64;
        let mut state = 12345u64;
        let (mut windows, mut overflows, mut scanned) = (0, 0, 0);
        for step in 0..20_000u64 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let n = (state >> 33) as usize % 90;
            clock += 1;
            match (state >> 20) % 10 {
                0..=3 => {
                    if cache.get(1, &key(n)).is_some() && !model.pinned.contains(&n) {
                        for b in model.blocks.iter_mut().filter(|b| b.0 == n) {
                            b.1 = clock;
                            if b.2 == Kind::Overflow {
                                b.2 = Kind::Plain;
                            }
                        }
                    }
                }
                // One pin at a time: unpinning gives several blocks their ages in the map's order.
                4 if model.pinned.is_empty() => {
                    cache.pin(1, key(n), block(10)).unwrap();
                    model.forget(n);
                    model.evict_for_one(budget_blocks, false);
                    model.pinned.push(n);
                }
                5 if step % 7 == 0 => {
                    cache.unpin_all();
                    for n in model.pinned.drain(..) {
                        clock += 1;
                        model.blocks.push((n, clock, Kind::Plain));
                    }
                    for b in model.blocks.iter_mut() {
                        match b.2 {
                            Kind::Window => b.2 = Kind::Overflow,
                            Kind::Plain | Kind::Scanned if b.1 >= model.query_start => b.2 = if model.filled { Kind::Scanned } else { Kind::Plain },
                            _ => {}
                        }
                    }
                    model.filled = false;
                    model.dropped.clear();
                    model.query_start = clock + 1;
                }
                _ if !model.pinned.contains(&n) => {
                    cache.insert(1, key(n), block(10));
                    let reused = model.forget(n);
                    let window = model.evict_for_one(budget_blocks, reused) && !reused;
                    model.blocks.push((n, clock, if window { Kind::Window } else { Kind::Plain }));
                }
                _ => {}
            }
            for m in 0..90 {
                let expected = model.pinned.contains(&m) || model.blocks.iter().any(|b| b.0 == m);
                assert_eq!(cache.contains(1, &key(m)), expected, "block {m} after step {step}");
            }
            let window_blocks = model.blocks.iter().filter(|b| b.2 == Kind::Window).count();
            windows += window_blocks;
            overflows += model.blocks.iter().filter(|b| b.2 == Kind::Overflow).count();
            scanned += model.blocks.iter().filter(|b| b.2 == Kind::Scanned).count();
            assert_eq!(cache.window_bytes, window_blocks * size, "after step {step}");
            assert!(cache.ages.len() <= 2 * cache.entries.len() + 65);
            assert!(cache.window_ages.len() <= 2 * cache.entries.len() + 65);
        }
        assert!(windows > 5_000 && overflows > 1_000 && scanned > 5_000, "the window was used: {windows}, overflow: {overflows}, scanned: {scanned}");
    }

    /// A scan of more blocks than the cache holds, in the same order each
    /// query: plain LRU evicted each block just before the next query asked
    /// for it (no hits at all); now all but the window's share stay.
    #[test]
    fn a_scan_larger_than_the_cache_keeps_most_of_it() {
        let size = heap_bytes(&block(10));
        let mut cache = BlockCache::new(size * 32);
        let mut hits = Vec::new();
        for _query in 0..4 {
            hits.push((0..48).filter(|&n| read(&mut cache, n)).count());
            cache.unpin_all();
        }
        // The window is 2 blocks' worth (32 / 16): 30 of the 48 stay.
        assert_eq!(hits, [0, 30, 30, 30]);
    }

    /// After a scan filled the cache, blocks the same query asks for again
    /// and again (more of them than the window holds) stay, as under LRU.
    #[test]
    fn blocks_asked_for_again_are_kept() {
        let size = heap_bytes(&block(10));
        let mut cache = BlockCache::new(size * 32);
        for n in 0..48 {
            cache.insert(1, key(n), block(10));
        }
        let mut misses = Vec::new();
        for _round in 0..4 {
            misses.push((100..110).filter(|&n| !read(&mut cache, n)).count());
        }
        // The first round's 10 take turns in the window (2 stay), the second
        // brings back the 8 the window dropped, as ordinary blocks.
        assert_eq!(misses, [10, 8, 0, 0], "a working set of 10 blocks, the window 2");
    }

    #[test]
    fn pinned_blocks_count_against_the_budget_and_stay() {
        let size = heap_bytes(&block(10));
        let mut cache = BlockCache::new(size * 2 + size / 2);
        cache.insert(1, key(0), block(10));
        cache.pin(1, key(1), block(10)).unwrap();
        cache.pin(1, key(2), block(10)).unwrap();
        for n in 3..20 {
            cache.insert(1, key(n), block(10));
        }
        assert!(cache.used_bytes() <= cache.budget_bytes());
        assert!(cache.contains(1, &key(1)) && cache.contains(1, &key(2)), "pinned blocks are not evicted");
        assert!(!cache.contains(1, &key(0)) && !cache.contains(1, &key(19)), "no room beside the pinned blocks");
        // Pins that cannot fit fail and say by how much.
        let error = cache.pin(1, key(30), block(10)).unwrap_err();
        assert_eq!(error.budget_bytes, cache.budget_bytes());
        assert_eq!(error.needed_bytes, size * 3);
        // Unpinned, they are ordinary LRU entries again.
        cache.unpin_all();
        assert_eq!(cache.pinned_bytes(), 0);
        for n in 40..60 {
            cache.insert(1, key(n), block(10));
        }
        assert!(!cache.contains(1, &key(1)) && cache.contains(1, &key(59)));
        assert!(cache.used_bytes() <= cache.budget_bytes());
    }
}
