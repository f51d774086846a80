//! Pieces of `.rete` files in the Workers Cache API (`caches.default`),
//! shared by every isolate of a location: the first read of a file, its
//! blocks and its sections, each keyed by the file's content hash and its
//! byte range. A key names bytes that never change, so an entry is never
//! stale; entries are written only after their bytes were checked (a block
//! against its checksum, a section against the section table's, the first
//! read up to its last checked section), and written without delaying the
//! answer (`waitUntil`). Locally (`wrangler dev`, Miniflare) this is
//! Miniflare's cache, persisted with the rest of `.wrangler/state`. On
//! Cloudflare it works on a custom domain or route, not on `*.workers.dev`
//! (README "Deploy to Cloudflare").

use crate::usage::Usage;
use rete_core::ByteRange;
use std::rc::Rc;
use worker::{Cache, Response};

/// Where cache keys live: never fetched, only a name space for the keys.
const KEY_ORIGIN: &str = "https://rete-blocks.invalid";

/// Entries are immutable: a year, the longest the Cache API is told.
const MAX_AGE_S: u64 = 365 * 24 * 3600;

/// The key of a range of the file whose content hash is `version`.
pub fn key(version: &str, range: ByteRange) -> String {
    format!("{KEY_ORIGIN}/{version}/{}-{}", range.offset, range.length)
}

/// The Cache API for one request: each call takes one of the request's
/// subrequests, and is left out when none is left for the cache (the bytes
/// come from R2, or are not shared).
#[derive(Clone)]
pub struct EdgeCache {
    usage: Rc<Usage>,
    context: Rc<worker::Context>,
}

impl EdgeCache {
    /// The cache of a request whose counters are `usage` and whose late work
    /// `context` waits for.
    pub fn new(usage: Rc<Usage>, context: Rc<worker::Context>) -> Self {
        Self { usage, context }
    }

    /// The bytes stored under `key`, `None` on a miss (the caller checks
    /// them, as it checks what R2 returns). A failing cache is a miss: the
    /// bytes are read from R2 instead.
    pub async fn get(&self, key: &str) -> Option<Vec<u8>> {
        if !self.usage.try_take_cache_call() {
            return None;
        }
        let mut response = match Cache::default().get(key, false).await {
            Ok(Some(response)) if response.status_code() == 200 => response,
            Ok(_) => return None,
            Err(error) => {
                worker::console_error!("cache match {key}: {error}");
                return None;
            }
        };
        let bytes = response.bytes().await.ok()?;
        self.usage.count_cache_hit();
        Some(bytes)
    }

    /// Stores checked bytes under `key` after the response is sent, when a
    /// subrequest is left for it (storing is optional, reading is not).
    pub fn put_later(&self, key: String, bytes: Vec<u8>) {
        if !self.usage.try_take_cache_call() {
            return;
        }
        self.context.wait_until(async move {
            let stored = async {
                let mut response = Response::from_bytes(bytes)?;
                response.headers_mut().set("cache-control", &format!("public, max-age={MAX_AGE_S}, immutable"))?;
                response.headers_mut().set("content-type", "application/octet-stream")?;
                Cache::default().put(key.as_str(), response).await
            };
            if let Err(error) = stored.await {
                worker::console_error!("cache put {key}: {error}");
            }
        });
    }
}
