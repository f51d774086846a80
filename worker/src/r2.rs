//! Every call to the R2 binding, in one place: whole small objects
//! (pointers), the first bytes of a `.rete` (which learn its etag), ranges of
//! it pinned by that etag, and listings. Each call takes one of the
//! request's subrequests and is counted in its [`Usage`]. Nothing here decodes a byte of the format; a test
//! harness that wraps the binding (latency, faults) sees every read here.

use crate::http_error::HttpError;
use crate::usage::Usage;
use rete_core::ByteRange;
use std::rc::Rc;
use worker::{Bucket, Conditional, Range};

/// The bucket, counting what the request reads.
#[derive(Clone)]
pub struct R2 {
    bucket: Rc<Bucket>,
    usage: Rc<Usage>,
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
    pub fn new(bucket: Bucket, usage: Rc<Usage>) -> Self {
        Self { bucket: Rc::new(bucket), usage }
    }

    /// A whole small object (a pointer), `None` when it does not exist.
    /// Objects larger than `max_bytes` are refused unread.
    pub async fn get_small(&self, key: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, HttpError> {
        self.usage.take_subrequest()?;
        let object = self.bucket.get(key).execute().await.map_err(|e| storage(&format!("get {key}"), e))?;
        let Some(object) = object else {
            self.usage.count_read(0);
            return Ok(None);
        };
        if object.size() > max_bytes {
            self.usage.count_read(0);
            return Err(HttpError::Storage(format!("{key} is {} bytes, more than the {max_bytes} expected of it", object.size())));
        }
        let body = object.body().ok_or_else(|| HttpError::Storage(format!("R2 returned {key} without a body")))?;
        let bytes = body.bytes().await.map_err(|e| storage(&format!("read of {key}"), e))?;
        self.usage.count_read(bytes.len());
        Ok(Some(bytes))
    }

    /// The first `length` bytes of an object and its etag; `None` when the
    /// object does not exist.
    pub async fn get_prefix(&self, key: &str, length: u64) -> Result<Option<Prefix>, HttpError> {
        self.usage.take_subrequest()?;
        let object = self.bucket.get(key).range(Range::Prefix { length }).execute().await.map_err(|e| storage(&format!("get {key}"), e))?;
        let Some(object) = object else {
            self.usage.count_read(0);
            return Ok(None);
        };
        let (etag, size) = (object.etag(), object.size());
        let body = object.body().ok_or_else(|| HttpError::Storage(format!("R2 returned {key} without a body")))?;
        let bytes = body.bytes().await.map_err(|e| storage(&format!("read of {key}"), e))?;
        self.usage.count_read(bytes.len());
        Ok(Some(Prefix { bytes, etag, size }))
    }

    /// One range of `key`, pinned to `etag` when it is known: a deleted
    /// object, or a replaced one, is [`HttpError::Changed`] rather than bytes
    /// of another file.
    pub async fn get_range(&self, key: &str, etag: Option<&str>, range: ByteRange) -> Result<Vec<u8>, HttpError> {
        let changed = || HttpError::Changed(format!("{key} changed or disappeared while it was being read; retry"));
        self.usage.take_subrequest()?;
        let mut get = self.bucket.get(key).range(Range::OffsetWithLength { offset: range.offset, length: range.length });
        if let Some(etag) = etag {
            get = get.only_if(Conditional { etag_matches: Some(etag.to_owned()), ..Conditional::default() });
        }
        let object = get.execute().await.map_err(|e| storage(&format!("ranged get of {key}"), e))?;
        let Some(body) = object.as_ref().and_then(|object| object.body()) else {
            self.usage.count_read(0);
            return Err(changed());
        };
        let bytes = body.bytes().await.map_err(|e| storage(&format!("read of {key}"), e))?;
        self.usage.count_read(bytes.len());
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
            self.usage.take_subrequest()?;
            let mut list = self.bucket.list().prefix(prefix).delimiter("/");
            if let Some(cursor) = cursor.take() {
                list = list.cursor(cursor);
            }
            let page = list.execute().await.map_err(|e| storage(&format!("list {prefix}"), e))?;
            self.usage.count_read(0);
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
