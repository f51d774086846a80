//! The Worker's side of the seam on Cloudflare (`host.rs`): the runtime's
//! request as a [`Request`], a [`Response`] as a workers-rs one, and the
//! runtime the handling asks for — the R2 binding, the Cache API, timers,
//! `waitUntil`, `spawn_local`, `console.error`, `Date.now()` and the
//! CPU-limit signal — with nothing decided here: every check of what R2 or
//! the cache returns is in `r2.rs` and `edge_cache.rs`, for every host alike.

use crate::host::{Clock, Condition, Host, Listing, Object, Request, Response, Span};
use crate::http::Body;
use crate::http_error::HttpError;
use futures_util::future::LocalBoxFuture;
use futures_util::{StreamExt, TryStreamExt};
use js_sys::Uint8Array;
use js_sys::futures::JsFuture;
use std::sync::Arc;
use std::time::Duration;
use wasm_bindgen::{JsCast, JsValue};
use worker::worker_sys::ext::CacheStorageExt;
use worker::{Bucket, Cache, Conditional, Delay, Env, Headers, Method, Range, ResponseBuilder, Url, web_sys};

/// Entries are immutable: a year, the longest the Cache API is told.
const MAX_AGE_S: u64 = 365 * 24 * 3600;

/// The Workers Cache API's default cache (`caches.default`).
fn default_cache() -> Result<web_sys::Cache, String> {
    let caches = js_sys::global().unchecked_into::<web_sys::WorkerGlobalScope>().caches().map_err(js_error)?;
    Ok(caches.default())
}

/// A JavaScript exception as text.
fn js_error(error: JsValue) -> String {
    worker::Error::from(error).to_string()
}

/// `Date.now()` and `is_near_cpu_limit`.
struct Runtime;

impl Clock for Runtime {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    fn near_cpu_limit(&self) -> bool {
        worker::signal::is_near_cpu_limit()
    }
}

/// The bindings of one request.
pub struct Cloudflare {
    bucket: Bucket,
    context: worker::Context,
}

impl Cloudflare {
    /// The request's bindings; a configuration error when `BUCKET` is missing.
    pub fn new(env: &Env, context: worker::Context) -> Result<Self, HttpError> {
        let bucket = env.bucket("BUCKET").map_err(|e| HttpError::Config(format!("no R2 binding named BUCKET ({e}); see wrangler.toml")))?;
        Ok(Self { bucket, context })
    }
}

/// The runtime's request as the handling's; the body is taken only for a
/// POST, the one request whose body is read. Read from the `web_sys`
/// request itself: workers-rs' `Request` reads `request.cf` on every
/// request (an object workerd builds from JSON, which nothing here reads)
/// and the URL twice (docs/BENCHMARK.md "Session 21: the per-request
/// floor"); a POST's body is read through it.
pub fn request(req: web_sys::Request) -> Result<Request, HttpError> {
    let url = req.url();
    let url = Url::parse(&url).map_err(|e| HttpError::BadRequest(format!("unreadable request URL: failed to parse Url from {e}: {url}")))?;
    let method = Method::from(req.method());
    let headers = Headers(req.headers()).entries().collect();
    let body = match method {
        Method::Post => worker::Request::from(req).stream().map(|stream| stream.map_err(|e| e.to_string()).boxed_local()).map_err(|e| e.to_string()),
        _ => Err("no body for request".into()),
    };
    Ok(Request { method, url, headers, body })
}

/// The handling's response as a workers-rs one.
pub fn response(response: Response) -> worker::Result<worker::Response> {
    let headers = Headers::new();
    for (name, value) in &response.headers {
        headers.append(name, value)?;
    }
    let builder = ResponseBuilder::new().with_status(response.status).with_headers(headers);
    Ok(match response.body {
        Body::Empty => builder.empty(),
        Body::Bytes(bytes) => builder.fixed(bytes),
        Body::Stream(chunks) => builder.from_stream(chunks)?,
    })
}

