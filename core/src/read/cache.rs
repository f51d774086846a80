//! Decoded blocks kept in memory under a hard byte budget. Entries are keyed
//! by the file's content hash and the block, so one cache can serve several
//! files in turn (a host keeps it across queries and files). Blocks fed for
//! the query in progress are *pinned*: they count against the same budget
//! but are never evicted, so a re-run finds every one of them; the others
//! leave least recently used first. Each entry carries its last use, and an
//! eviction looks for the oldest: a lookup, which a query makes per printed
//! term and per pattern, only stamps the entry, while an eviction follows the
//! decode of a block, which costs far more than the search (issue 14: an
//! age-ordered map kept up on every lookup was a twentieth of a DESCRIBE).

use super::{Block, BlockKey};
use rustc_hash::FxHashMap;

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
        Self { budget_bytes, used_bytes: 0, pinned_bytes: 0, clock: 0, entries: FxHashMap::default() }
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
        for slot in self.entries.values_mut() {
            if slot.age.is_none() {
                self.clock += 1;
                slot.age = Some(self.clock);
            }
        }
        self.pinned_bytes = 0;
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
            let oldest = self.entries.iter().filter_map(|(entry, slot)| Some((slot.age?, *entry))).min_by_key(|&(age, _)| age);
            let Some((_, oldest)) = oldest else { break };
            if let Some(slot) = self.entries.remove(&oldest) {
                self.used_bytes -= slot.size;
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
