//! Compiles a new isolate's code at module start rather than in its first
//! request.
//!
//! Why: V8 compiles a wasm function the first time it is called (Liftoff),
//! and a new isolate that is the first of its process has nothing compiled:
//! its first request compiled what it ran, ~1 MB of wasm for a selective
//! query, 15–45 ms of CPU here against the Free plan's 10 ms a request
//! (docs/BENCHMARK.md "CPU per request"). The code V8 compiles belongs to the
//! module, not to an instance, and module start has its own limit (1 s of
//! CPU). So the shim calls [`warm_up`] once at start (`scripts/warm-up-at-start.mjs`):
//! it answers the requests a first visitor or client sends — card, summary,
//! resource view, dereference, SPARQL SELECT/ASK/CONSTRUCT/DESCRIBE — about
//! a small dataset built into the wasm (`warm-up/warm-up.trig`, 1,749
//! quads, published from a bucket in memory), through the same [`serve`] and
//! the same conversions to and from workers-rs' request and response as a
//! real request, first with the Cache API empty and then holding what the
//! first pass stored. Then the shim throws the instance away and makes a new
//! one of the same module (wasm-bindgen's `__wbg_reset_state`): the compiled
//! code stays, nothing the warm-up opened, cached or counted does.
//!
//! Workers refuse random values at module start, so the queries avoid what
//! draws one (aggregates, blank nodes and `DESCRIBE <iri>`: spargebra names
//! them with random values). A panic here is a trap the shim catches: the
//! warm-up stops and the instance is made anew all the same.

use crate::host::{Clock, Condition, Host, Listing, Object, Request, Span};
use crate::http::Body;
use crate::serve;
use futures_executor::LocalPool;
use futures_util::StreamExt;
use futures_util::future::{LocalBoxFuture, ready};
use futures_util::task::{LocalSpawn, LocalSpawnExt};
use rete_core::Header;
use rete_layout::VersionEntry;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::prelude::wasm_bindgen;

/// The dataset (`rete build warm-up.trig --default-graph union`).
const FILE: &[u8] = include_bytes!("../warm-up/warm-up.rete");
/// Its name in the warm-up's bucket.
const NAME: &str = "warm-up";
/// Its base IRI (`BASE_IRIS`), for the dereference.
const BASE: &str = "https://warm-up.rete.invalid/";
/// What the Worker benchmarks and most clients ask for.
const ACCEPT: &str = "application/sparql-results+json, application/json;q=0.9, text/turtle;q=0.8";

