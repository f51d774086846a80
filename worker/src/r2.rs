//! Every call to the R2 binding, in one place: whole small objects
//! (pointers), the first bytes of a `.rete` (which learn its etag), ranges of
//! it pinned by that etag, and listings. Each call takes one of the
//! request's subrequests, is counted in its [`Usage`] and is awaited no later
//! than the request's deadline (a call R2 never answers is a 502, not a
//! request that hangs until the runtime ends it). What R2 answers is checked
//! against what was asked: the length of every body, and the etag a range
//! read was pinned to. Nothing here decodes a byte of the format; the test
//! harness that wraps the binding (tests/worker/r2-faults.js: failures,
//! hangs, short and foreign bodies) sees every read here. The binding itself
//! is behind [`Host`] (`cloudflare.rs` in the Worker).

use crate::host::{Clock, Condition, Host, Object, Span};
use crate::http_error::HttpError;
use crate::usage::Usage;
use futures_util::future::{Either, select};
use rete_core::ByteRange;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

/// The bucket, counting what the request reads.
#[derive(Clone)]
pub struct R2 {
    host: Rc<dyn Host>,
    clock: Arc<dyn Clock>,
    usage: Rc<Usage>,
    deadline_ms: f64,
}

/// A small whole object, or the news that it has not changed.
pub struct Small {
    /// Its bytes; `None` when it still has the etag the reader knew.
    pub bytes: Option<Vec<u8>>,
    /// R2's etag of the object.
    pub etag: String,
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

fn storage(what: &str, error: String) -> HttpError {
    HttpError::Storage(format!("R2 {what} failed: {error}"))
}

/// A body of other than the `length` bytes asked for at `offset` is a 502
/// (a truncated read), never bytes handed on to a decoder.
fn check_length(key: &str, bytes: &[u8], offset: u64, length: u64) -> Result<(), HttpError> {
    if bytes.len() as u64 == length {
        return Ok(());
    }
    Err(HttpError::Storage(format!("R2 returned {} bytes of {key} at {offset} for a {length}-byte read", bytes.len())))
}

impl R2 {
    /// Wraps the host's bucket for a request that ends at `deadline_ms` (`Date.now()`).
    pub fn new(host: Rc<dyn Host>, clock: Arc<dyn Clock>, usage: Rc<Usage>, deadline_ms: f64) -> Self {
        Self { host, clock, usage, deadline_ms }
    }

    /// Awaits one R2 call (`what`), or the request's deadline if that comes first.
    async fn in_time<T>(&self, what: &str, call: impl Future<Output = Result<T, String>>) -> Result<T, HttpError> {
        let left_ms = (self.deadline_ms - self.clock.now_ms()).max(0.0) as u64;
        match select(Box::pin(call), self.host.sleep(left_ms)).await {
            Either::Left((result, _)) => result.map_err(|e| storage(what, e)),
            Either::Right(_) => Err(HttpError::Storage(format!("R2 {what} did not answer within the request's time limit (MAX_TIME_MS)"))),
        }
    }

    /// A whole small object (a pointer) and its etag, `None` when it does
    /// not exist; its bytes are left unread (`bytes: None`) when it still
    /// has the etag `unless_etag` (R2 answers such a conditional get without
    /// a body). Objects larger than `max_bytes` are refused unread.
    pub async fn get_small(&self, key: &str, max_bytes: u64, unless_etag: Option<&str>) -> Result<Option<Small>, HttpError> {
        self.usage.take_subrequest()?;
        let condition = unless_etag.map_or(Condition::Always, |etag| Condition::EtagDoesNotMatch(etag.to_owned()));
        let object = self.in_time(&format!("get {key}"), self.host.get(key, Span::Whole, condition)).await?;
        let Some(Object { etag, size, body }) = object else {
            self.usage.count_read(0);
            return Ok(None);
        };
        if size > max_bytes {
            self.usage.count_read(0);
            return Err(HttpError::Storage(format!("{key} is {size} bytes, more than the {max_bytes} expected of it")));
        }
        let Some(body) = body else {
            self.usage.count_read(0);
            return match unless_etag {
                Some(unchanged) if unchanged == etag => Ok(Some(Small { bytes: None, etag })),
                _ => Err(HttpError::Storage(format!("R2 returned {key} without a body"))),
            };
        };
        let bytes = self.in_time(&format!("read of {key}"), body).await?;
        self.usage.count_read(bytes.len());
        check_length(key, &bytes, 0, size)?;
        Ok(Some(Small { bytes: Some(bytes), etag }))
    }

    /// The first `length` bytes of an object and its etag; `None` when the
    /// object does not exist.
    pub async fn get_prefix(&self, key: &str, length: u64) -> Result<Option<Prefix>, HttpError> {
        self.usage.take_subrequest()?;
        let object = self.in_time(&format!("get {key}"), self.host.get(key, Span::Prefix { length }, Condition::Always)).await?;
        let Some(Object { etag, size, body }) = object else {
            self.usage.count_read(0);
            return Ok(None);
        };
        let body = body.ok_or_else(|| HttpError::Storage(format!("R2 returned {key} without a body")))?;
        let bytes = self.in_time(&format!("read of {key}"), body).await?;
        self.usage.count_read(bytes.len());
        check_length(key, &bytes, 0, length.min(size))?;
        Ok(Some(Prefix { bytes, etag, size }))
    }

    /// One range of `key`, pinned to `etag` when it is known: a deleted
    /// object, or a replaced one, is [`HttpError::Changed`] rather than bytes
    /// of another file, and so is a body of another etag (should `onlyIf`
    /// ever not hold).
    pub async fn get_range(&self, key: &str, etag: Option<&str>, range: ByteRange) -> Result<Vec<u8>, HttpError> {
        let changed = || HttpError::Changed(format!("{key} changed or disappeared while it was being read; retry"));
        self.usage.take_subrequest()?;
        let condition = etag.map_or(Condition::Always, |etag| Condition::EtagMatches(etag.to_owned()));
        let object = self.in_time(&format!("ranged get of {key}"), self.host.get(key, Span::Range(range), condition)).await?;
        let pinned = |object: &Object| etag.is_none_or(|etag| object.etag == etag);
        let Some(body) = object.filter(pinned).and_then(|object| object.body) else {
            self.usage.count_read(0);
            return Err(changed());
        };
        let bytes = self.in_time(&format!("read of {key}"), body).await?;
        self.usage.count_read(bytes.len());
        check_length(key, &bytes, range.offset, range.length)?;
        Ok(bytes)
    }

    /// The "directories" right under `prefix` (keys up to the next `/`), at
    /// most `max` of them, and whether there were more.
    pub async fn list_prefixes(&self, prefix: &str, max: usize) -> Result<(Vec<String>, bool), HttpError> {
        let mut found = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            self.usage.take_subrequest()?;
            let page = self.in_time(&format!("list {prefix}"), self.host.list(prefix, cursor.take())).await?;
            self.usage.count_read(0);
            found.extend(page.prefixes);
            match page.cursor {
                Some(next) if page.truncated => {
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
