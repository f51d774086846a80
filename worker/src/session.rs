//! The host loop, written once: a request's view of one dataset (a core
//! [`Store`] over the file's kept pieces and a leased block cache) and the
//! rounds that fill it. A run over the store records what it misses; core's
//! [`Rounds::step`](rete_core::read::Rounds::step) turns that into the next
//! round's ranges (or says the run was complete); the round is read from R2
//! and fed, and the run starts again. Bytes, R2 requests and time are
//! bounded here per request; rounds and decoded blocks by core.

use crate::config::Config;
use crate::datasets::{self, Dataset};
use crate::http::Ctx;
use crate::http_error::HttpError;
use crate::pool::{self, Lease};
use crate::r2_source::R2Source;
use crate::usage::Usage;
use rete_core::read::{FetchPlan, Step, Unfetched};
use rete_core::{ReadError, Store};
use std::rc::Rc;

/// One request's reads of one dataset. Dropping it keeps the sections it
/// read for the next requests and gives the block cache back.
pub struct Session {
    /// `None` only while being dropped.
    store: Option<Store<Unfetched>>,
    lease: Option<Lease>,
    dataset: Dataset,
    source: R2Source,
    usage: Rc<Usage>,
    max_read_bytes: u64,
    max_r2_requests: u64,
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
        let (cache, lease) = pool::take(&terms).await?;
        let file = &dataset.file;
        let store = Store::from_parts(Unfetched, file.header.clone(), file.index.clone(), cache);
        for (range, bytes) in file.kept() {
            store.hold(range, bytes);
        }
        Ok(Self {
            store: Some(store),
            lease: Some(lease),
            source: R2Source::new(ctx.r2.clone(), file.key.clone(), file.etag.clone()),
            dataset,
            usage: Rc::clone(&ctx.usage),
            max_read_bytes: config.max_read_bytes,
            max_r2_requests: config.max_r2_requests,
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

    /// Reads one round's ranges and feeds them, within the request's budgets.
    async fn fetch(&mut self, plan: &FetchPlan) -> Result<(), HttpError> {
        if js_sys::Date::now() > self.deadline_ms {
            return Err(HttpError::worker_budget("deadline", self.max_time_ms, format!("query exceeded its time limit of {} ms", self.max_time_ms)));
        }
        if self.usage.reads.get() + plan.ranges.len() as u64 > self.max_r2_requests {
            return Err(HttpError::worker_budget("r2-requests", self.max_r2_requests, format!("query needs more than {} requests to storage", self.max_r2_requests)));
        }
        if self.read_bytes + plan.bytes() > self.max_read_bytes {
            return Err(HttpError::worker_budget("read-bytes", self.max_read_bytes, format!("query needs more than {} bytes read from storage", self.max_read_bytes)));
        }
        self.read_bytes += plan.bytes();
        let bodies = match self.source.read(&plan.ranges).await {
            Err(error @ HttpError::Changed(_)) => {
                datasets::forget(&self.dataset.name, &self.dataset.entry.key);
                return Err(error);
            }
            other => other?,
        };
        self.store().feed_plan(plan, &bodies).map_err(|e| match e {
            ReadError::Format(error) => HttpError::Corrupt(format!("{}: {error}", self.dataset.file.key)),
            other => other.into(),
        })
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
