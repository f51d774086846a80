//! The CPU-limit signal (README "Deploy to Cloudflare", plan limits): when
//! the runtime says a request nears its CPU time limit, the Worker stops the
//! query and answers a readable 422 `cpu`, rather than running on until the
//! platform kills it without an answer. workerd cannot raise the signal
//! locally (it enforces no CPU limit), so this drives `rete_worker::serve`
//! natively over an in-memory bucket with a clock that raises it after a
//! number of polls.

use futures_executor::LocalPool;
use futures_util::future::{LocalBoxFuture, ready};
use futures_util::task::LocalSpawnExt;
use rete_core::Header;
use rete_layout::VersionEntry;
use rete_worker::host::{Clock, Condition, Host, Listing, Method, Object, Request, Response, Span, Url};
use rete_worker::http::Body;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// FORMAT.md's worked example: 12 quads, all within the first read.
const FILE: &[u8] = include_bytes!("../../docs/fixtures/format-1.2.rete");

/// A clock that says "near the CPU limit" from its `near_after`-th poll on.
struct SignalAfter {
    polls: AtomicU64,
    near_after: u64,
}

impl Clock for SignalAfter {
    fn now_ms(&self) -> f64 {
        1_764_115_200_000.0
    }

    fn near_cpu_limit(&self) -> bool {
        self.polls.fetch_add(1, Ordering::Relaxed) + 1 >= self.near_after
    }
}

/// The bucket with the file published as `data`, the Cache API empty.
struct Bucket {
    objects: HashMap<String, Vec<u8>>,
    clock: Arc<SignalAfter>,
    pool: RefCell<Option<futures_executor::LocalSpawner>>,
}

impl Bucket {
    fn new(near_after: u64) -> Self {
        let header = Header::decode(FILE, Some(FILE.len() as u64)).unwrap_or_else(|e| panic!("{e}"));
        let version = header.content_hash_hex();
        let key = rete_layout::file_key("data", &version);
        let mut entry = VersionEntry { name: "data".into(), version, key: key.clone(), bytes: FILE.len() as u64, quads: header.quad_count, published_at: "2026-11-26T00:00:00Z".into(), title: None, license: None, head: None };
        entry.set_first_read(FILE);
        let objects = HashMap::from([(rete_layout::pointer_key("data"), entry.to_json()), (key, FILE.to_vec())]);
        Self { objects, clock: Arc::new(SignalAfter { polls: AtomicU64::new(0), near_after }), pool: RefCell::new(None) }
    }
}

impl Host for Bucket {
    fn get(&self, key: &str, span: Span, _condition: Condition) -> LocalBoxFuture<'_, Result<Option<Object>, String>> {
        let Some(bytes) = self.objects.get(key) else { return Box::pin(ready(Ok(None))) };
        let (start, end) = match span {
            Span::Whole => (0, bytes.len()),
            Span::Prefix { length } => (0, bytes.len().min(length as usize)),
            Span::Range(range) => (range.offset as usize, (range.offset + range.length) as usize),
        };
        let slice = bytes[start..end.min(bytes.len())].to_vec();
        let body: LocalBoxFuture<'static, Result<Vec<u8>, String>> = Box::pin(ready(Ok(slice)));
        Box::pin(ready(Ok(Some(Object { etag: format!("etag-{key}"), size: bytes.len() as u64, body: Some(body) }))))
    }

    fn list(&self, _prefix: &str, _cursor: Option<String>) -> LocalBoxFuture<'_, Result<Listing, String>> {
        Box::pin(ready(Ok(Listing { prefixes: vec!["datasets/data/".into()], truncated: false, cursor: None })))
    }

    fn cache_get(&self, _key: &str) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, String>> {
        Box::pin(ready(Ok(None)))
    }

    fn cache_put_later(&self, _key: String, _bytes: Vec<u8>) {}

    fn sleep(&self, _ms: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(ready(()))
    }

    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        if let Some(spawner) = self.pool.borrow().as_ref() {
            spawner.spawn_local(task).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    fn log_error(&self, _message: &str) {}

    fn log(&self, _message: &str) {}

    fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }
}

/// GETs `path` on a Worker whose clock raises the signal after `near_after` polls.
fn get(path: &str, near_after: u64) -> (u16, Vec<(String, String)>, serde_json::Value) {
    let mut pool = LocalPool::new();
    let bucket = Rc::new(Bucket::new(near_after));
    *bucket.pool.borrow_mut() = Some(pool.spawner());
    let url = Url::parse(&format!("https://rete.test{path}")).unwrap_or_else(|e| panic!("{e}"));
    let request = Request { method: Method::Get, url, headers: vec![("accept".into(), "application/sparql-results+json".into())], body: Err("no body".into()) };
    let host: Rc<dyn Host> = bucket;
    let Response { status, headers, body } = pool.run_until(rete_worker::serve(request, Ok(host), |_| None));
    let Body::Bytes(bytes) = body else { panic!("a {status} answer that is not captured") };
    (status, headers, serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{status} {e}: {}", String::from_utf8_lossy(&bytes))))
}

/// 10³ rows (the default graph holds 10 of the 12 quads): more than 256
/// evaluation steps, so the signal is polled.
const CROSS_PRODUCT: &str = "/data/sparql?query=SELECT%20(COUNT(*)%20AS%20%3Fn)%20%7B%20%3Fa%20%3Fb%20%3Fc%20.%20%3Fd%20%3Fe%20%3Ff%20.%20%3Fg%20%3Fh%20%3Fi%20%7D";

#[test]
fn near_the_cpu_limit_a_query_answers_422_cpu() {
    let (status, headers, body) = get(CROSS_PRODUCT, 3);
    assert_eq!(status, 422, "{body}");
    assert!(headers.contains(&("x-rete-limit".into(), "cpu".into())), "{headers:?}");
    assert_eq!(body["error"], "budget");
    assert_eq!(body["limit"], "cpu");
    assert!(body["message"].as_str().is_some_and(|m| m.contains("CPU time limit") && m.contains("Paid plan")), "{body}");
}

#[test]
fn without_the_signal_the_same_query_answers() {
    let (status, _, body) = get(CROSS_PRODUCT, u64::MAX);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"]["bindings"][0]["n"]["value"], "1000");
}
