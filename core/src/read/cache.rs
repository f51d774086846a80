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

use super::{Block, BlockKey};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A block of one file: the file's content hash and the block.
type Entry = (u128, BlockKey);

/// An LRU cache of decoded blocks bounded by their heap size.
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
    ages: BinaryHeap<Reverse<(u64, Entry)>>,
}

#[derive(Debug)]
struct Slot {
    block: Block,
    size: usize,
    /// Last use, or `None` while pinned.
    age: Option<u64>,
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
        Self { budget_bytes, used_bytes: 0, pinned_bytes: 0, clock: 0, entries: FxHashMap::default(), ages: BinaryHeap::new() }
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
        Some(slot.block.clone())
    }

    /// Adds a block, evicting the least recently used unpinned ones to stay
    /// within the budget. A block that does not fit beside the pinned ones is
    /// not kept (the caller still has it). A pinned block stays pinned.
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
        self.evict_until_free(size);
        self.clock += 1;
        self.entries.insert(entry, Slot { block, size, age: Some(self.clock) });
        self.push_age(self.clock, entry);
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
        self.evict_until_free(size);
        self.entries.insert(entry, Slot { block, size, age: None });
        self.used_bytes += size;
        self.pinned_bytes += size;
        Ok(())
    }

    /// Unpins every block: they become the most recently used.
    pub fn unpin_all(&mut self) {
        for (entry, slot) in self.entries.iter_mut() {
            if slot.age.is_none() {
                self.clock += 1;
                slot.age = Some(self.clock);
                self.ages.push(Reverse((self.clock, *entry)));
            }
        }
        self.pinned_bytes = 0;
    }

    /// Records an entry's age for eviction; ages of entries gone or stamped
    /// since are dropped when the heap has more than twice the entries.
    fn push_age(&mut self, age: u64, entry: Entry) {
        if self.ages.len() >= 2 * self.entries.len() + 64 {
            let current = self.entries.iter().filter_map(|(entry, slot)| Some(Reverse((slot.age?, *entry))));
            self.ages = current.collect();
        } else {
            self.ages.push(Reverse((age, entry)));
        }
    }

    fn remove(&mut self, entry: Entry) {
        if let Some(slot) = self.entries.remove(&entry) {
            if slot.age.is_none() {
                self.pinned_bytes -= slot.size;
            }
            self.used_bytes -= slot.size;
        }
    }

    fn evict_until_free(&mut self, size: usize) {
        while self.used_bytes.saturating_add(size) > self.budget_bytes {
            let Some(Reverse((age, entry))) = self.ages.pop() else { break };
            match self.entries.get(&entry).map(|slot| slot.age) {
                Some(Some(stamp)) if stamp == age => {
                    if let Some(slot) = self.entries.remove(&entry) {
                        self.used_bytes -= slot.size;
                    }
                }
                // Used since this age was recorded: it goes back with its stamp.
                Some(Some(stamp)) if stamp > age => self.ages.push(Reverse((stamp, entry))),
                // Removed, pinned, or an age recorded before a newer one (the newer one is in the heap).
                _ => {}
            }
        }
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

    #[test]
    fn stays_within_budget_and_evicts_oldest() {
        let size = heap_bytes(&block(10));
        let mut cache = BlockCache::new(size * 2 + size / 2);
        for n in 0..10 {
            cache.insert(1, key(n), block(10));
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

    /// Against a model that scans every entry for the oldest (the cache
    /// before issue 18): the same blocks stay through lookups, re-inserts,
    /// pins and unpins, many of them, so that stale ages pile up and the
    /// heap is compacted.
    #[test]
    fn evicts_exactly_the_least_recently_used() {
        let size = heap_bytes(&block(10));
        let mut cache = BlockCache::new(size * 40);
        let mut model: Vec<(usize, u64)> = Vec::new();
        let mut clock = 0u64;
        let mut state = 12345u64;
        let mut pinned: Vec<usize> = Vec::new();
        for step in 0..20_000u64 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let n = (state >> 33) as usize % 90;
            clock += 1;
            match (state >> 20) % 10 {
                0..=3 => {
                    if cache.get(1, &key(n)).is_some() && !pinned.contains(&n) {
                        model.iter_mut().filter(|(m, _)| *m == n).for_each(|(_, age)| *age = clock);
                    }
                }
                // One pin at a time: unpinning gives several blocks their ages in the map's order.
                4 if pinned.is_empty() => {
                    cache.pin(1, key(n), block(10)).unwrap();
                    model.retain(|&(m, _)| m != n);
                    pinned.push(n);
                }
                5 if step % 7 == 0 => {
                    cache.unpin_all();
                    for n in pinned.drain(..) {
                        clock += 1;
                        model.push((n, clock));
                    }
                }
                _ if !pinned.contains(&n) => {
                    cache.insert(1, key(n), block(10));
                    model.retain(|&(m, _)| m != n);
                    model.push((n, clock));
                }
                _ => {}
            }
            while (model.len() + pinned.len()) * size > cache.budget_bytes() {
                let oldest = model.iter().enumerate().min_by_key(|(_, (_, age))| *age).map(|(i, _)| i).unwrap();
                model.remove(oldest);
            }
            for m in 0..90 {
                let expected = pinned.contains(&m) || model.iter().any(|&(k, _)| k == m);
                assert_eq!(cache.contains(1, &key(m)), expected, "block {m} after step {step}");
            }
            assert!(cache.ages.len() <= 2 * cache.entries.len() + 65);
        }
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
