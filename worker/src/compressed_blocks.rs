//! The isolate's compressed blocks: the sealed bytes of blocks its requests
//! read (from R2 or the Cache API), kept for all its later requests within
//! `COMPRESSED_CACHE_BYTES`, least recently used out first.
//!
//! A request's decoded blocks are bounded by its block cache (`CACHE_BYTES`,
//! `pool.rs`). A scan that touches more decoded blocks than that (CLDR's
//! CONTAINS or STRLEN over every label: 5.8 MB sealed, 21 MB decoded) used
//! to read its blocks again on every request, and past the Free plan's 50
//! subrequests it ended in 422. Sealed blocks take a third to a quarter of
//! their decoded size, so they are what the isolate keeps: a request's
//! store reads them as its [`RangeSource`] and decodes again what its
//! block cache evicted, as the native engine does over a file. Only blocks
//! are kept (checked by their decoding before they come here); the file's
//! sections are kept by `datasets.rs`.

use rete_core::{ByteRange, RangeSource, ReadError};
use std::collections::{BTreeMap, HashMap};
use std::cell::{Cell, RefCell};

/// A block of one file: the file's content hash and the block's offset.
type Key = (u128, u64);

/// The sealed bytes of one block and their last use.
struct Kept {
    bytes: Vec<u8>,
    age: u64,
}

/// Blocks by file and offset, and their ages (oldest first) for eviction.
#[derive(Default)]
struct Tier {
    entries: HashMap<Key, Kept>,
    ages: BTreeMap<u64, Key>,
    used_bytes: u64,
    clock: u64,
}

thread_local! {
    static TIER: RefCell<Tier> = RefCell::default();
}

impl Tier {
    fn get(&mut self, key: Key, length: u64) -> Option<Vec<u8>> {
        self.clock += 1;
        let kept = self.entries.get_mut(&key).filter(|kept| kept.bytes.len() as u64 == length)?;
        self.ages.remove(&kept.age);
        kept.age = self.clock;
        self.ages.insert(self.clock, key);
        Some(kept.bytes.clone())
    }

    fn keep(&mut self, budget_bytes: u64, key: Key, bytes: &[u8]) -> bool {
        let size = bytes.len() as u64;
        if !fits(budget_bytes, size) {
            return false;
        }
        if let Some(old) = self.entries.remove(&key) {
            self.ages.remove(&old.age);
            self.used_bytes -= old.bytes.len() as u64;
        }
        while self.used_bytes + size > budget_bytes {
            let Some((_, oldest)) = self.ages.pop_first() else { break };
            if let Some(evicted) = self.entries.remove(&oldest) {
                self.used_bytes -= evicted.bytes.len() as u64;
            }
        }
        self.clock += 1;
        self.entries.insert(key, Kept { bytes: bytes.to_vec(), age: self.clock });
        self.ages.insert(self.clock, key);
        self.used_bytes += size;
        true
    }
}

/// Whether a block of `length` sealed bytes is kept under `budget_bytes`
/// (not when larger, nor when the budget is 0: the tier is off).
pub fn fits(budget_bytes: u64, length: u64) -> bool {
    length > 0 && length <= budget_bytes
}

/// Keeps a checked block's sealed bytes within `budget_bytes`, evicting the
/// least recently used; `false`, nothing kept, unless it [`fits`].
pub fn keep(budget_bytes: u64, file: u128, range: ByteRange, bytes: &[u8]) -> bool {
    TIER.with(|tier| tier.borrow_mut().keep(budget_bytes, (file, range.offset), bytes))
}

/// Whether the block of `file` at `range` is kept (its age untouched).
pub fn holds(file: u128, range: ByteRange) -> bool {
    TIER.with(|tier| tier.borrow().entries.get(&(file, range.offset)).is_some_and(|kept| kept.bytes.len() as u64 == range.length))
}