/// The requests, as (path and query, Accept): each example query's shape.
const REQUESTS: &[(&str, &str)] = &[
    ("/warm-up/card", ACCEPT),
    ("/warm-up/summary", ACCEPT),
    ("/warm-up/resource?iri=https%3A%2F%2Fwarm-up.rete.invalid%2Funit%2FVEL3-PER-X7", ACCEPT),
    ("/warm-up/id/unit/ENE2-PER-X3", ACCEPT),
    // A resource's triples in every graph, ordered.
    ("/warm-up/sparql?query=SELECT%20%3Fgraph%20%3Fproperty%20%3Fvalue%20WHERE%20%7B%20GRAPH%20%3Fgraph%20%7B%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Funit%2FVEL3-PER-X7%3E%20%3Fproperty%20%3Fvalue%20%7D%20%7D%20ORDER%20BY%20%3Fproperty%20%3Fvalue", ACCEPT),
    // A star in one graph with a language filter, ordered by a decimal.
    ("/warm-up/sparql?query=PREFIX%20v%3A%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fvocab%2F%3E%20PREFIX%20rdfs%3A%20%3Chttp%3A%2F%2Fwww.w3.org%2F2000%2F01%2Frdf-schema%23%3E%20SELECT%20%3Funit%20%3Flabel%20%3Fm%20WHERE%20%7B%20GRAPH%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Funit%2F%3E%20%7B%20%3Funit%20v%3Akind%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fkind%2FVelocity%3E%20%3B%20rdfs%3Alabel%20%3Flabel%20%3B%20v%3Amultiplier%20%3Fm%20.%20FILTER%20(lang(%3Flabel)%20%3D%20%22en%22)%20%7D%20%7D%20ORDER%20BY%20%3Fm", ACCEPT),
    // A chain with an OPTIONAL, ordered by label, limited.
    ("/warm-up/sparql?query=PREFIX%20v%3A%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fvocab%2F%3E%20PREFIX%20rdfs%3A%20%3Chttp%3A%2F%2Fwww.w3.org%2F2000%2F01%2Frdf-schema%23%3E%20SELECT%20%3Fc%20%3Flabel%20%3Fn%20%3Fu%20%3Fx%20WHERE%20%7B%20GRAPH%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fconstant%2F%3E%20%7B%20%3Fc%20a%20v%3AConstant%20%3B%20rdfs%3Alabel%20%3Flabel%20%3B%20v%3Avalue%20%3Fqv%20.%20%3Fqv%20v%3Anumber%20%3Fn%20%3B%20v%3Aunit%20%3Fu%20.%20OPTIONAL%20%7B%20%3Fc%20v%3Auncertainty%20%3Fx%20%7D%20%7D%20%7D%20ORDER%20BY%20%3Flabel%20LIMIT%2050", ACCEPT),
    // A property path, an OPTIONAL with a filter.
    ("/warm-up/sparql?query=PREFIX%20rdfs%3A%20%3Chttp%3A%2F%2Fwww.w3.org%2F2000%2F01%2Frdf-schema%23%3E%20PREFIX%20skos%3A%20%3Chttp%3A%2F%2Fwww.w3.org%2F2004%2F02%2Fskos%2Fcore%23%3E%20SELECT%20%3Fkind%20%3Flabel%20WHERE%20%7B%20GRAPH%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fkind%2F%3E%20%7B%20%3Fkind%20skos%3Abroader%2B%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fkind%2FEnergy%3E%20.%20OPTIONAL%20%7B%20%3Fkind%20rdfs%3Alabel%20%3Flabel%20FILTER%20(lang(%3Flabel)%20%3D%20%22en%22)%20%7D%20%7D%20%7D%20ORDER%20BY%20%3Fkind", ACCEPT),
    // Integer constants joined across two graphs.
    ("/warm-up/sparql?query=PREFIX%20v%3A%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fvocab%2F%3E%20PREFIX%20rdfs%3A%20%3Chttp%3A%2F%2Fwww.w3.org%2F2000%2F01%2Frdf-schema%23%3E%20SELECT%20%3Fkind%20%3Flabel%20%3Funit%20WHERE%20%7B%20GRAPH%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fkind%2F%3E%20%7B%20%3Fkind%20v%3Aexponent%20-2%20%3B%20rdfs%3Alabel%20%3Flabel%20%7D%20GRAPH%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Funit%2F%3E%20%7B%20%3Funit%20v%3Akind%20%3Fkind%20%7D%20%7D%20ORDER%20BY%20%3Flabel", ACCEPT),
    // ASK over every graph with a string filter.
    ("/warm-up/sparql?query=PREFIX%20v%3A%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fvocab%2F%3E%20ASK%20%7B%20GRAPH%20%3Fg%20%7B%20%3Funit%20v%3Acode%20%3Fcode%20FILTER%20(str(%3Fcode)%20%3D%20%22ve3%22)%20%7D%20%7D", ACCEPT),
    // CONSTRUCT with an OPTIONAL (Turtle).
    ("/warm-up/sparql?query=PREFIX%20v%3A%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fvocab%2F%3E%20PREFIX%20rdfs%3A%20%3Chttp%3A%2F%2Fwww.w3.org%2F2000%2F01%2Frdf-schema%23%3E%20PREFIX%20skos%3A%20%3Chttp%3A%2F%2Fwww.w3.org%2F2004%2F02%2Fskos%2Fcore%23%3E%20CONSTRUCT%20%7B%20%3Funit%20a%20skos%3AConcept%20%3B%20skos%3AprefLabel%20%3Flabel%20%3B%20skos%3Anotation%20%3Fsymbol%20.%20%7D%20WHERE%20%7B%20GRAPH%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Funit%2F%3E%20%7B%20%3Funit%20v%3Akind%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fkind%2FLength%3E%20%3B%20rdfs%3Alabel%20%3Flabel%20.%20OPTIONAL%20%7B%20%3Funit%20v%3Asymbol%20%3Fsymbol%20%7D%20%7D%20%7D", ACCEPT),
    // A numeric filter on doubles, ordered.
    ("/warm-up/sparql?query=PREFIX%20v%3A%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fvocab%2F%3E%20PREFIX%20rdfs%3A%20%3Chttp%3A%2F%2Fwww.w3.org%2F2000%2F01%2Frdf-schema%23%3E%20SELECT%20%3Fprefix%20%3Flabel%20%3Fsymbol%20%3Fm%20WHERE%20%7B%20GRAPH%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fprefix%2F%3E%20%7B%20%3Fprefix%20a%20v%3ADecimalPrefix%20%3B%20rdfs%3Alabel%20%3Flabel%20%3B%20v%3Asymbol%20%3Fsymbol%20%3B%20v%3AprefixMultiplier%20%3Fm%20.%20FILTER%20(%3Fm%20%3E%3D%201000)%20%7D%20%7D%20ORDER%20BY%20%3Fm", ACCEPT),
    // The default graph (the union of the named graphs).
    ("/warm-up/sparql?query=PREFIX%20v%3A%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fvocab%2F%3E%20SELECT%20%3Fkind%20WHERE%20%7B%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Funit%2FVEL3-PER-X7%3E%20v%3Akind%20%3Fkind%20%7D%20ORDER%20BY%20%3Fkind", ACCEPT),
    // DESCRIBE of what a pattern finds (Turtle).
    ("/warm-up/sparql?query=PREFIX%20v%3A%20%3Chttps%3A%2F%2Fwarm-up.rete.invalid%2Fvocab%2F%3E%20DESCRIBE%20%3Funit%20WHERE%20%7B%20%3Funit%20v%3Acode%20%22ma4%22%20%7D", ACCEPT),
];

