//! The host loop, sans-IO. After each run over the [`Store`], [`Rounds::step`]
//! says whether the run was complete or which ranges the next round must
//! fetch (everything the run recorded, merged); the host fetches them (in
//! parallel if it can), feeds them, and runs again. `Rounds` also counts the
//! rounds and holds their limit, so every host counts a round in one place.
//! [`run_in_rounds`] is that loop for synchronous hosts (the CLI); an
//! asynchronous host (the Worker) writes the same few lines with `await`.

use super::{BlockKey, ByteRange, Opening, RangeSource, Store, decode_index, open_prefix};
use crate::format::FIRST_READ_BYTES;
use crate::{Header, ReadError, ReadLimit};
use xxhash_rust::xxh3::xxh3_64;

/// Ranges closer than this are fetched as one request by default: a request
/// costs more than 16 KiB of transfer on every store we target.
pub const DEFAULT_GAP_BYTES: u64 = 16 << 10;

/// Rounds of reads a query may take by default: on R2 a round costs tens of
/// milliseconds, so 64 is already seconds of waiting.
pub const DEFAULT_MAX_ROUNDS: u64 = 64;

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

/// The reads of one round, from [`Store::fetch_plan`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchPlan {
    /// The blocks to feed ([`Store::feed`]) and their ranges.
    pub blocks: Vec<(BlockKey, ByteRange)>,
    /// Other ranges to hold ([`Store::hold`]): sections a run read outside
    /// the pieces the store holds (CARD past the first read, SUMMARY, pages).
    pub pieces: Vec<ByteRange>,
    /// What to fetch: all of those ranges sorted and merged, one request each.
    pub ranges: Vec<ByteRange>,
    /// Ranges this close were merged.
    pub(super) gap_bytes: u64,
}

impl FetchPlan {
    /// The blocks and pieces of a plan and their ranges merged (one request
    /// each when closer than `gap_bytes`).
    pub(super) fn new(blocks: Vec<(BlockKey, ByteRange)>, pieces: Vec<ByteRange>, gap_bytes: u64) -> Self {
        let ranges = super::coalesce(blocks.iter().map(|(_, range)| *range).chain(pieces.iter().copied()).collect(), gap_bytes);
        Self { blocks, pieces, ranges, gap_bytes }
    }

    /// The plan without the blocks and pieces whose range `served` says the
    /// host already has (from a cache of its own), the rest merged again.
    pub fn without(&self, served: impl Fn(ByteRange) -> bool) -> Self {
        let blocks = self.blocks.iter().copied().filter(|(_, range)| !served(*range)).collect();
        let pieces = self.pieces.iter().copied().filter(|range| !served(*range)).collect();
        Self::new(blocks, pieces, self.gap_bytes)
    }

    /// The bytes of one of the plan's blocks or pieces in the bodies of its
    /// `ranges` (`bodies[i]` for `ranges[i]`).
    pub fn bytes_of<'a>(&self, bodies: &'a [Vec<u8>], range: ByteRange) -> Result<&'a [u8], ReadError> {
        if bodies.len() != self.ranges.len() {
            return Err(ReadError::Source(format!("{} ranges were asked for, {} came back", self.ranges.len(), bodies.len())));
        }
        let position = self.ranges.partition_point(|merged| merged.offset <= range.offset).checked_sub(1);
        position.and_then(|p| super::slice_of(self.ranges[p], &bodies[p], range)).ok_or_else(|| {
            crate::FormatError::corrupt("file", range.offset, format!("the source returned too few bytes for the {} bytes there: truncated", range.length)).into()
        })
    }

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
        Self { gap_bytes: DEFAULT_GAP_BYTES, max_rounds: DEFAULT_MAX_ROUNDS }
    }
}

/// Where a run started ([`Store::mark`]), to tell afterwards whether it missed something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark(pub(super) u64);

/// What the host does after a run ([`Rounds::step`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum Step {
    /// The run missed nothing: its result is the answer. Nothing to fetch.
    Done,
    /// The run missed something: fetch the plan's `ranges` (one round, in
    /// parallel), give the bytes to [`Store::feed_plan`] (or each block to
    /// [`Store::feed`] and each piece to [`Store::hold`]), and run again.
    Fetch(FetchPlan),
}

