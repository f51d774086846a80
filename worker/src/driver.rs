//! The host loop, written once: a run over the [`Store`] asks for blocks the
//! request has not fetched (the source answers `Missing`, the store records
//! the blocks), then [`Session::fetch_missing`] reads them all from R2 in one
//! round of concurrent, coalesced ranged gets, feeds them, and the caller
//! runs again. A run counts only once it finishes with nothing missing
//! (docs/READ-PATH.md). Rounds, bytes, decoded-block memory and time are
//! bounded per request.

use crate::config::Config;
use crate::datasets::{self, Dataset, OpenFile};
use crate::http_error::HttpError;
use crate::r2_source::{R2, Stats};
use rete_core::read::{Block, BlockCache, BlockKey, coalesce, slice_of};
use rete_core::{ByteRange, RangeSource, ReadError, Store};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::rc::Rc;

/// Readahead of a permutation scan never grows past this many blocks a round.
const MAX_READAHEAD_BLOCKS: usize = 16;

/// The bytes a request has fetched outside blocks (the first 16 KiB, CARD…),
/// as a [`RangeSource`] that answers `Missing` for anything else and
/// remembers what it was asked.
#[derive(Clone, Default)]
pub struct Fetched {
    inner: Rc<RefCell<FetchedInner>>,
}

#[derive(Default)]
struct FetchedInner {
    parts: Vec<(ByteRange, Rc<Vec<u8>>)>,
    missing: Vec<ByteRange>,
}

impl Fetched {
    fn insert(&self, range: ByteRange, bytes: Rc<Vec<u8>>) {
        self.inner.borrow_mut().parts.push((range, bytes));
    }

    fn take_missing(&self) -> Vec<ByteRange> {
        std::mem::take(&mut self.inner.borrow_mut().missing)
    }
}

impl RangeSource for Fetched {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        let mut inner = self.inner.borrow_mut();
        let mut found = Vec::with_capacity(ranges.len());
        let mut missing = Vec::new();
        for range in ranges {
            match inner.parts.iter().find_map(|(within, bytes)| slice_of(*within, bytes, *range)) {
                Some(bytes) => found.push(bytes.to_vec()),
                None => missing.push(*range),
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        inner.missing.extend_from_slice(&missing);
        Err(ReadError::Missing(missing))
    }
}

/// One request's view of a dataset: a [`Store`] over [`Fetched`], and the
/// R2 reads that fill it. Dropping it gives the block cache back to the isolate.
pub struct Session {
    store: Option<Store<Fetched>>,
    fetched: Fetched,
    dataset: Dataset,
    r2: R2,
    stats: Rc<Stats>,
    max_rounds: u64,
    max_read_bytes: u64,
    max_block_memory_bytes: u64,
    coalesce_gap_bytes: u64,
    deadline_ms: f64,
    max_time_ms: u64,
    read_bytes: u64,
    block_bytes: u64,
    /// Permutation blocks fed so far, to detect a scan and read ahead.
    fed: HashSet<BlockKey>,
}

impl Session {
    /// A session over an opened dataset, starting with its first 16 KiB.
    pub fn new(dataset: &Dataset, r2: &R2, stats: &Rc<Stats>, config: &Config, deadline_ms: f64) -> Self {
        let file: &OpenFile = &dataset.file;
        let fetched = Fetched::default();
        fetched.insert(ByteRange { offset: 0, length: file.prefix.len() as u64 }, Rc::clone(&file.prefix));
        for (range, bytes) in file.kept.borrow().iter() {
            fetched.insert(*range, Rc::clone(bytes));
        }
        let cache = file.cache.borrow_mut().take().unwrap_or_else(|| BlockCache::new(usize::try_from(config.cache_bytes).unwrap_or(usize::MAX)));
        let store = Store::from_parts(fetched.clone(), file.header.clone(), file.index.clone(), cache);
        Self {
            store: Some(store),
            fetched,
            dataset: dataset.clone(),
            r2: r2.clone(),
            stats: Rc::clone(stats),
            max_rounds: config.max_rounds,
            max_read_bytes: config.max_read_bytes,
            max_block_memory_bytes: config.max_block_memory_bytes,
            coalesce_gap_bytes: config.coalesce_gap_bytes,
            deadline_ms,
            max_time_ms: config.max_time_ms,
            read_bytes: 0,
            block_bytes: 0,
            fed: HashSet::new(),
        }
    }

    /// The store (present until the session is dropped).
    pub fn store(&self) -> &Store<Fetched> {
        match &self.store {
            Some(store) => store,
            None => unreachable!("the store is taken only on drop"),
        }
    }

    /// Runs `attempt` until a run finishes with nothing missing, fetching
    /// between runs; returns that run's result.
    pub async fn run<T>(&mut self, mut attempt: impl FnMut(&Store<Fetched>) -> T) -> Result<T, HttpError> {
        loop {
            let outcome = attempt(self.store());
            if !self.fetch_missing().await? {
                return Ok(outcome);
            }
        }
    }

