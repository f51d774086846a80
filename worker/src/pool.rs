//! The isolate's block caches. At most `MAX_CONCURRENT_QUERIES` are out at
//! once, each of `CACHE_BYTES`; a request takes one (or waits for one) and
//! gives it back, so decoded blocks never take more than their product,
//! whatever the concurrency or the file size. A returned cache keeps its
//! blocks (keyed by content hash) for the next request.

use crate::host::{Clock, Host};
use crate::http_error::HttpError;
use rete_core::read::BlockCache;
use std::cell::RefCell;

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

/// A request's hold on one of the pool's caches; give the cache back with
/// [`Lease::give_back`].
pub struct Lease {
    id: u64,
    max_caches: u64,
}

/// How a request takes a cache.
pub struct Terms {
    /// Each cache's budget.
    pub budget_bytes: usize,
    /// Caches out at once at most.
    pub max_caches: u64,
    /// The request's time limit, for stale leases.
    pub max_time_ms: u64,
    /// When the request gives up waiting (ms since the epoch; then 503).
    pub deadline_ms: f64,
}

/// Takes a free cache, or a new one while fewer than `max_caches` are out;
/// else waits for one until the deadline.
pub async fn take(terms: &Terms, host: &dyn Host, clock: &dyn Clock) -> Result<(BlockCache, Lease), HttpError> {
    let max_caches = terms.max_caches.max(1);
    loop {
        let now = clock.now_ms();
        let taken = POOL.with(|pool| {
            let mut pool = pool.borrow_mut();
            pool.leases.retain(|(_, taken_at)| now - taken_at < terms.max_time_ms as f64 + LEASE_GRACE_MS);
            if pool.leases.len() as u64 >= max_caches {
                return None;
            }
            let lease = pool.next_lease;
            pool.next_lease += 1;
            pool.leases.push((lease, now));
            // A changed CACHE_BYTES takes effect as caches come back.
            let cache = pool.free.pop().filter(|c| c.budget_bytes() == terms.budget_bytes).unwrap_or_else(|| BlockCache::new(terms.budget_bytes));
            Some((cache, Lease { id: lease, max_caches }))
        });
        if let Some(taken) = taken {
            return Ok(taken);
        }
        if now > terms.deadline_ms {
            return Err(HttpError::Busy(format!("all {max_caches} query slots of this isolate stayed busy until the time limit; retry")));
        }
        host.sleep(POLL_MS).await;
    }
}

impl Lease {
    /// Ends the lease, returning the cache (its blocks unpinned) to the pool.
    pub fn give_back(self, cache: BlockCache) {
        POOL.with(|pool| {
            let mut pool = pool.borrow_mut();
            pool.leases.retain(|(lease, _)| *lease != self.id);
            if (pool.free.len() as u64) < self.max_caches {
                pool.free.push(cache);
            }
        });
    }
}
