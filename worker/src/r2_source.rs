//! R2 through the Worker's binding: small whole objects (pointers), ranged
//! reads of a `.rete` pinned by the object's etag, issued concurrently, and
//! listings. Every call is counted for the `x-rete-reads` / `x-rete-bytes`
//! headers. Nothing here decodes a byte of the format.

use crate::http_error::HttpError;
use futures_util::future::join_all;
use rete_core::ByteRange;
use std::cell::Cell;
use std::rc::Rc;
use worker::{Bucket, Conditional, Range};

/// What one request used from R2.
#[derive(Debug, Default)]
pub struct Stats {
    /// R2 requests (gets and lists).
    pub reads: Cell<u64>,
    /// Body bytes received.
    pub bytes: Cell<u64>,
    /// Sequential rounds of block reads.
    pub rounds: Cell<u64>,
}

impl Stats {
    fn count(&self, bytes: usize) {
        self.reads.set(self.reads.get() + 1);
        self.bytes.set(self.bytes.get() + bytes as u64);
    }
}

/// The bucket, counting what the request reads.
#[derive(Clone)]
pub struct R2 {
    bucket: Rc<Bucket>,
    stats: Rc<Stats>,
}

/// The first bytes of an object, with what pins the object.
pub struct Prefix {
    /// The bytes read.
    pub bytes: Vec<u8>,
    /// R2's etag of the object, for `onlyIf` on later reads.
    pub etag: String,
    /// The object's length.
    pub size: u64,
}

fn storage(what: &str, error: worker::Error) -> HttpError {
    HttpError::Storage(format!("R2 {what} failed: {error}"))
}

impl R2 {
    /// Wraps the binding.
    pub fn new(bucket: Bucket, stats: Rc<Stats>) -> Self {
        Self { bucket: Rc::new(bucket), stats }
    }

    /// Counts one sequential round of reads.
    pub fn round(&self) {
        self.stats.rounds.set(self.stats.rounds.get() + 1);
    }

    /// A whole small object (a pointer), `None` when it does not exist.
    /// Objects larger than `max_bytes` are refused unread.
    pub async fn get_small(&self, key: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, HttpError> {
        let object = self.bucket.get(key).execute().await.map_err(|e| storage(&format!("get {key}"), e))?;
        let Some(object) = object else {
            self.stats.count(0);
            return Ok(None);
        };
        if object.size() > max_bytes {
            self.stats.count(0);
            return Err(HttpError::Storage(format!("{key} is {} bytes, more than the {max_bytes} expected of it", object.size())));
        }
        let body = object.body().ok_or_else(|| HttpError::Storage(format!("R2 returned {key} without a body")))?;
        let bytes = body.bytes().await.map_err(|e| storage(&format!("read of {key}"), e))?;
        self.stats.count(bytes.len());
        Ok(Some(bytes))
    }

    /// The first `length` bytes of an object and its etag; `None` when the
    /// object does not exist.
    pub async fn get_prefix(&self, key: &str, length: u64) -> Result<Option<Prefix>, HttpError> {
        let object = self.bucket.get(key).range(Range::Prefix { length }).execute().await.map_err(|e| storage(&format!("get {key}"), e))?;
        let Some(object) = object else {
            self.stats.count(0);
            return Ok(None);
        };
        let (etag, size) = (object.etag(), object.size());
        let body = object.body().ok_or_else(|| HttpError::Storage(format!("R2 returned {key} without a body")))?;
        let bytes = body.bytes().await.map_err(|e| storage(&format!("read of {key}"), e))?;
        self.stats.count(bytes.len());
        Ok(Some(Prefix { bytes, etag, size }))
    }

    /// The bytes of each range of `key`, all requested at once. Every read
    /// is pinned to `etag`: a replaced or deleted object ends the request
    /// with [`HttpError::Changed`] rather than mixing two files.
    pub async fn get_ranges(&self, key: &str, etag: &str, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, HttpError> {
        let reads = ranges.iter().map(|range| self.get_range(key, etag, *range));
        join_all(reads).await.into_iter().collect()
    }

    async fn get_range(&self, key: &str, etag: &str, range: ByteRange) -> Result<Vec<u8>, HttpError> {
        let changed = || HttpError::Changed(format!("{key} changed or disappeared while it was being read; retry"));
        let object = self
            .bucket
            .get(key)
            .range(Range::OffsetWithLength { offset: range.offset, length: range.length })
            .only_if(Conditional { etag_matches: Some(etag.to_owned()), ..Conditional::default() })
            .execute()
            .await
            .map_err(|e| storage(&format!("ranged get of {key}"), e))?;
        let Some(object) = object else {
            self.stats.count(0);
            return Err(changed());
        };
        let Some(body) = object.body() else {
            self.stats.count(0);
            return Err(changed());
        };
        let bytes = body.bytes().await.map_err(|e| storage(&format!("read of {key}"), e))?;
        self.stats.count(bytes.len());
        if bytes.len() as u64 != range.length {
            return Err(HttpError::Storage(format!("R2 returned {} bytes of {key} at {} for a {}-byte range", bytes.len(), range.offset, range.length)));
        }
        Ok(bytes)
    }

    /// The "directories" right under `prefix` (keys up to the next `/`), at
    /// most `max` of them, and whether there were more.
    pub async fn list_prefixes(&self, prefix: &str, max: usize) -> Result<(Vec<String>, bool), HttpError> {
        let mut found = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut list = self.bucket.list().prefix(prefix).delimiter("/");
            if let Some(cursor) = cursor.take() {
                list = list.cursor(cursor);
            }
            let page = list.execute().await.map_err(|e| storage(&format!("list {prefix}"), e))?;
            self.stats.count(0);
            found.extend(page.delimited_prefixes());
            match page.cursor() {
                Some(next) if page.truncated() => {
                    cursor = Some(next);
                    if found.len() >= max {
                        break;
                    }
                }
                _ => break,
            }
        }
        let more = found.len() > max || cursor.is_some();
        found.truncate(max);
        Ok((found, more))
    }
}