    /// Fetches what the last run missed: `Ok(false)` when nothing was
    /// missing (the run is valid), `Ok(true)` when it must run again.
    pub async fn fetch_missing(&mut self) -> Result<bool, HttpError> {
        let store = self.store();
        let mut blocks: BTreeSet<BlockKey> = store.take_missing().into_iter().collect();
        let raw_missing = self.fetched.take_missing();
        if blocks.is_empty() && raw_missing.is_empty() {
            return Ok(false);
        }
        self.read_ahead(&mut blocks);
        let store = self.store();
        let block_ranges: Vec<(BlockKey, ByteRange)> = blocks.iter().filter_map(|&key| store.block_range(key).map(|range| (key, range))).collect();
        let block_set: HashSet<ByteRange> = block_ranges.iter().map(|(_, range)| *range).collect();
        let mut raw: Vec<ByteRange> = raw_missing.into_iter().filter(|range| !block_set.contains(range)).collect();
        raw.sort_unstable();
        raw.dedup();

        let rounds = self.stats.rounds.get() + 1;
        self.stats.rounds.set(rounds);
        if rounds > self.max_rounds {
            return Err(HttpError::worker_budget("rounds", self.max_rounds, format!("query needs more than {} rounds of reads", self.max_rounds)));
        }
        if js_sys::Date::now() > self.deadline_ms {
            return Err(HttpError::worker_budget("deadline", self.max_time_ms, format!("query exceeded its time limit of {} ms", self.max_time_ms)));
        }
        let merged = coalesce(block_ranges.iter().map(|(_, range)| *range).chain(raw.iter().copied()).collect(), self.coalesce_gap_bytes);
        let round_bytes: u64 = merged.iter().map(|range| range.length).sum();
        if self.read_bytes + round_bytes > self.max_read_bytes {
            return Err(HttpError::worker_budget("read-bytes", self.max_read_bytes, format!("query needs more than {} bytes read from storage", self.max_read_bytes)));
        }
        self.read_bytes += round_bytes;
        let bodies = match self.r2.get_ranges(&self.dataset.file.key, &self.dataset.file.etag, &merged).await {
            Err(error @ HttpError::Changed(_)) => {
                datasets::forget(&self.dataset.name, &self.dataset.entry.version);
                return Err(error);
            }
            other => other?,
        };
        let within = |range: ByteRange| -> Option<&[u8]> {
            let position = merged.partition_point(|m| m.offset <= range.offset).checked_sub(1)?;
            slice_of(merged[position], &bodies[position], range)
        };
        let store = self.store();
        let mut added = 0u64;
        for (key, range) in &block_ranges {
            let bytes = within(*range).ok_or_else(|| HttpError::Internal(format!("fetched ranges do not cover {range:?}")))?;
            store.feed(*key, bytes).map_err(|e| HttpError::Corrupt(format!("{}: {e}", self.dataset.file.key)))?;
            added += match store.block(*key) {
                Ok(Block::Dictionary(block)) => block.heap_bytes() as u64,
                Ok(Block::Permutation(keys)) => (keys.len() * std::mem::size_of::<rete_core::format::permutation::Key>()) as u64,
                Err(error) => return Err(error.into()),
            };
        }
        for range in &raw {
            let bytes = within(*range).ok_or_else(|| HttpError::Internal(format!("fetched ranges do not cover {range:?}")))?;
            let bytes = Rc::new(bytes.to_vec());
            self.dataset.file.keep(*range, &bytes);
            self.fetched.insert(*range, bytes);
            added += range.length;
        }
        self.fed.extend(block_ranges.iter().map(|(key, _)| *key));
        self.block_bytes += added;
        if self.block_bytes > self.max_block_memory_bytes {
            return Err(HttpError::worker_budget("memory", self.max_block_memory_bytes, format!("query needs more than {} bytes of decoded blocks in memory", self.max_block_memory_bytes)));
        }
        Ok(true)
    }

    /// A run that misses block n of a permutation right after block n-1 was
    /// fed is scanning: fetch the next blocks too, doubling with the length
    /// of the scan so far, so a scan of N blocks takes about log2(N) rounds.
    fn read_ahead(&self, blocks: &mut BTreeSet<BlockKey>) {
        let store = self.store();
        let scans: Vec<(rete_core::Permutation, usize)> =
            blocks.iter().filter_map(|key| if let BlockKey::Permutation(p, n) = *key { Some((p, n)) } else { None }).collect();
        for (permutation, number) in scans {
            let streak = (1..=MAX_READAHEAD_BLOCKS).take_while(|back| number.checked_sub(*back).is_some_and(|n| self.fed.contains(&BlockKey::Permutation(permutation, n)))).count();
            if streak == 0 {
                continue;
            }
            let count = streak.next_power_of_two().min(MAX_READAHEAD_BLOCKS);
            let available = store.index().permutations[usize::from(permutation.id())].len();
            for next in number + 1..(number + 1 + count).min(available) {
                let key = BlockKey::Permutation(permutation, next);
                if !self.fed.contains(&key) {
                    store.want(key);
                }
            }
        }
        blocks.extend(store.take_missing());
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(store) = self.store.take() {
            store.release_fed();
            self.dataset.file.cache.replace(Some(store.into_cache()));
        }
    }
}
