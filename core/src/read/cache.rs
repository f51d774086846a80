//! Decoded blocks kept in memory under a hard byte budget, least recently
//! used first out. One cache serves one file; a host keeping several files
//! keys its caches by content hash.

use super::{Block, BlockKey};
use std::collections::{BTreeMap, HashMap};

/// An LRU cache of decoded blocks bounded by their heap size.
#[derive(Debug)]
pub struct BlockCache {
    budget_bytes: usize,
    used_bytes: usize,
    clock: u64,
    entries: HashMap<BlockKey, (Block, usize, u64)>,
    by_age: BTreeMap<u64, BlockKey>,
}

impl BlockCache {
    /// An empty cache holding at most `budget_bytes` of decoded blocks.
    pub fn new(budget_bytes: usize) -> Self {
        Self { budget_bytes, used_bytes: 0, clock: 0, entries: HashMap::new(), by_age: BTreeMap::new() }
    }

    /// Bytes currently held.
    pub fn used_bytes(&self) -> usize {
        self.used_bytes
    }

    /// Whether a block is cached (without touching its age).
    pub fn contains(&self, key: &BlockKey) -> bool {
        self.entries.contains_key(key)
    }

    /// A cached block, marked as just used.
    pub fn get(&mut self, key: &BlockKey) -> Option<Block> {
        self.clock += 1;
        let (block, _, age) = self.entries.get_mut(key)?;
        self.by_age.remove(age);
        *age = self.clock;
        self.by_age.insert(self.clock, *key);
        Some(block.clone())
    }

    /// Adds a block, evicting the oldest ones to stay within the budget. A
    /// block larger than the whole budget is not kept (the caller still has it).
    pub fn insert(&mut self, key: BlockKey, block: Block) {
        let size = heap_bytes(&block);
        if let Some((_, old_size, age)) = self.entries.remove(&key) {
            self.by_age.remove(&age);
            self.used_bytes -= old_size;
        }
        if size > self.budget_bytes {
            return;
        }
        while self.used_bytes + size > self.budget_bytes {
            let Some((_, oldest)) = self.by_age.pop_first() else { break };
            if let Some((_, old_size, _)) = self.entries.remove(&oldest) {
                self.used_bytes -= old_size;
            }
        }
        self.clock += 1;
        self.entries.insert(key, (block, size, self.clock));
        self.by_age.insert(self.clock, key);
        self.used_bytes += size;
    }
}

fn heap_bytes(block: &Block) -> usize {
    match block {
        Block::Dictionary(block) => block.heap_bytes() + 64,
        Block::Permutation(keys) => keys.capacity() * std::mem::size_of::<crate::format::permutation::Key>() + 64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Permutation;
    use std::sync::Arc;

    fn block(quads: usize) -> Block {
        Block::Permutation(Arc::new(vec![[1, 2, 3, 0]; quads]))
    }

    #[test]
    fn stays_within_budget_and_evicts_oldest() {
        let mut cache = BlockCache::new(1000);
        for n in 0..10 {
            cache.insert(BlockKey::Permutation(Permutation::Spo, n), block(10));
            assert!(cache.used_bytes() <= 1000);
        }
        assert!(cache.contains(&BlockKey::Permutation(Permutation::Spo, 9)));
        assert!(!cache.contains(&BlockKey::Permutation(Permutation::Spo, 0)));
        cache.insert(BlockKey::Dictionary(0), block(1000));
        assert!(!cache.contains(&BlockKey::Dictionary(0)), "larger than the budget");
    }
}
