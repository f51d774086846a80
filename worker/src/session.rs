//! The host loop, written once: a request's view of one dataset (a core
//! [`Store`] over the file's kept pieces and a leased block cache) and the
//! rounds that fill it. A run over the store records what it misses; core's
//! [`Rounds::step`](rete_core::read::Rounds::step) turns that into the next
//! round's ranges (or says the run was complete); the round is read (from
//! the Cache API what it holds, from R2 the rest) and fed, and the run starts
//! again. Bytes, subrequests and time are bounded here per request; rounds
//! and decoded blocks by core. Every block read is also kept, sealed, in the
//! isolate's compressed blocks (`compressed_blocks.rs`), the store's source:
//! a later request (or a later run of this one) decodes it from there
//! instead of reading it again.

use crate::compressed_blocks::{self, CompressedBlocks};
use crate::config::Config;
use crate::datasets::{self, Dataset, SeenHere};
use crate::edge_cache::{self, EdgeCache};
use crate::host::Clock;
use crate::http::Ctx;
use crate::http_error::HttpError;
use crate::pool::{self, Lease};
use crate::r2_source::R2Source;
use crate::usage::Usage;
use futures_util::future::join_all;
use rete_core::read::{BlockKey, FetchPlan, Step};
use rete_core::{ByteRange, ReadError, Store};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// One request's reads of one dataset. Dropping it keeps the sections it
/// read for the next requests and gives the block cache back.
pub struct Session {
    /// `None` only while being dropped.
    store: Option<Store<CompressedBlocks>>,
    lease: Option<Lease>,
    dataset: Dataset,
    source: R2Source,
    cache: EdgeCache,
    usage: Rc<Usage>,
    clock: Arc<dyn Clock>,
    max_read_bytes: u64,
    max_time_ms: u64,
    deadline_ms: f64,
    read_bytes: u64,
    /// `COMPRESSED_CACHE_BYTES`.
    compressed_cache_bytes: u64,
}

impl Session {
    /// A session over an opened dataset, holding the pieces of the file the
    /// isolate kept (the first read, sections read by earlier requests).
    pub async fn open(ctx: &Ctx, dataset: Dataset) -> Result<Self, HttpError> {
        let config: &Config = &ctx.config;
        let terms = pool::Terms {
            budget_bytes: usize::try_from(config.cache_bytes).unwrap_or(usize::MAX),
            max_caches: config.max_concurrent_queries,
            max_time_ms: config.max_time_ms,
            deadline_ms: ctx.deadline_ms,
        };
        let (cache, lease) = pool::take(&terms, ctx.host.as_ref(), ctx.clock.as_ref()).await?;
        let file = &dataset.file;
        let store = Store::from_parts(CompressedBlocks::of(file.header.content_hash), file.header.clone(), file.index.clone(), cache);
        for (range, bytes) in file.kept() {
            store.hold(range, bytes);
        }
        if let Some(kinds) = file.literal_kinds() {
            store.know_literal_kinds(kinds);
        }
        Ok(Self {
            store: Some(store),
            lease: Some(lease),
            source: R2Source::new(ctx.r2.clone(), file.key.clone(), file.etag.clone()),
            cache: ctx.cache.clone(),
            dataset,
            usage: Rc::clone(&ctx.usage),
            clock: Arc::clone(&ctx.clock),
            max_read_bytes: config.max_read_bytes,
            max_time_ms: config.max_time_ms,
            deadline_ms: ctx.deadline_ms,
            read_bytes: 0,
            compressed_cache_bytes: config.compressed_cache_bytes,
        })
    }

    /// The store.
    pub fn store(&self) -> &Store<CompressedBlocks> {
        match &self.store {
            Some(store) => store,
            None => unreachable!("the store is taken only on drop"),
        }
    }

    /// The dataset and its pointer.
    pub fn dataset(&self) -> &Dataset {
        &self.dataset
    }

    /// Runs `attempt` until a run misses nothing, reading a round from R2
    /// between runs; returns the complete run's result. `attempt` must
    /// consume what it evaluates: a run is judged once it returns.
    pub async fn run<T>(&mut self, mut attempt: impl AsyncFnMut(&Store<CompressedBlocks>) -> T) -> Result<T, HttpError> {
        loop {
            let mark = self.store().mark();
            let outcome = attempt(self.store()).await;
            let step = self.usage.rounds.borrow_mut().step(self.store(), mark)?;
            match step {
                Step::Done => return Ok(outcome),
                Step::Fetch(plan) => self.fetch(&plan).await?,
                _ => return Err(HttpError::Internal("a step this Worker does not know".into())),
            }
        }
    }