/// An R2 object: its body read only when asked (it is its own call, with its own deadline).
fn object(object: worker::Object) -> Object {
    let (etag, size) = (object.etag(), object.size());
    let has_body = object.body().is_some();
    let body: Option<LocalBoxFuture<'static, Result<Vec<u8>, String>>> = has_body.then(|| {
        Box::pin(async move {
            match object.body() {
                Some(body) => body.bytes().await.map_err(|e| e.to_string()),
                None => Err("the object has no body".into()),
            }
        }) as LocalBoxFuture<'static, _>
    });
    Object { etag, size, body }
}

impl Host for Cloudflare {
    fn get(&self, key: &str, span: Span, condition: Condition) -> LocalBoxFuture<'_, Result<Option<Object>, String>> {
        let mut get = self.bucket.get(key);
        get = match span {
            Span::Whole => get,
            Span::Prefix { length } => get.range(Range::Prefix { length }),
            Span::Range(range) => get.range(Range::OffsetWithLength { offset: range.offset, length: range.length }),
        };
        get = match condition {
            Condition::Always => get,
            Condition::EtagMatches(etag) => get.only_if(Conditional { etag_matches: Some(etag), ..Conditional::default() }),
            Condition::EtagDoesNotMatch(etag) => get.only_if(Conditional { etag_does_not_match: Some(etag), ..Conditional::default() }),
        };
        Box::pin(async move { Ok(get.execute().await.map_err(|e| e.to_string())?.map(object)) })
    }

    fn list(&self, prefix: &str, cursor: Option<String>) -> LocalBoxFuture<'_, Result<Listing, String>> {
        let mut list = self.bucket.list().prefix(prefix).delimiter("/");
        if let Some(cursor) = cursor {
            list = list.cursor(cursor);
        }
        Box::pin(async move {
            let page = list.execute().await.map_err(|e| e.to_string())?;
            Ok(Listing { prefixes: page.delimited_prefixes(), truncated: page.truncated(), cursor: page.cursor() })
        })
    }

    /// `caches.default.match(key)`, then the body in one `arrayBuffer()`:
    /// workers-rs' `Response::bytes` reads a cached body as a stream, a
    /// promise and a copy per chunk, code a new isolate compiles in its
    /// first request (docs/BENCHMARK.md "CPU per request").
    fn cache_get(&self, key: &str) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, String>> {
        let key = key.to_owned();
        Box::pin(async move {
            let found = JsFuture::from(default_cache()?.match_with_str(&key)).await.map_err(js_error)?;
            // `match` resolves to undefined on a miss.
            let Ok(response) = found.dyn_into::<web_sys::Response>() else { return Ok(None) };
            if response.status() != 200 {
                return Ok(None);
            }
            let Ok(body) = response.array_buffer() else { return Ok(None) };
            Ok(JsFuture::from(body).await.ok().map(|buffer| Uint8Array::new(&buffer).to_vec()))
        })
    }

    fn cache_put_later(&self, key: String, bytes: Vec<u8>) {
        self.context.wait_until(async move {
            let stored = async {
                let mut response = worker::Response::from_bytes(bytes)?;
                response.headers_mut().set("cache-control", &format!("public, max-age={MAX_AGE_S}, immutable"))?;
                response.headers_mut().set("content-type", "application/octet-stream")?;
                Cache::default().put(key.as_str(), response).await
            };
            if let Err(error) = stored.await {
                worker::console_error!("cache put {key}: {error}");
            }
        });
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(Delay::from(Duration::from_millis(ms)))
    }

    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        wasm_bindgen_futures::spawn_local(task);
    }

    fn log_error(&self, message: &str) {
        worker::console_error!("{message}");
    }

    fn log(&self, message: &str) {
        worker::console_log!("{message}");
    }

    fn clock(&self) -> Arc<dyn Clock> {
        Arc::new(Runtime)
    }
}
