//! The host loop, written once for synchronous hosts: run the query, fetch
//! every block the run recorded in one batch (a round), feed them, run again,
//! until a run misses nothing. The core does no I/O here either: the host
//! passes a `fetch` closure that reads a batch of ranges (in parallel if it
//! can). Asynchronous hosts (the Worker) write the same loop with `await`,
//! from [`Store::fetch_plan`] and [`Store::feed_plan`].

use super::{ByteRange, Opening, RangeSource, Store, decode_index, open_prefix};
use crate::format::FIRST_READ_BYTES;
use crate::{ReadError, ReadLimit};

/// Ranges closer than this are fetched as one request by default: a request
/// costs more than 16 KiB of transfer on every store we target.
pub const DEFAULT_GAP_BYTES: u64 = 16 << 10;

/// A source that has nothing yet: every read is [`ReadError::Missing`], so
/// every block comes through [`Store::feed`]. The store of a host that
/// fetches in rounds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unfetched;

impl RangeSource for Unfetched {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        Err(ReadError::Missing(ranges.to_vec()))
    }
}

/// The bytes the open read (the file's first 16 KiB): reads inside them are
/// answered from memory, every other read is [`ReadError::Missing`]. On a
/// file of 16 KiB or less, nothing more is ever fetched.
#[derive(Debug, Clone, Default)]
pub struct FirstRead(Vec<u8>);

impl RangeSource for FirstRead {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        let held = self.0.len() as u64;
        let missing: Vec<ByteRange> = ranges.iter().copied().filter(|r| r.end() > held).collect();
        if !missing.is_empty() {
            return Err(ReadError::Missing(missing));
        }
        self.0.read_ranges(ranges)
    }
}

/// The reads of one round, from [`Store::fetch_plan`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchPlan {
    /// The blocks to feed and their ranges.
    pub blocks: Vec<(super::BlockKey, ByteRange)>,
    /// What to fetch: the blocks' ranges sorted and merged, one request each.
    pub ranges: Vec<ByteRange>,
}

impl FetchPlan {
    /// Whether there is nothing to fetch.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Bytes the plan fetches.
    pub fn bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.length).sum()
    }
}

/// How [`run_in_rounds`] fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundOptions {
    /// Ranges closer than this are merged into one request.
    pub gap_bytes: u64,
    /// Rounds of fetches allowed (not counting the open); past it the query
    /// fails with [`ReadError::Budget`] (`ReadLimit::Rounds`).
    pub max_rounds: u64,
}

impl Default for RoundOptions {
    fn default() -> Self {
        Self { gap_bytes: DEFAULT_GAP_BYTES, max_rounds: 64 }
    }
}

/// What a query cost in reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoundStats {
    /// Sequential rounds of reads (each one batch of parallel requests).
    pub rounds: u64,
    /// Requests (merged ranges).
    pub requests: u64,
    /// Bytes received.
    pub bytes: u64,
}

impl RoundStats {
    fn add_round(&mut self, ranges: &[ByteRange], bodies: &[Vec<u8>]) {
        self.rounds += 1;
        self.requests += ranges.len() as u64;
        self.bytes += bodies.iter().map(|b| b.len() as u64).sum::<u64>();
    }
}

impl std::ops::Add for RoundStats {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self { rounds: self.rounds + other.rounds, requests: self.requests + other.requests, bytes: self.bytes + other.bytes }
    }
}

/// Opens a file through `fetch`: one round for its first 16 KiB, and one
/// more only when INDEX does not fit there. The store reads nothing more by
/// itself (its source is the [`FirstRead`]); drive it with [`run_in_rounds`].
/// The file's real length is not checked here: a host that learns it
/// compares it with `header().file_length`.
pub fn open_in_rounds(
    mut fetch: impl FnMut(&[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError>,
    cache: super::BlockCache,
) -> Result<(Store<FirstRead>, RoundStats), ReadError> {
    let mut stats = RoundStats::default();
    let first = [ByteRange { offset: 0, length: FIRST_READ_BYTES }];
    let bodies = fetch(&first)?;
    stats.add_round(&first, &bodies);
    let prefix = bodies.into_iter().next().unwrap_or_default();
    let (header, index) = match open_prefix(&prefix, None)? {
        Opening::Ready(header, index) => (header, index),
        Opening::NeedIndex(header, range) => {
            let bodies = fetch(&[range])?;
            stats.add_round(&[range], &bodies);
            let index = decode_index(&header, &bodies.into_iter().next().unwrap_or_default())?;
            (header, index)
        }
    };
    Ok((Store::from_parts(FirstRead(prefix), header, index, cache), stats))
}

/// Runs `attempt` until a run misses nothing, fetching what each run
/// recorded in one call to `fetch` (one round) and feeding it in between.
/// Returns the complete run's result and what the rounds cost.
///
/// `attempt` must consume whatever it evaluates (a run is judged complete
/// only once it returns), and its result is thrown away whenever the run
/// missed something. `fetch` gets sorted, merged ranges and returns their
/// bytes in order. The fed blocks stay pinned until the caller's
/// [`Store::release_fed`], so the caller may run the query once more
/// (to stream it) without any read.
pub fn run_in_rounds<S: RangeSource, R>(
    store: &Store<S>,
    options: &RoundOptions,
    mut fetch: impl FnMut(&[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError>,
    mut attempt: impl FnMut(&Store<S>) -> R,
) -> Result<(R, RoundStats), ReadError> {
    let mut stats = RoundStats::default();
    loop {
        let before = store.misses();
        let outcome = attempt(store);
        let plan = store.fetch_plan(options.gap_bytes);
        if store.misses() == before {
            return Ok((outcome, stats));
        }
        if plan.is_empty() {
            return Err(ReadError::Source("a run missed bytes that are not a block of the file; this source cannot be read in rounds".into()));
        }
        if stats.rounds >= options.max_rounds {
            return Err(ReadError::Budget { limit: ReadLimit::Rounds, max: options.max_rounds });
        }
        let bodies = fetch(&plan.ranges)?;
        stats.add_round(&plan.ranges, &bodies);
        store.feed_plan(&plan, &bodies)?;
    }
}