/// One file's kept blocks as a request's source: a range that is a kept
/// block gives its bytes, anything else is [`ReadError::Missing`] (read in
/// the request's next round).
pub struct CompressedBlocks {
    file: u128,
    refuse_misses: Cell<bool>,
}

impl CompressedBlocks {
    /// The kept blocks of the file whose content hash is `file`.
    pub fn of(file: u128) -> Self {
        Self { file, refuse_misses: Cell::new(false) }
    }

    /// From now on a range not kept is an error, not a miss: for a run that
    /// may read nothing (one that streams an answer a run before found
    /// complete). A block another request pushed out of the tier since would
    /// otherwise leave that answer incomplete without a word; this way the
    /// run fails, and the stream with it.
    pub fn refuse_misses(&self) {
        self.refuse_misses.set(true);
    }
}

impl RangeSource for CompressedBlocks {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        let found = TIER.with(|tier| {
            let mut tier = tier.borrow_mut();
            ranges.iter().map(|range| tier.get((self.file, range.offset), range.length)).collect::<Option<Vec<_>>>()
        });
        match found {
            Some(found) => Ok(found),
            None if self.refuse_misses.get() => Err(ReadError::Source("a block this answer read was pushed out of the isolate's compressed blocks by another request while the answer streamed; ask again".into())),
            None => Err(ReadError::Missing(ranges.to_vec())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(offset: u64, length: u64) -> ByteRange {
        ByteRange { offset, length }
    }

    #[test]
    fn keeps_within_its_budget_least_recently_used_out_first() {
        let mut tier = Tier::default();
        for n in 0..4 {
            assert!(tier.keep(300, (1, n * 100), &[n as u8; 100]));
            assert!(tier.used_bytes <= 300);
        }
        assert!(tier.get((1, 0), 100).is_none(), "the oldest left first");
        assert_eq!(tier.get((1, 100), 100), Some(vec![1; 100]));
        assert!(tier.keep(300, (1, 400), &[4; 100]));
        assert!(tier.get((1, 200), 100).is_none(), "block 100 was used since: 200 left");
        assert!(tier.get((1, 100), 100).is_some() && tier.get((1, 300), 100).is_some() && tier.get((1, 400), 100).is_some());
        assert!(tier.get((2, 100), 100).is_none(), "another file's block");
        assert!(tier.get((1, 100), 99).is_none(), "another length at that offset");
        assert!(!tier.keep(300, (1, 500), &[5; 301]), "larger than the budget");
        assert!(!tier.keep(0, (1, 500), &[5; 1]), "no budget: nothing kept");
        assert!(!tier.keep(300, (1, 500), &[]), "nothing to keep");
        assert!(tier.keep(300, (1, 100), &[7; 100]), "kept again: replaced, counted once");
        assert_eq!((tier.used_bytes, tier.entries.len(), tier.ages.len()), (300, 3, 3));
        assert!(tier.keep(150, (1, 600), &[6; 100]), "a smaller budget evicts down to it");
        assert_eq!((tier.used_bytes, tier.entries.len()), (100, 1));
    }

    #[test]
    fn a_file_s_blocks_are_its_source() {
        let file = 0xfeed_u128;
        assert!(keep(1 << 20, file, range(64, 3), b"abc"));
        let source = CompressedBlocks::of(file);
        assert_eq!(source.read_ranges(&[range(64, 3)]).ok(), Some(vec![b"abc".to_vec()]));
        assert!(holds(file, range(64, 3)) && !holds(file, range(64, 4)) && !holds(file, range(128, 3)));
        assert!(matches!(source.read_ranges(&[range(64, 3), range(128, 3)]), Err(ReadError::Missing(missing)) if missing.len() == 2));
        assert!(matches!(CompressedBlocks::of(7).read_ranges(&[range(64, 3)]), Err(ReadError::Missing(_))));
        source.refuse_misses();
        assert!(source.read_ranges(&[range(64, 3)]).is_ok());
        assert!(matches!(source.read_ranges(&[range(128, 3)]), Err(ReadError::Source(_))), "a miss is an error now");
    }
}