/// Runs the warm-up; the number of answers that came out as expected
/// (every request answers 200, the dereference 303). Called once by the
/// shim at module start, which then makes a new instance (above).
#[wasm_bindgen(js_name = "__rete_warm_up")]
pub fn warm_up() -> u32 {
    run().unwrap_or(0)
}

fn run() -> Result<u32, String> {
    let mut pool = LocalPool::new();
    let bucket = Rc::new(Bucket::new(Rc::new(pool.spawner()))?);
    let mut expected = 0;
    // Second pass: a new open of the file, whose blocks come from the first
    // pass's Cache API writes. A CACHE_BYTES other than the first pass's
    // gives it an empty block cache (pool.rs keeps caches of one budget).
    for cache_bytes in ["16777216", "16777215"] {
        for (path, accept) in REQUESTS {
            let status = answer(&mut pool, &bucket, path, accept, cache_bytes)?;
            expected += u32::from(status == if path.contains("/id/") { 303 } else { 200 });
        }
        crate::datasets::forget(NAME, &bucket.file_key);
    }
    Ok(expected)
}

/// One request through [`serve`], its body read to the end; its status.
fn answer(pool: &mut LocalPool, bucket: &Rc<Bucket>, path: &str, accept: &str, cache_bytes: &str) -> Result<u16, String> {
    let request = request(&format!("https://warm-up.rete.invalid{path}"), accept)?;
    let host: Rc<dyn Host> = bucket.clone();
    let (base_iris, cache_bytes) = (format!(r#"{{"{NAME}": "{BASE}"}}"#), cache_bytes.to_owned());
    let var = move |name: &str| match name {
        "BASE_IRIS" => Some(base_iris.clone()),
        "CACHE_BYTES" => Some(cache_bytes.clone()),
        _ => None,
    };
    let answered = Rc::new(RefCell::new(None));
    let slot = Rc::clone(&answered);
    pool.spawner().spawn_local(async move { *slot.borrow_mut() = Some(serve(request, Ok(host), var).await) }).map_err(|e| e.to_string())?;
    pool.run_until_stalled();
    let response = answered.borrow_mut().take().ok_or("the answer waits on something the warm-up's host never gives")?;
    let status = response.status;
    match response.body {
        Body::Stream(mut chunks) => {
            pool.spawner().spawn_local(async move { while chunks.next().await.is_some() {} }).map_err(|e| e.to_string())?;
            pool.run_until_stalled();
        }
        body => {
            #[cfg(target_arch = "wasm32")]
            drop(crate::cloudflare::response(crate::host::Response { status, headers: response.headers, body }).map_err(|e| e.to_string())?);
            #[cfg(not(target_arch = "wasm32"))]
            drop(body);
        }
    }
    bucket.land_cache_writes();
    Ok(status)
}

/// A GET as the handling sees it: in the Worker made as a workers-rs
/// request and converted as `fetch` does.
#[cfg(target_arch = "wasm32")]
fn request(url: &str, accept: &str) -> Result<Request, String> {
    let headers = worker::Headers::new();
    headers.set("accept", accept).map_err(|e| e.to_string())?;
    let mut init = worker::RequestInit::new();
    init.with_headers(headers);
    let request = worker::Request::new_with_init(url, &init).map_err(|e| e.to_string())?;
    crate::cloudflare::request(request).map_err(|e| e.message())
}

#[cfg(not(target_arch = "wasm32"))]
fn request(url: &str, accept: &str) -> Result<Request, String> {
    let url = worker::Url::parse(url).map_err(|e| e.to_string())?;
    Ok(Request { method: worker::Method::Get, url, headers: vec![("accept".into(), accept.into())], body: Err("no body".into()) })
}

/// The bucket with the dataset published under [`NAME`] (its pointer
/// carrying the first read, as `rete publish` writes it), and a Cache API.
struct Bucket {
    objects: HashMap<String, Vec<u8>>,
    file_key: String,
    cache: RefCell<HashMap<String, Vec<u8>>>,
    /// Writes made "after the answer" (`waitUntil`), stored once it is read.
    pending: RefCell<Vec<(String, Vec<u8>)>>,
    spawner: Rc<dyn LocalSpawn>,
}

impl Bucket {
    fn new(spawner: Rc<dyn LocalSpawn>) -> Result<Self, String> {
        let header = Header::decode(FILE, Some(FILE.len() as u64)).map_err(|e| e.to_string())?;
        let version = header.content_hash_hex();
        let file_key = rete_layout::file_key(NAME, &version);
        let mut entry = VersionEntry { name: NAME.into(), version, key: file_key.clone(), bytes: FILE.len() as u64, quads: header.quad_count, published_at: "2026-11-27T00:00:00Z".into(), title: None, license: None, head: None };
        entry.set_first_read(&FILE[..FILE.len().min(rete_core::format::FIRST_READ_BYTES as usize)]);
        let objects = HashMap::from([(rete_layout::pointer_key(NAME), entry.to_json()), (file_key.clone(), FILE.to_vec())]);
        Ok(Self { objects, file_key, cache: RefCell::default(), pending: RefCell::default(), spawner })
    }

    fn land_cache_writes(&self) {
        self.cache.borrow_mut().extend(self.pending.borrow_mut().drain(..));
    }
}

/// The time, natively (in the Worker, the runtime's clock).
#[cfg(not(target_arch = "wasm32"))]
struct FixedClock;

#[cfg(not(target_arch = "wasm32"))]
impl Clock for FixedClock {
    fn now_ms(&self) -> f64 {
        1_764_201_600_000.0
    }

    fn near_cpu_limit(&self) -> bool {
        false
    }
}

impl Host for Bucket {
    fn get(&self, key: &str, span: Span, condition: Condition) -> LocalBoxFuture<'_, Result<Option<Object>, String>> {
        let Some(bytes) = self.objects.get(key) else { return Box::pin(ready(Ok(None))) };
        let etag = format!("warm-up-{}", bytes.len());
        let size = bytes.len() as u64;
        let (start, end) = match span {
            Span::Whole => (0, size),
            Span::Prefix { length } => (0, length.min(size)),
            Span::Range(range) => (range.offset.min(size), range.offset.saturating_add(range.length).min(size)),
        };
        let met = match &condition {
            Condition::Always => true,
            Condition::EtagMatches(wanted) => *wanted == etag,
            Condition::EtagDoesNotMatch(known) => *known != etag,
        };
        let body = met.then(|| {
            let slice = bytes[start as usize..end as usize].to_vec();
            Box::pin(ready(Ok(slice))) as LocalBoxFuture<'static, Result<Vec<u8>, String>>
        });
        Box::pin(ready(Ok(Some(Object { etag, size, body }))))
    }

    fn list(&self, _prefix: &str, _cursor: Option<String>) -> LocalBoxFuture<'_, Result<Listing, String>> {
        Box::pin(ready(Ok(Listing { prefixes: vec![format!("datasets/{NAME}/")], truncated: false, cursor: None })))
    }

    fn cache_get(&self, key: &str) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, String>> {
        Box::pin(ready(Ok(self.cache.borrow().get(key).cloned())))
    }

    fn cache_put_later(&self, key: String, bytes: Vec<u8>) {
        self.pending.borrow_mut().push((key, bytes));
    }

    fn sleep(&self, _ms: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(ready(()))
    }

    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        // Fails only when the pool is gone, after the warm-up.
        let _ = self.spawner.spawn_local_obj(task.into());
    }

    fn log_error(&self, _message: &str) {}

    fn log(&self, _message: &str) {}

    fn clock(&self) -> Arc<dyn Clock> {
        #[cfg(target_arch = "wasm32")]
        return Arc::new(crate::cloudflare::Runtime);
        #[cfg(not(target_arch = "wasm32"))]
        return Arc::new(FixedClock);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_warm_up_request_answers_as_a_real_one_would() {
        let expected = run().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(expected as usize, 2 * REQUESTS.len());
    }
}
