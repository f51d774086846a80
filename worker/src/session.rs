//! The host loop, written once: a request's view of one dataset (a core
//! [`Store`] over the file's kept pieces and a leased block cache) and the
//! rounds that fill it. A run over the store records what it misses; core's
//! [`Rounds::step`](rete_core::read::Rounds::step) turns that into the next
//! round's ranges (or says the run was complete); the round is read (from
//! the Cache API what it holds, from R2 the rest) and fed, and the run starts
//! again. Bytes, subrequests and time are bounded here per request; rounds
//! and decoded blocks by core.

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
use rete_core::read::{BlockKey, FetchPlan, Step, Unfetched};
use rete_core::{ByteRange, ReadError, Store};
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

/// One request's reads of one dataset. Dropping it keeps the sections it
/// read for the next requests and gives the block cache back.
pub struct Session {
    /// `None` only while being dropped.
    store: Option<Store<Unfetched>>,
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
        let store = Store::from_parts(Unfetched, file.header.clone(), file.index.clone(), cache);
        for (range, bytes) in file.kept() {
            store.hold(range, bytes);
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
        })
    }

    /// The store.
    pub fn store(&self) -> &Store<Unfetched> {
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
    pub async fn run<T>(&mut self, mut attempt: impl AsyncFnMut(&Store<Unfetched>) -> T) -> Result<T, HttpError> {
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
    /// or near its CPU limit: a 422 naming it): each block and section from the Cache
    /// API when it holds it, the rest from R2 in merged ranges; what R2 gave
    /// goes to the Cache API for the next isolates once checked (a block by
    /// its feed, a section against the section table). Cache API calls and
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
        if self.read_bytes + plan.bytes() > self.max_read_bytes {
            return Err(HttpError::worker_budget("read-bytes", self.max_read_bytes, format!("query needs more than {} bytes read from storage", self.max_read_bytes)));
        }
        self.read_bytes += plan.bytes();
        if self.dataset.seen_here == SeenHere::Unasked {
            self.dataset.seen_here = datasets::ask_seen_here(&self.cache, &self.usage, &self.dataset, plan.ranges.len() as u64).await;
        }
        let served = self.feed_from_cache(plan).await?;
        let rest = plan.without(|range| served.contains(&range));
        if rest.ranges.is_empty() {
            return Ok(());
        }
        // All of a round or none of it: a request over budget ends before reading.
        self.usage.check_subrequests(rest.ranges.len() as u64)?;
        let bodies = match self.source.read(&rest.ranges).await {
            Err(error @ HttpError::Changed(_)) => {
                datasets::forget(&self.dataset.name, &self.dataset.entry.key);
                return Err(error);
            }
            other => other?,
        };
        for &(key, range) in &rest.blocks {
            let bytes = rest.bytes_of(&bodies, range)?;
            self.store().feed(key, bytes).map_err(|e| self.read_error(e))?;
            self.keep_in_cache(range, bytes);
        }
        for &range in &rest.pieces {
            let bytes = rest.bytes_of(&bodies, range)?;
            self.store().hold(range, bytes.into());
            if self.store().is_checked_section(range, bytes) {
                self.keep_in_cache(range, bytes);
            }
        }
        Ok(())
    }

    /// Feeds what the Cache API holds of a round's blocks and sections (as
    /// many as the subrequests left for the cache allow, leaving enough for
    /// the round's R2 reads; none when the location has not seen the file,
    /// which the first round asks when not known yet); returns the ranges it
    /// served. An entry that fails its check is left to R2.
    async fn feed_from_cache(&self, plan: &FetchPlan) -> Result<HashSet<ByteRange>, HttpError> {
        let mut served = HashSet::new();
        if self.dataset.seen_here != SeenHere::Yes {
            return Ok(served);
        }
        let store = self.store();
        let blocks = plan.blocks.iter().map(|&(key, range)| (Some(key), range));
        let sections = plan.pieces.iter().filter(|range| store.is_section(**range)).map(|&range| (None, range));
        let affordable = self.usage.cache_calls_left().min(self.usage.subrequests_left().saturating_sub(plan.ranges.len() as u64));
        let wanted: Vec<(Option<BlockKey>, ByteRange)> = blocks.chain(sections).take(usize::try_from(affordable).unwrap_or(usize::MAX)).collect();
        let version = &self.dataset.entry.version;
        let found = join_all(wanted.iter().map(|&(key, range)| async move { (key, range, self.cache.get(&edge_cache::key(version, range)).await) })).await;
        for (key, range, bytes) in found {
            let Some(bytes) = bytes else { continue };
            let checked = match key {
                Some(key) => match store.feed(key, &bytes) {
                    Ok(()) => true,
                    Err(ReadError::Format(_)) => false,
                    Err(other) => return Err(self.read_error(other)),
                },
                None if store.is_checked_section(range, &bytes) => {
                    store.hold(range, bytes.into());
                    true
                }
                None => false,
            };
            if checked {
                served.insert(range);
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
            lease.give_back(store.into_cache());
        }
    }
}
