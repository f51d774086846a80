//! The host loop for R2, the asynchronous twin of `rete_core::read::run_in_rounds`:
//! a run over the [`Store`] records what it could not read (blocks in the
//! store, other ranges such as CARD in [`Fetched`]); then one round fetches
//! all of it from R2 with concurrent, coalesced ranged gets, feeds it, and
//! the caller runs again. A run counts only once it finished without a miss
//! (`Store::misses` unchanged, docs/READ-PATH.md). Rounds, bytes and time
//! are bounded per request; decoded blocks by the block cache's budget.
//!
//! Block caches live in an isolate-wide pool: at most `MAX_CONCURRENT_QUERIES`
//! are out at once, each of `CACHE_BYTES`; a request takes one (or waits for
//! one) and gives it back, so decoded blocks never take more than their
//! product, whatever the concurrency or the file size.

use crate::config::Config;
use crate::datasets::{self, Dataset};
use crate::http_error::HttpError;
use crate::r2_source::{R2, Stats};
use rete_core::read::{BlockCache, coalesce, slice_of};
use rete_core::{ByteRange, RangeSource, ReadError, Store};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

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

/// The caches not in use, and the leases of those in use.
#[derive(Default)]
struct Pool {
    free: Vec<BlockCache>,
    /// (lease id, when taken in ms) of each cache a request holds.
    leases: Vec<(u64, f64)>,
    next_lease: u64,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::default();
}

/// How often a request waiting for a cache looks again. Requests cannot
/// wake each other: workerd refuses to resolve one request's promise from
/// another's, so the wait is a timer of the waiting request's own.
const POLL_MS: u64 = 5;

/// A lease older than this is taken for a request the runtime abandoned
/// without dropping it, and stops counting (ms past the request deadline).
const LEASE_GRACE_MS: f64 = 30_000.0;

/// A block cache and its lease.
struct Leased {
    cache: BlockCache,
    lease: u64,
}

/// Takes a free cache, or a new one while fewer than `max_caches` are out;
/// else waits for one until `deadline_ms` (then 503).
async fn take_cache(budget_bytes: usize, max_caches: u64, max_time_ms: u64, deadline_ms: f64) -> Result<Leased, HttpError> {
    loop {
        let now = js_sys::Date::now();
        let taken = POOL.with(|pool| {
            let mut pool = pool.borrow_mut();
            pool.leases.retain(|(_, taken_at)| now - taken_at < max_time_ms as f64 + LEASE_GRACE_MS);
            if pool.leases.len() as u64 >= max_caches.max(1) {
                return None;
            }
            let lease = pool.next_lease;
            pool.next_lease += 1;
            pool.leases.push((lease, now));
            // A changed CACHE_BYTES takes effect as caches come back.
            let cache = pool.free.pop().filter(|c| c.budget_bytes() == budget_bytes).unwrap_or_else(|| BlockCache::new(budget_bytes));
            Some(Leased { cache, lease })
        });
        if let Some(leased) = taken {
            return Ok(leased);
        }
        if now > deadline_ms {
            return Err(HttpError::Busy(format!("all {max_caches} query slots of this isolate stayed busy until the time limit; retry")));
        }
        worker::Delay::from(std::time::Duration::from_millis(POLL_MS)).await;
    }
}

fn give_back(leased: Leased, max_caches: u64) {
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        pool.leases.retain(|(lease, _)| *lease != leased.lease);
        if (pool.free.len() as u64) < max_caches {
            pool.free.push(leased.cache);
        }
    });
}

/// Where a run started, to tell afterwards whether it missed something.
#[derive(Debug, Clone, Copy)]
pub struct Mark(u64);

/// One request's view of a dataset: a [`Store`] over [`Fetched`], and the
/// R2 reads that fill it. Dropping it gives the block cache back to the pool.
pub struct Session {
    store: Option<Store<Fetched>>,
    lease: u64,
    max_caches: u64,
    fetched: Fetched,
    dataset: Dataset,
    r2: R2,
    stats: Rc<Stats>,
    max_rounds: u64,
    max_read_bytes: u64,
    max_r2_requests: u64,
    coalesce_gap_bytes: u64,
    cache_bytes: u64,
    deadline_ms: f64,
    max_time_ms: u64,
    read_bytes: u64,
    /// Rounds of block reads so far (the open's reads are not counted here).
    rounds: u64,
}

impl Session {
    /// A session over an opened dataset, starting with its first 16 KiB and
    /// the small ranges earlier requests kept.
    pub async fn new(dataset: &Dataset, r2: &R2, stats: &Rc<Stats>, config: &Config, deadline_ms: f64) -> Result<Self, HttpError> {
        let file = &dataset.file;
        let fetched = Fetched::default();
        fetched.insert(ByteRange { offset: 0, length: file.prefix.len() as u64 }, Rc::clone(&file.prefix));
        for (range, bytes) in file.kept.borrow().iter() {
            fetched.insert(*range, Rc::clone(bytes));
        }
        let leased = take_cache(usize::try_from(config.cache_bytes).unwrap_or(usize::MAX), config.max_concurrent_queries, config.max_time_ms, deadline_ms).await?;
        let store = Store::from_parts(fetched.clone(), file.header.clone(), file.index.clone(), leased.cache);
        Ok(Self {
            store: Some(store),
            lease: leased.lease,
            max_caches: config.max_concurrent_queries,
            fetched,
            dataset: dataset.clone(),
            r2: r2.clone(),
            stats: Rc::clone(stats),
            max_rounds: config.max_rounds,
            max_read_bytes: config.max_read_bytes,
            max_r2_requests: config.max_r2_requests,
            coalesce_gap_bytes: config.coalesce_gap_bytes,
            cache_bytes: config.cache_bytes,
            deadline_ms,
            max_time_ms: config.max_time_ms,
            read_bytes: 0,
            rounds: 0,
        })
    }

