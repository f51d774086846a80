//! What one request used, for the `x-rete-*` headers and the per-request
//! budgets: R2 operations and the bytes they returned (counted where the
//! binding is called, `r2.rs`), Cache API calls and hits (`edge_cache.rs`),
//! the subrequests both make (Workers cap them per request, R2 and Cache API
//! calls alike), and its rounds of reads (core's [`Rounds`], which also holds
//! their limit: the pointer, the open and every round of blocks each count
//! once, here and nowhere else).

use crate::http_error::HttpError;
use rete_core::read::Rounds;
use std::cell::{Cell, RefCell};

/// One request's counters.
#[derive(Debug)]
pub struct Usage {
    /// R2 operations (gets and lists).
    pub reads: Cell<u64>,
    /// Body bytes R2 returned.
    pub bytes: Cell<u64>,
    /// Pieces of files the Cache API served.
    pub cache_hits: Cell<u64>,
    /// R2 operations and Cache API calls (`match`, `put`).
    pub subrequests: Cell<u64>,
    /// Cache API calls alone.
    cache_calls: Cell<u64>,
    /// Subrequests allowed (`MAX_SUBREQUESTS`).
    max_subrequests: u64,
    /// Sequential rounds of reads, and their limit.
    pub rounds: RefCell<Rounds>,
}

impl Usage {
    /// Nothing used yet; at most `rounds`' limit of rounds and `max_subrequests`.
    pub fn new(rounds: Rounds, max_subrequests: u64) -> Self {
        Self { reads: Cell::new(0), bytes: Cell::new(0), cache_hits: Cell::new(0), subrequests: Cell::new(0), cache_calls: Cell::new(0), max_subrequests, rounds: RefCell::new(rounds) }
    }

    /// Subrequests left.
    pub fn subrequests_left(&self) -> u64 {
        self.max_subrequests.saturating_sub(self.subrequests.get())
    }

    /// Cache API calls left: a quarter of the subrequests stays for R2, so
    /// that lookups and writes (one each per block; R2 reads merged ranges)
    /// never take all a later round's reads need.
    pub fn cache_calls_left(&self) -> u64 {
        (self.max_subrequests - self.max_subrequests / 4).saturating_sub(self.cache_calls.get()).min(self.subrequests_left())
    }

    /// Fails with the `subrequests` budget unless `count` subrequests are left.
    pub fn check_subrequests(&self, count: u64) -> Result<(), HttpError> {
        if count > self.subrequests_left() {
            let max = self.max_subrequests;
            return Err(HttpError::worker_budget("subrequests", max, format!("query needs more than {max} subrequests (R2 reads and Cache API calls)")));
        }
        Ok(())
    }

    /// Takes a subrequest for an R2 operation, or fails with the
    /// `subrequests` budget: reading is never skipped, the request ends.
    pub fn take_subrequest(&self) -> Result<(), HttpError> {
        self.check_subrequests(1)?;
        self.subrequests.set(self.subrequests.get() + 1);
        Ok(())
    }

    /// Takes a subrequest for a Cache API call (optional: a lookup or a
    /// write) when one is left for the cache.
    pub fn try_take_cache_call(&self) -> bool {
        let left = self.cache_calls_left() > 0;
        if left {
            self.subrequests.set(self.subrequests.get() + 1);
            self.cache_calls.set(self.cache_calls.get() + 1);
        }
        left
    }

    /// Counts one R2 operation that returned `bytes` body bytes.
    pub fn count_read(&self, bytes: usize) {
        self.reads.set(self.reads.get() + 1);
        self.bytes.set(self.bytes.get() + bytes as u64);
    }

    /// Counts one piece served by the Cache API.
    pub fn count_cache_hit(&self) {
        self.count_cache_hits(1);
    }

    /// Counts pieces served by the Cache API.
    pub fn count_cache_hits(&self, pieces: u64) {
        self.cache_hits.set(self.cache_hits.get() + pieces);
    }

    /// Counts a round of the open (a pointer, a first read).
    pub fn count_open_round(&self) {
        self.rounds.borrow_mut().count_open_round();
    }

    /// Rounds so far.
    pub fn round_count(&self) -> u64 {
        self.rounds.borrow().count()
    }
}
