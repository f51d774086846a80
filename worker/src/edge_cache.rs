//! Pieces of `.rete` files in the Workers Cache API (`caches.default`),
//! shared by every isolate of a location: the first read of a file, its
//! blocks and its sections, each keyed by the file's content hash and its
//! byte range, and each round of two pieces or more also as one bundle
//! (`session.rs`): a new isolate repeating a query makes one Cache API call
//! a round instead of one a piece. A key names bytes that never change, so an entry is never
//! stale; entries are written only after their bytes were checked (a block
//! against its checksum, a section against the section table's, the first
//! read up to its last checked section), and written without delaying the
//! answer (`waitUntil`). Locally (`wrangler dev`, Miniflare) this is
//! Miniflare's cache, persisted with the rest of `.wrangler/state`. On
//! Cloudflare it works on a custom domain or route, not on `*.workers.dev`
//! (README "Deploy to Cloudflare").

use crate::host::Host;
use crate::usage::Usage;
use rete_core::ByteRange;
use std::rc::Rc;
use xxhash_rust::xxh3::xxh3_64;

/// Where cache keys live: never fetched, only a name space for the keys.
const KEY_ORIGIN: &str = "https://rete-blocks.invalid";

/// The key of a range of the file whose content hash is `version`.
pub fn key(version: &str, range: ByteRange) -> String {
    format!("{KEY_ORIGIN}/{version}/{}-{}", range.offset, range.length)
}

/// The key of a round's bundle: the pieces of the file whose content hash is
/// `version` at `ranges` (in that order), end to end in one entry. Named by a
/// hash of the ranges: the same query on a new isolate asks the same rounds,
/// and a bundle that is not what its key names fails its length or its
/// pieces' checks, like any entry.
pub fn bundle_key(version: &str, ranges: &[ByteRange]) -> String {
    let listed: Vec<u8> = ranges.iter().flat_map(|r| r.offset.to_le_bytes().into_iter().chain(r.length.to_le_bytes())).collect();
    let bytes: u64 = ranges.iter().map(|r| r.length).sum();
    format!("{KEY_ORIGIN}/{version}/round-{:016x}-{}-{bytes}", xxh3_64(&listed), ranges.len())
}

/// The Cache API for one request: each call takes one of the request's
/// subrequests, and is left out when none is left for the cache (the bytes
/// come from R2, or are not shared).
#[derive(Clone)]
pub struct EdgeCache {
    usage: Rc<Usage>,
    host: Rc<dyn Host>,
}

impl EdgeCache {
    /// The cache of a request whose counters are `usage`, through the host's Cache API.
    pub fn new(usage: Rc<Usage>, host: Rc<dyn Host>) -> Self {
        Self { usage, host }
    }

    /// The bytes stored under `key`, `None` on a miss (the caller checks
    /// them, as it checks what R2 returns). A failing cache is a miss: the
    /// bytes are read from R2 instead.
    pub async fn get(&self, key: &str) -> Option<Vec<u8>> {
        if !self.usage.try_take_cache_call() {
            return None;
        }
        let bytes = match self.host.cache_get(key).await {
            Ok(bytes) => bytes?,
            Err(error) => {
                self.host.log_error(&format!("cache match {key}: {error}"));
                return None;
            }
        };
        self.usage.count_cache_hit();
        Some(bytes)
    }

    /// Stores checked bytes under `key` after the response is sent, when a
    /// subrequest is left for it (storing is optional, reading is not).
    pub fn put_later(&self, key: String, bytes: Vec<u8>) {
        if self.usage.try_take_cache_call() {
            self.host.cache_put_later(key, bytes);
        }
    }
}
