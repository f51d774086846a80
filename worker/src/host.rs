//! The seam between the Worker's request handling and its runtime: what a
//! request is and what its answer is, as plain values ([`Request`],
//! [`Response`]), and what the handling needs of the runtime, as two traits:
//! a [`Clock`] (time, the CPU-limit signal) and a [`Host`] (R2 calls, the
//! Cache API, timers, background tasks, the error log). Everything else —
//! routing, negotiation, the preamble, budgets, the rounds of reads and the
//! answers — is the same code whatever implements them: workers-rs in the
//! deployed Worker (`cloudflare.rs`), an in-memory bucket under the fuzzer
//! (`fuzz/src/request.rs`). Nothing here checks what a host returns: the
//! callers (`r2.rs`, `edge_cache.rs`) do, for every host alike.

use crate::http::Body;
use futures_util::future::LocalBoxFuture;
use futures_util::stream::LocalBoxStream;
use rete_core::ByteRange;
use std::sync::Arc;
pub use worker::{Method, Url};

/// Time and CPU, shareable with the evaluator's stop check (`Send + Sync`).
pub trait Clock: Send + Sync {
    /// Milliseconds since the epoch (`Date.now()` in the Worker).
    fn now_ms(&self) -> f64;
    /// The runtime says the request is close to its CPU limit.
    fn near_cpu_limit(&self) -> bool;
}

/// Which bytes of an object a get reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// All of it.
    Whole,
    /// The first `length` bytes (all of a shorter object).
    Prefix {
        /// Bytes asked for.
        length: u64,
    },
    /// One range.
    Range(ByteRange),
}

/// The condition of a get (R2's `onlyIf`): when it fails, the object comes
/// back without a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// None.
    Always,
    /// Only if the object still has this etag.
    EtagMatches(String),
    /// Only if the object no longer has this etag.
    EtagDoesNotMatch(String),
}

/// An object a get found.
pub struct Object {
    /// Its etag.
    pub etag: String,
    /// Its whole length.
    pub size: u64,
    /// Reads the body; `None` when the condition failed.
    pub body: Option<LocalBoxFuture<'static, Result<Vec<u8>, String>>>,
}

/// One page of a delimited listing.
pub struct Listing {
    /// The "directories" under the prefix on this page.
    pub prefixes: Vec<String>,
    /// More pages follow.
    pub truncated: bool,
    /// Where the next page starts.
    pub cursor: Option<String>,
}

/// The runtime's I/O. Errors are the runtime's messages; `r2.rs` and
/// `edge_cache.rs` turn them into answers.
pub trait Host {
    /// A get of the bucket's object `key`; `None` when there is none.
    fn get(&self, key: &str, span: Span, condition: Condition) -> LocalBoxFuture<'_, Result<Option<Object>, String>>;
    /// A page of the bucket's keys under `prefix`, delimited by `/`.
    fn list(&self, prefix: &str, cursor: Option<String>) -> LocalBoxFuture<'_, Result<Listing, String>>;
    /// The bytes the Cache API holds under `key` (a 200 answer), `None` on a miss.
    fn cache_get(&self, key: &str) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, String>>;
    /// Stores bytes in the Cache API once the answer is sent (`waitUntil`).
    fn cache_put_later(&self, key: String, bytes: Vec<u8>);
    /// Resolves after `ms` milliseconds.
    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()>;
    /// Runs a task beside the request (a streamed answer).
    fn spawn(&self, task: LocalBoxFuture<'static, ()>);
    /// Logs an error the client does not see.
    fn log_error(&self, message: &str);
    /// Logs a note (`console.log`).
    fn log(&self, message: &str);
    /// The clock.
    fn clock(&self) -> Arc<dyn Clock>;
}

/// A request body: chunks as they arrive, or why there is none.
pub type RequestBody = Result<LocalBoxStream<'static, Result<Vec<u8>, String>>, String>;

/// A request as the handling sees it.
pub struct Request {
    /// The method.
    pub method: Method,
    /// The URL.
    pub url: Url,
    /// Headers, names in lowercase, repeated ones joined by `, ` (as the Fetch API gives them).
    pub headers: Vec<(String, String)>,
    /// The body (read only by a POST to `/{ds}/sparql`).
    pub body: RequestBody,
}

impl Request {
    /// The value of a header.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.clone())
    }
}

/// An answer: status, every header (CORS and `x-rete-*` included), body
/// (empty for HEAD).
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
}
