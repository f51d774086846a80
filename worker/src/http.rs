//! What every route shares: the request context (config, R2, counters,
//! negotiation inputs), the [`Reply`] a route returns, ETags and
//! `If-None-Match`, and turning a reply into the [`Response`] with the
//! headers every response carries (CORS, `x-rete-*`).

use crate::config::Config;
use crate::conneg::{self, Format};
use crate::edge_cache::EdgeCache;
use crate::host::{Clock, Host, Response};
use crate::http_error::HttpError;
use crate::r2::R2;
use crate::usage::Usage;
use futures_channel::mpsc;
use std::rc::Rc;
use std::sync::Arc;
use worker::{Method, Url};
use xxhash_rust::xxh3::xxh3_64;

/// Headers a browser script may read from a cross-origin response.
const EXPOSED_HEADERS: &str = "ETag, Link, Location, Content-Location, x-rete-reads, x-rete-bytes, x-rete-cache-hits, x-rete-subrequests, x-rete-rounds, x-rete-memory, x-rete-limit, x-rete-warning";

/// One request's context.
pub struct Ctx {
    /// The settings.
    pub config: Config,
    /// The bucket, counted.
    pub r2: R2,
    /// The Cache API, counted.
    pub cache: EdgeCache,
    /// What the request used.
    pub usage: Rc<Usage>,
    /// The request URL.
    pub url: Url,
    /// The request method.
    pub method: Method,
    /// The `Accept` header.
    pub accept: Option<String>,
    /// The `If-None-Match` header.
    pub if_none_match: Option<String>,
    /// When the request must be done (ms since the epoch).
    pub deadline_ms: f64,
    /// The runtime (timers, background tasks, the error log).
    pub host: Rc<dyn Host>,
    /// The runtime's clock.
    pub clock: Arc<dyn Clock>,
}

impl Ctx {
    /// `scheme://host[:port]` of the request, for absolute links.
    pub fn origin(&self) -> String {
        self.url.origin().ascii_serialization()
    }

    /// The value of a query parameter (the last one when repeated).
    pub fn param(&self, name: &str) -> Option<String> {
        self.url.query_pairs().filter(|(key, _)| key == name).map(|(_, value)| value.into_owned()).last()
    }

    /// The format for this request among `offers`: `format=` when given
    /// (400 if it is not on offer), else the `Accept` header (406 if nothing fits).
    pub fn negotiate(&self, format_param: Option<&str>, offers: &[Format]) -> Result<Format, HttpError> {
        if let Some(name) = format_param.filter(|name| !name.is_empty()) {
            return conneg::by_name(name, offers).map_err(HttpError::BadRequest);
        }
        conneg::negotiate(self.accept.as_deref(), offers)
            .ok_or_else(|| HttpError::NotAcceptable { offered: offers.iter().filter_map(|f| f.media_types().first().map(|m| (*m).to_owned())).collect() })
    }

    /// Whether `If-None-Match` names this ETag (or `*`).
    pub fn not_modified(&self, etag: &str) -> bool {
        let Some(header) = &self.if_none_match else { return false };
        header.split(',').map(|tag| tag.trim().trim_start_matches("W/")).any(|tag| tag == "*" || tag == etag)
    }
}

/// A strong ETag: the file's content hash and a hash of what else shapes
/// the body (route, format, query, page…).
pub fn etag(version: &str, parts: &[&str]) -> String {
    let joined = parts.join("\u{0}");
    format!("\"{version}-{:016x}\"", xxh3_64(joined.as_bytes()))
}

/// A response body.
pub enum Body {
    /// None (304, 303, HEAD).
    Empty,
    /// All of it.
    Bytes(Vec<u8>),
    /// Chunks produced while the client reads.
    Stream(mpsc::Receiver<Result<Vec<u8>, worker::Error>>),
}

/// What a route answers.
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Headers besides the common ones.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
}

impl Reply {
    /// 200 with a body in a format.
    pub fn ok(format: Format, bytes: Vec<u8>) -> Self {
        Self::with_type(200, &format.content_type(), Body::Bytes(bytes))
    }

    /// Any status with a content type.
    pub fn with_type(status: u16, content_type: &str, body: Body) -> Self {
        Self { status, headers: vec![("content-type".into(), content_type.to_owned())], body }
    }

    /// 304 for a matching `If-None-Match`.
    pub fn not_modified(etag: &str, max_age_s: u64) -> Self {
        Self { status: 304, headers: Vec::new(), body: Body::Empty }.cacheable(etag, max_age_s)
    }

    /// 303 See Other to `location` (chosen by `Accept`: mark it [`Reply::cacheable`]).
    pub fn see_other(location: &str) -> Self {
        Self { status: 303, headers: vec![("location".into(), location.to_owned())], body: Body::Empty }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// Marks the reply as cacheable under an ETag (content negotiated on `Accept`).
    pub fn cacheable(self, etag: &str, max_age_s: u64) -> Self {
        self.header("etag", etag).header("cache-control", format!("public, max-age={max_age_s}")).header("vary", "Accept")
    }

    /// The reply for an error: its JSON body and headers, never cached.
    pub fn error(error: &HttpError) -> Self {
        let mut body = serde_json::to_vec_pretty(&error.body()).unwrap_or_default();
        body.push(b'\n');
        let mut reply = Self::with_type(error.status(), "application/json", Body::Bytes(body)).header("cache-control", "no-store");
        for (name, value) in error.headers() {
            reply = reply.header(name, value);
        }
        reply
    }

    /// The response: this reply with CORS and the `x-rete-*` counters, no
    /// body for HEAD.
    pub fn finish(self, usage: &Usage, head: bool) -> Response {
        let common = [
            ("access-control-allow-origin", "*".to_owned()),
            ("access-control-expose-headers", EXPOSED_HEADERS.to_owned()),
            ("x-rete-reads", usage.reads.get().to_string()),
            ("x-rete-bytes", usage.bytes.get().to_string()),
            ("x-rete-cache-hits", usage.cache_hits.get().to_string()),
            ("x-rete-subrequests", usage.subrequests.get().to_string()),
            ("x-rete-rounds", usage.round_count().to_string()),
            ("x-rete-memory", memory_bytes().to_string()),
        ];
        // The common headers replace any of the same name (`Headers.set`).
        let mut headers: Vec<(String, String)> = self.headers.into_iter().filter(|(name, _)| !common.iter().any(|(c, _)| name.eq_ignore_ascii_case(c))).collect();
        headers.extend(common.into_iter().map(|(name, value)| (name.to_owned(), value)));
        let body = if head { Body::Empty } else { self.body };
        Response { status: self.status, headers, body }
    }
}

/// The wasm instance's linear memory: it only grows, so it is the peak of
/// everything this isolate has held so far.
pub fn memory_bytes() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        (core::arch::wasm32::memory_size(0) as u64) * 65536
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}