/// The rounds of one request: how many so far, and the limit of those that
/// read blocks.
#[derive(Debug, Clone)]
pub struct Rounds {
    options: RoundOptions,
    /// Rounds of the open (a pointer, a first read): a fixed few, not limited.
    open_rounds: u64,
    /// Rounds planned by [`Rounds::step`], at most `options.max_rounds`.
    step_rounds: u64,
}

impl Rounds {
    /// No round yet.
    pub fn new(options: RoundOptions) -> Self {
        Self { options, open_rounds: 0, step_rounds: 0 }
    }

    /// Rounds so far, the open's included.
    pub fn count(&self) -> u64 {
        self.open_rounds + self.step_rounds
    }

    /// Counts a round the host reads to open a file (a pointer, the first
    /// read, the rest of INDEX). Such rounds are few by construction and do
    /// not count against `max_rounds`.
    pub fn count_open_round(&mut self) {
        self.open_rounds += 1;
    }

    /// After a run begun at `mark`: [`Step::Done`] when it missed nothing,
    /// else the plan of the next round, counted. A round whose blocks could
    /// not all be held at once by the store's block cache (blocks never
    /// decode smaller than they are stored) is refused before it is read.
    pub fn step<S: RangeSource>(&mut self, store: &Store<S>, mark: Mark) -> Result<Step, ReadError> {
        let plan = store.fetch_plan(self.options.gap_bytes);
        if store.mark() == mark {
            // Complete; what the run wanted ahead is not needed any more.
            return Ok(Step::Done);
        }
        if plan.is_empty() {
            return Err(ReadError::Source("a run missed bytes but recorded nothing to fetch".into()));
        }
        if self.step_rounds >= self.options.max_rounds {
            return Err(ReadError::Budget { limit: ReadLimit::Rounds, max: self.options.max_rounds });
        }
        self.step_rounds += 1;
        let budget_bytes = store.cache_budget_bytes() as u64;
        if plan.blocks.iter().map(|(_, range)| range.length).sum::<u64>() > budget_bytes {
            return Err(ReadError::Budget { limit: ReadLimit::CacheBytes, max: budget_bytes });
        }
        Ok(Step::Fetch(plan))
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

/// How many bytes of a file's first read a host may keep for other readers
/// (a cache shared between hosts): the header, checked when it was decoded,
/// and the whole sections right after it whose checksums match, up to the
/// first one the read cuts or that fails. A block section the read cuts is
/// left out: its blocks are read like any other.
pub fn checked_prefix_length(header: &Header, prefix: &[u8]) -> usize {
    let mut sections: Vec<_> = header.sections.iter().collect();
    sections.sort_unstable_by_key(|section| section.offset);
    let mut end = header.header_length as usize;
    for section in sections {
        let range = usize::try_from(section.offset).ok().zip(usize::try_from(section.offset.saturating_add(section.length)).ok());
        let Some((start, stop)) = range.filter(|&(start, _)| start == end) else { break };
        match prefix.get(start..stop) {
            Some(bytes) if xxh3_64(bytes) == section.checksum => end = stop,
            _ => break,
        }
    }
    end.min(prefix.len())
}

/// Opens a file through `fetch`: one round for its first 16 KiB, and one
/// more only when INDEX does not fit there. The store holds the first read
/// and reads nothing more by itself (its source is [`Unfetched`]); drive it
/// with [`run_in_rounds`]. The file's real length is not checked here: a host
/// that learns it compares it with `header().file_length`.
pub fn open_in_rounds(
    mut fetch: impl FnMut(&[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError>,
    cache: super::BlockCache,
) -> Result<(Store<Unfetched>, RoundStats), ReadError> {
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
    let store = Store::from_parts(Unfetched, header, index, cache);
    store.hold(ByteRange { offset: 0, length: prefix.len() as u64 }, prefix.into());
    Ok((store, stats))
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
    let mut rounds = Rounds::new(*options);
    let mut stats = RoundStats::default();
    loop {
        let mark = store.mark();
        let outcome = attempt(store);
        match rounds.step(store, mark)? {
            Step::Done => return Ok((outcome, stats)),
            Step::Fetch(plan) => {
                let bodies = fetch(&plan.ranges)?;
                stats.add_round(&plan.ranges, &bodies);
                store.feed_plan(&plan, &bodies)?;
            }
        }
    }
}