    /// Reads one round and feeds it (unless the request is past its time
    /// or near its CPU limit: a 422 naming it): the round's blocks and
    /// sections from its bundle in the Cache API when an isolate of the
    /// location made the same round before (one call), else each from the
    /// Cache API when it holds it, the rest from R2 in merged ranges; the
    /// whole round goes to the Cache API as its bundle (unless it came whole
    /// from there), then what R2 gave piece by piece, once checked (a block
    /// by its feed, a section against the section table). Cache API calls and
    /// R2 reads share the request's subrequests (the cache at most half):
    /// lookups and writes are left out when none is left for them, a read
    /// from R2 never (422 past the budget).
    async fn fetch(&mut self, plan: &FetchPlan) -> Result<(), HttpError> {
        if self.clock.near_cpu_limit() {
            return Err(HttpError::cpu_limit());
        }
        if self.clock.now_ms() > self.deadline_ms {
            return Err(HttpError::worker_budget("deadline", self.max_time_ms, format!("query exceeded its time limit of {} ms", self.max_time_ms)));
        }
        // Blocks a run only wanted ahead (speculation) may be kept already:
        // decoded from there when a run needs them, not read.
        let file = self.store().header().content_hash;
        let plan = &plan.without(|range| compressed_blocks::holds(file, range));
        if self.read_bytes + plan.bytes() > self.max_read_bytes {
            return Err(HttpError::worker_budget("read-bytes", self.max_read_bytes, format!("query needs more than {} bytes read from storage", self.max_read_bytes)));
        }
        self.read_bytes += plan.bytes();
        let shared = self.shared_pieces(plan);
        let bundle_key = (shared.len() >= 2).then(|| edge_cache::bundle_key(&self.dataset.entry.version, &shared.iter().map(|&(_, range)| range).collect::<Vec<_>>()));
        let mut served = HashMap::new();
        let mut bundle_served = false;
        // A round's bundle is looked up unless the location is known not to
        // have seen the file; when nobody asked yet, a bundle found answers
        // that too (an isolate there read the file), one call instead of two.
        if let Some(key) = bundle_key.as_ref().filter(|_| self.dataset.seen_here != SeenHere::No) {
            served = self.feed_from_bundle(key, &shared).await?;
            bundle_served = served.len() == shared.len();
            if !served.is_empty() && self.dataset.seen_here == SeenHere::Unasked {
                self.dataset.seen_here = datasets::seen(&self.dataset);
            }
        }
        if self.dataset.seen_here == SeenHere::Unasked {
            self.dataset.seen_here = datasets::ask_seen_here(&self.cache, &self.usage, &self.dataset, plan.ranges.len() as u64).await;
        }
        if served.len() < shared.len() {
            let rest: Vec<_> = shared.iter().copied().filter(|(_, range)| !served.contains_key(range)).collect();
            served.extend(self.feed_from_cache(&rest, plan.ranges.len() as u64).await?);
        }
        let rest = plan.without(|range| served.contains_key(&range));
        let mut bodies = Vec::new();
        if !rest.ranges.is_empty() {
            // All of a round or none of it: a request over budget ends before reading.
            self.usage.check_subrequests(rest.ranges.len() as u64)?;
            bodies = match self.source.read(&rest.ranges).await {
                Err(error @ HttpError::Changed(_)) => {
                    datasets::forget(&self.dataset.name, &self.dataset.entry.key);
                    return Err(error);
                }
                other => other?,
            };
        }
        // What R2 gave, checked (a block by its feed, a section against the
        // section table), in the plan's order.
        let mut checked = Vec::new();
        for &(key, range) in &rest.blocks {
            let bytes = rest.bytes_of(&bodies, range)?;
            self.feed_block(key, range, bytes).map_err(|e| self.read_error(e))?;
            checked.push((range, bytes));
        }
        for &range in &rest.pieces {
            let bytes = rest.bytes_of(&bodies, range)?;
            self.store().hold(range, bytes.into());
            if self.store().is_checked_section(range, bytes) {
                checked.push((range, bytes));
            }
        }
        // The round as one bundle first, unless the Cache API served it whole
        // (a missing or damaged bundle is written again): the next isolate
        // asking this round then makes one call, and on the Free plan's 50
        // subrequests a round of many pieces spends the cache's share on its
        // bundle before the pieces, whose writes are the ones left out.
        if let Some(key) = bundle_key.filter(|_| !bundle_served) {
            let found = |range: ByteRange| served.get(&range).map(Vec::as_slice).or_else(|| checked.iter().find(|(r, _)| *r == range).map(|&(_, bytes)| bytes));
            if let Some(pieces) = shared.iter().map(|&(_, range)| found(range)).collect::<Option<Vec<&[u8]>>>() {
                self.cache.put_later(key, pieces.concat());
            }
        }
        // Then each piece R2 gave, for other queries that share it.
        for (range, bytes) in checked {
            self.keep_in_cache(range, bytes);
        }
        Ok(())
    }

    /// The pieces of a round the Cache API may hold: its blocks, then its
    /// sections (other pieces are not shared), in the plan's order.
    fn shared_pieces(&self, plan: &FetchPlan) -> Vec<(Option<BlockKey>, ByteRange)> {
        let store = self.store();
        let blocks = plan.blocks.iter().map(|&(key, range)| (Some(key), range));
        let sections = plan.pieces.iter().filter(|range| store.is_section(**range)).map(|&range| (None, range));
        blocks.chain(sections).collect()
    }