    /// The store (present until the session is dropped).
    pub fn store(&self) -> &Store<Fetched> {
        match &self.store {
            Some(store) => store,
            None => unreachable!("the store is taken only on drop"),
        }
    }

    /// Call before a run; give the mark to [`Session::fetch_missing`] after it.
    pub fn mark(&self) -> Mark {
        Mark(self.store().misses())
    }

    /// Runs `attempt` until a run finishes without a miss, fetching between
    /// runs; returns that run's result.
    pub async fn run<T>(&mut self, mut attempt: impl FnMut(&Store<Fetched>) -> T) -> Result<T, HttpError> {
        loop {
            let mark = self.mark();
            let outcome = attempt(self.store());
            if !self.fetch_missing(mark).await? {
                return Ok(outcome);
            }
        }
    }

    /// After a run begun at `mark`: `Ok(false)` when it missed nothing (its
    /// result stands), `Ok(true)` once what it missed, and what it wants
    /// ahead, is fetched and fed (run again).
    pub async fn fetch_missing(&mut self, mark: Mark) -> Result<bool, HttpError> {
        let store = self.store();
        let plan = store.fetch_plan(self.coalesce_gap_bytes);
        let block_ranges: HashSet<ByteRange> = plan.blocks.iter().map(|(_, range)| *range).collect();
        let mut raw: Vec<ByteRange> = self.fetched.take_missing().into_iter().filter(|range| !block_ranges.contains(range)).collect();
        raw.sort_unstable();
        raw.dedup();
        if store.misses() == mark.0 && raw.is_empty() {
            // Complete; what the run wanted ahead is not needed any more.
            return Ok(false);
        }
        if plan.is_empty() && raw.is_empty() {
            return Err(HttpError::Internal("a run missed bytes but asked for none".into()));
        }
        self.stats.rounds.set(self.stats.rounds.get() + 1);
        self.rounds += 1;
        if self.rounds > self.max_rounds {
            return Err(HttpError::worker_budget("rounds", self.max_rounds, format!("query needs more than {} rounds of reads", self.max_rounds)));
        }
        if js_sys::Date::now() > self.deadline_ms {
            return Err(HttpError::worker_budget("deadline", self.max_time_ms, format!("query exceeded its time limit of {} ms", self.max_time_ms)));
        }
        let raw_merged = coalesce(raw.clone(), self.coalesce_gap_bytes);
        let all: Vec<ByteRange> = plan.ranges.iter().chain(&raw_merged).copied().collect();
        let round_bytes: u64 = all.iter().map(|range| range.length).sum();
        // Compressed blocks never decode smaller: a round larger than the
        // cache cannot be held, so it is refused before it is read.
        if round_bytes > self.cache_bytes {
            return Err(HttpError::worker_budget("cache-bytes", self.cache_bytes, format!("query needs more than the block cache's {} bytes at once", self.cache_bytes)));
        }
        if self.stats.reads.get() + all.len() as u64 > self.max_r2_requests {
            return Err(HttpError::worker_budget("r2-requests", self.max_r2_requests, format!("query needs more than {} requests to storage", self.max_r2_requests)));
        }
        if self.read_bytes + round_bytes > self.max_read_bytes {
            return Err(HttpError::worker_budget("read-bytes", self.max_read_bytes, format!("query needs more than {} bytes read from storage", self.max_read_bytes)));
        }
        self.read_bytes += round_bytes;
        let file = &self.dataset.file;
        let mut bodies = match self.r2.get_ranges(&file.key, &file.etag, &all).await {
            Err(error @ HttpError::Changed(_)) => {
                datasets::forget(&self.dataset.name, &self.dataset.entry.key);
                return Err(error);
            }
            other => other?,
        };
        let raw_bodies = bodies.split_off(plan.ranges.len());
        self.store().feed_plan(&plan, &bodies).map_err(|e| match e {
            ReadError::Format(error) => HttpError::Corrupt(format!("{}: {error}", file.key)),
            other => other.into(),
        })?;
        for range in raw {
            let position = raw_merged.partition_point(|m| m.offset <= range.offset).checked_sub(1);
            let bytes = position.and_then(|p| slice_of(raw_merged[p], &raw_bodies[p], range)).ok_or_else(|| HttpError::Internal(format!("fetched ranges do not cover {range:?}")))?;
            let bytes = Rc::new(bytes.to_vec());
            file.keep(range, &bytes);
            self.fetched.insert(range, bytes);
        }
        Ok(true)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(store) = self.store.take() {
            give_back(Leased { cache: store.into_cache(), lease: self.lease }, self.max_caches);
        }
    }
}