    /// Feeds a block's checked bytes: kept in the isolate's compressed
    /// blocks when they fit there, and then decoded blocks the request's
    /// cache evicts are decoded again from there (a scan may touch more than
    /// `CACHE_BYTES`); else pinned in the cache for the request, as before
    /// there was a tier (`COMPRESSED_CACHE_BYTES` = 0).
    fn feed_block(&self, key: BlockKey, range: ByteRange, bytes: &[u8]) -> Result<(), ReadError> {
        let store = self.store();
        if !compressed_blocks::fits(self.compressed_cache_bytes, range.length) {
            return store.feed(key, bytes);
        }
        store.feed_evictable(key, bytes)?;
        compressed_blocks::keep(self.compressed_cache_bytes, store.header().content_hash, range, bytes);
        Ok(())
    }

    /// Feeds one piece the Cache API gave; `false` when it fails its check
    /// (then left to R2).
    fn feed_cached(&self, key: Option<BlockKey>, range: ByteRange, bytes: &[u8]) -> Result<bool, HttpError> {
        let store = self.store();
        Ok(match key {
            Some(key) => match self.feed_block(key, range, bytes) {
                Ok(()) => true,
                Err(ReadError::Format(_)) => false,
                Err(other) => return Err(self.read_error(other)),
            },
            None if store.is_checked_section(range, bytes) => {
                store.hold(range, bytes.into());
                true
            }
            None => false,
        })
    }

    /// Feeds a round's pieces from its bundle when the location holds it (an
    /// isolate there made the same round): one Cache API call. Returns the
    /// pieces served, with their bytes; none when the bundle is missing or
    /// not the length its key names.
    async fn feed_from_bundle(&self, key: &str, shared: &[(Option<BlockKey>, ByteRange)]) -> Result<HashMap<ByteRange, Vec<u8>>, HttpError> {
        let mut served = HashMap::new();
        let Some(bundle) = self.cache.get(key).await else { return Ok(served) };
        if bundle.len() as u64 != shared.iter().map(|(_, range)| range.length).sum::<u64>() {
            return Ok(served);
        }
        let mut rest = bundle.as_slice();
        for &(key, range) in shared {
            let Some((bytes, after)) = rest.split_at_checked(usize::try_from(range.length).unwrap_or(usize::MAX)) else { break };
            rest = after;
            if self.feed_cached(key, range, bytes)? {
                served.insert(range, bytes.to_vec());
            }
        }
        // The call counted one hit: the pieces it served are the hits.
        self.usage.count_cache_hits((served.len() as u64).saturating_sub(1));
        Ok(served)
    }

    /// Feeds what the Cache API holds of `wanted`, pieces of a round of
    /// `reads` ranges (as many as the subrequests left for the cache allow,
    /// leaving enough for the round's R2 reads; none when the location has
    /// not seen the file, which the first round asks when not known yet);
    /// returns the pieces it served, with their bytes. An entry that fails
    /// its check is left to R2.
    async fn feed_from_cache(&self, wanted: &[(Option<BlockKey>, ByteRange)], reads: u64) -> Result<HashMap<ByteRange, Vec<u8>>, HttpError> {
        let mut served = HashMap::new();
        if self.dataset.seen_here != SeenHere::Yes {
            return Ok(served);
        }
        let affordable = self.usage.cache_calls_left().min(self.usage.subrequests_left().saturating_sub(reads));
        let wanted = &wanted[..wanted.len().min(usize::try_from(affordable).unwrap_or(usize::MAX))];
        let version = &self.dataset.entry.version;
        let found = join_all(wanted.iter().map(|&(key, range)| async move { (key, range, self.cache.get(&edge_cache::key(version, range)).await) })).await;
        for (key, range, bytes) in found {
            let Some(bytes) = bytes else { continue };
            if self.feed_cached(key, range, &bytes)? {
                served.insert(range, bytes);
            }
        }
        Ok(served)
    }

    /// Stores checked bytes in the Cache API for the next isolates.
    fn keep_in_cache(&self, range: ByteRange, bytes: &[u8]) {
        self.cache.put_later(edge_cache::key(&self.dataset.entry.version, range), bytes.to_vec());
    }

    /// A read error of this file as an HTTP error (corrupt bytes name the object).
    fn read_error(&self, error: ReadError) -> HttpError {
        match error {
            ReadError::Format(error) => HttpError::Corrupt(format!("{}: {error}", self.dataset.file.key)),
            other => other.into(),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let (Some(store), Some(lease)) = (self.store.take(), self.lease.take()) {
            self.dataset.file.keep(store.held());
            self.dataset.file.keep_literal_kinds(store.known_literal_kinds());
            lease.give_back(store.into_cache());
        }
    }
}
