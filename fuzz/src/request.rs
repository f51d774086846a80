//! Target `request`: requests through the Worker's own request handling
//! (`rete_worker::serve`: routes, content negotiation, the preamble, ETags
//! and 304, budgets, queries, answers), compiled natively over an
//! in-memory bucket that holds two small real datasets as `rete publish`
//! lays them out. Only the runtime is replaced (`rete_worker::host`): R2
//! and the Cache API by maps, `Date.now()` by a clock that moves only when
//! the Worker sleeps, the CPU-limit signal by this process's CPU time.
//!
//! An input is one or more requests as text, separated by a line `~~~`:
//!
//! ```text
//! GET /data/sparql?query=ASK%7B%7D
//! accept: application/sparql-results+json
//!
//! ~~~
//! POST /data/sparql
//! content-type: application/sparql-query
//!
//! SELECT * WHERE { ?s ?p ?o } LIMIT 3
//! ```
//!
//! They run in order in one fresh isolate (a thread of its own, so that
//! what the Worker keeps between requests starts empty), then a probe (one
//! of [`PROBES`], picked by the input's hash) must answer byte for byte as
//! in an isolate that saw nothing else. Every
//! answer must be one the Worker documents (README "Worker", `http_error.rs`):
//! no 500, 502 or 503 with storage that works and one request at a time;
//! every 4xx/5xx a JSON error body with `error`, `status` and `message`
//! (or the query page for a client that asks for HTML); a streamed answer
//! complete; the `x-rete-*` counters equal to what the bucket saw, within
//! `MAX_SUBREQUESTS`.

use crate::bases::BaseFile;
use futures_executor::{LocalPool, LocalSpawner};
use futures_util::StreamExt;
use futures_util::future::{LocalBoxFuture, lazy, ready};
use futures_util::task::LocalSpawnExt;
use rete_core::Header;
use rete_core::format::FIRST_READ_BYTES;
use rete_layout::VersionEntry;
use rete_worker::host::{Clock, Condition, Host, Listing, Method, Object, Request, Response, Span, Url};
use rete_worker::http::Body;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Requests an input sends at most (before the probe).
const MAX_REQUESTS: usize = 4;

/// The origin of a request whose target is a path.
const ORIGIN: &str = "https://rete.test";

/// The settings: small budgets, so that a query bomb ends in a budget error
/// quickly, and a base IRI for one dataset (base-IRI mode, README).
/// `MAX_STEPS` is scaled to the datasets (1,200 statements each): 20,000
/// steps (the Worker's default is 10,000,000, for files of millions) still
/// let a query visit every statement ~16 times. Over 800 inputs of the
/// campaign corpus (2,109 requests with their probes) no answer's status
/// changed from the 200,000 of tests/worker/hostile.spec.ts, while the
/// bombs (a cross product of three patterns, an OPTIONAL of every quad
/// under ORDER BY), 1.5 % of the inputs, had taken 60 % of the CPU time
/// (docs/RELIABILITY.md "Throughput").
const VARS: [(&str, &str); 5] = [
    ("MAX_TIME_MS", "5000"),
    ("MAX_STEPS", "20000"),
    ("MAX_ROWS_PRODUCED", "5000"),
    ("MAX_QUERY_BYTES", "4096"),
    ("BASE_IRIS", r#"{"data": "http://schema.org/"}"#),
];

/// `MAX_SUBREQUESTS` as the settings leave it (the Worker's default).
const MAX_SUBREQUESTS: u64 = 50;

/// The runtime's "near the CPU limit" signal: a request that used this much
/// CPU time is told to stop (a 422), as workerd tells one near its limit.
/// Four requests of this much stay within the target's 1 s per input.
const CPU_SIGNAL_SECONDS: f64 = 0.2;

/// The statuses an answer may have here (README "Worker", `http_error.rs`);
/// 500, 502 and 503 mean corrupt files, failing storage, a changed dataset
/// or busy query slots, none of which this bucket has.
const STATUSES: [u16; 13] = [200, 204, 303, 304, 400, 403, 404, 405, 406, 413, 415, 422, 501];

/// The probes, one of which is asked after every input (target, accept):
/// each reads through what the isolate keeps (pointers, opened files and
/// their kept sections, the block-cache pool and its leases, the Cache
/// API) and must answer as in a fresh isolate. One probe, the input's by
/// its hash (so that a saved input replays the same), rather than one
/// query every time: the ORDER BY over every typed subject that was the
/// only probe took 70 % of an empty input's CPU time (docs/RELIABILITY.md
/// "Throughput"), and these reach both datasets, the CARD and SUMMARY
/// kept beside the first read, and a resource's page as well.
const PROBES: [(&str, &str); 6] = [
    // SELECT ?s WHERE { ?s a ?t } ORDER BY ?s LIMIT 5: every rdf:type quad, most dictionary blocks.
    ("/data/sparql?query=SELECT%20%3Fs%20WHERE%20%7B%20%3Fs%20a%20%3Ft%20%7D%20ORDER%20BY%20%3Fs%20LIMIT%205", "application/sparql-results+json"),
    // SELECT * WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 3: the other dataset, opened in rounds from the bucket.
    ("/qudt/sparql?query=SELECT%20*%20WHERE%20%7B%20GRAPH%20%3Fg%20%7B%20%3Fs%20%3Fp%20%3Fo%20%7D%20%7D%20LIMIT%203", "application/sparql-results+json"),
    ("/data/card", "application/json"),
    ("/data/summary", "application/json"),
    // Where a dereference in base-IRI mode sends a client (its 303's Location).
    ("/data/resource?iri=http%3A%2F%2Fschema.org%2F3DModel&format=ttl", "text/turtle"),
    // SELECT ?s ?t WHERE { ?s a ?t } LIMIT 5 OFFSET 200
    ("/data/sparql?query=SELECT%20%3Fs%20%3Ft%20WHERE%20%7B%20%3Fs%20a%20%3Ft%20%7D%20LIMIT%205%20OFFSET%20200", "application/sparql-results+json"),
];

/// The bucket's objects (key → bytes, etag) and each probe's answer in a fresh isolate.
struct Bucket {
    objects: Arc<Objects>,
    probes: Vec<Vec<u8>>,
}

/// Key → bytes and etag.
type Objects = HashMap<String, (Vec<u8>, String)>;

static BUCKET: OnceLock<Bucket> = OnceLock::new();

/// Builds the bucket (the base files of `query_damaged`; a second or so, once per process).
pub fn init() {
    bucket();
}

fn bucket() -> &'static Bucket {
    BUCKET.get_or_init(|| {
        let bases = crate::bases::base_files();
        let mut objects = HashMap::new();
        // "data" carries its first read in the pointer (as `rete publish` writes it); "qudt"
        // (named graphs) does not, so that the Worker reads it from the bucket. "data" is flat,
        // as every file below 8 M quads is; "qudt" has a directory of depth 2 (FORMAT.md §4.3),
        // so that the Worker's node reads and its node cache are fuzzed too.
        for (name, base, directory, head) in [("data", "schema-org", false, true), ("qudt", "qudt", true, false)] {
            let Some(BaseFile { file, .. }) = bases.iter().find(|b| b.name == base && b.directory == directory) else { panic!("no base file {base}") };
            publish(&mut objects, name, file, head);
        }
        let mut bucket = Bucket { objects: Arc::new(objects), probes: Vec::new() };
        for probe in 0..PROBES.len() {
            let [(status, answer)] = run_isolate(&bucket, &[probe_request(probe)]).try_into().unwrap_or_else(|_| panic!("one answer"));
            assert_eq!(status, 200, "probe {} failed: {}", PROBES[probe].0, String::from_utf8_lossy(&answer));
            bucket.probes.push(answer);
        }
        bucket
    })
}

/// Lays `file` out as `rete publish` does: the file under its content hash, and the pointer.
fn publish(objects: &mut Objects, name: &str, file: &[u8], head: bool) {
    let header = Header::decode(file, Some(file.len() as u64)).unwrap_or_else(|e| panic!("{e}"));
    let version = header.content_hash_hex();
    let key = rete_layout::file_key(name, &version);
    let mut entry = VersionEntry {
        name: name.into(),
        version: version.clone(),
        key: key.clone(),
        bytes: file.len() as u64,
        quads: header.quad_count,
        published_at: "2026-11-26T00:00:00Z".into(),
        title: None,
        license: None,
        head: None,
    };
    if head {
        entry.set_first_read(&file[..file.len().min(FIRST_READ_BYTES as usize)]);
    }
    objects.insert(rete_layout::pointer_key(name), (entry.to_json(), format!("pointer-{version}")));
    objects.insert(key, (file.to_vec(), format!("file-{version}")));
}

/// Target `request`: the requests of `data` in a fresh isolate, each answer
/// checked, then the input's probe.
pub fn request(data: &[u8]) {
    let bucket = bucket();
    let mut requests: Vec<Spec> = split(data).filter_map(Spec::parse).take(MAX_REQUESTS).collect();
    let probe = (xxhash_rust::xxh3::xxh3_64(data) % PROBES.len() as u64) as usize;
    requests.push(probe_request(probe));
    let answers = run_isolate(bucket, &requests);
    let Some((status, answer)) = answers.last() else { return };
    assert!(
        *status == 200 && *answer == bucket.probes[probe],
        "after the input the probe {} answered {status}: {}",
        PROBES[probe].0,
        String::from_utf8_lossy(answer)
    );
}

fn probe_request(probe: usize) -> Spec {
    let (target, accept) = PROBES[probe];
    Spec { method: "GET".into(), target: target.into(), headers: vec![("accept".into(), accept.into())], body: Vec::new() }
}

/// The requests of an input, split at lines `~~~`.
fn split(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(data);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.windows(5).position(|w| w == b"\n~~~\n") {
            Some(at) => {
                rest = Some(&text[at + 5..]);
                Some(&text[..at])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// One request as the input wrote it.
#[derive(Debug, Clone)]
struct Spec {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Spec {
    /// `METHOD TARGET`, header lines, an empty line, the body. Header lines
    /// a Fetch API `Headers` would refuse are left out, as workerd never
    /// hands such a request to a Worker.
    fn parse(text: &[u8]) -> Option<Self> {
        let head_end = text.windows(2).position(|w| w == b"\n\n");
        let (head, body) = match head_end {
            Some(at) => (&text[..at], text[at + 2..].to_vec()),
            None => (text, Vec::new()),
        };
        let head = std::str::from_utf8(head).ok()?;
        let mut lines = head.split('\n');
        let (method, target) = lines.next()?.split_once(' ')?;
        let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token(method) {
            return None;
        }
        let mut headers: Vec<(String, String)> = Vec::new();
        for line in lines {
            let Some((name, value)) = line.split_once(':') else { continue };
            let value = value.trim_matches([' ', '\t']);
            if !token(name) || value.bytes().any(|b| b == b'\r' || b == 0 || !(b == b'\t' || (0x20..0x7f).contains(&b))) {
                continue;
            }
            // Repeated headers are joined, as the Fetch API's `get` joins them.
            let name = name.to_ascii_lowercase();
            match headers.iter_mut().find(|(n, _)| *n == name) {
                Some((_, joined)) => *joined = format!("{joined}, {value}"),
                None => headers.push((name, value.to_owned())),
            }
        }
        Some(Self { method: method.to_owned(), target: target.to_owned(), headers, body })
    }

    /// The URL workerd would hand the Worker (`None` if it is not one).
    fn url(&self) -> Option<Url> {
        let absolute = if self.target.starts_with("http://") || self.target.starts_with("https://") {
            self.target.clone()
        } else if self.target.starts_with('/') {
            format!("{ORIGIN}{}", self.target)
        } else {
            format!("{ORIGIN}/{}", self.target)
        };
        Url::parse(&absolute).ok()
    }

    /// The request as the Worker sees it: workers-rs maps a method it does
    /// not know to GET (`worker::Method::from`), and the body comes in chunks.
    fn request(&self) -> Option<Request> {
        let method = Method::from(self.method.clone());
        let body = match method {
            Method::Post => {
                let chunks: Vec<Result<Vec<u8>, String>> = self.body.chunks(1000).map(|c| Ok(c.to_vec())).collect();
                Ok(futures_util::stream::iter(chunks).boxed_local())
            }
            _ => Err("no body for request".into()),
        };
        Some(Request { method, url: self.url()?, headers: self.headers.clone(), body })
    }
}

/// Runs requests one after the other in a new isolate; returns each one's
/// status and body.
fn run_isolate(bucket: &Bucket, requests: &[Spec]) -> Vec<(u16, Vec<u8>)> {
    std::thread::scope(|scope| {
        let isolate = std::thread::Builder::new().stack_size(8 << 20).spawn_scoped(scope, || {
            let mut pool = LocalPool::new();
            let memory = Rc::new(Memory::new(bucket, pool.spawner()));
            requests.iter().filter_map(|spec| Some(serve(&mut pool, &memory, spec, spec.request()?))).collect()
        });
        match isolate.map(|thread| thread.join()) {
            Ok(Ok(answers)) => answers,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(error) => panic!("cannot start an isolate thread: {error}"),
        }
    })
}

/// One request: its answer read to the end (a stream as the client reads
/// it) and checked.
fn serve(pool: &mut LocalPool, memory: &Rc<Memory>, spec: &Spec, request: Request) -> (u16, Vec<u8>) {
    memory.start_request();
    let host: Rc<dyn Host> = memory.clone();
    let var = |name: &str| VARS.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned());
    let Response { status, headers, body } = pool.run_until(rete_worker::serve(request, Ok(host), var));
    let (bytes, broken) = match body {
        Body::Empty => (Vec::new(), None),
        Body::Bytes(bytes) => (bytes, None),
        Body::Stream(chunks) => {
            let chunks: Vec<_> = pool.run_until(chunks.collect());
            let mut bytes = Vec::new();
            let mut broken = None;
            for chunk in chunks {
                match chunk {
                    Ok(chunk) => bytes.extend(chunk),
                    Err(error) => broken = Some(error.to_string()),
                }
            }
            (bytes, broken)
        }
    };
    pool.run_until_stalled();
    memory.end_request();
    let answer = Answer { status, headers, body: bytes };
    // RETE_FUZZ_TRACE=1 prints each request and answer (replaying an input by hand).
    if std::env::var_os("RETE_FUZZ_TRACE").is_some() {
        eprintln!("{} {} -> {} {:?} ({} bytes) {}", spec.method, spec.target, status, answer.header("content-type"), answer.body.len(), answer.header("x-rete-limit").unwrap_or_default());
    }
    if let Err(problem) = answer.check(spec, memory, broken) {
        panic!(
            "{problem}\nrequest: {spec:?}\nanswer: {status} {:?}\n{}\nlogged: {:?}",
            answer.headers,
            String::from_utf8_lossy(&answer.body[..answer.body.len().min(2000)]),
            memory.log.borrow()
        );
    }
    (status, answer.body)
}

/// A response as the client got it.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// What every answer must be.
    fn check(&self, spec: &Spec, memory: &Memory, broken: Option<String>) -> Result<(), String> {
        let status = self.status;
        if !STATUSES.contains(&status) {
            return Err(format!("status {status} is not one this Worker answers with working storage"));
        }
        if let Some(error) = broken {
            return Err(format!("the streamed answer broke off: {error}"));
        }
        if self.header("access-control-allow-origin") != Some("*") {
            return Err("no access-control-allow-origin: *".into());
        }
        let counter = |name: &str| self.header(name).and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| format!("no {name} header"));
        let seen = memory.seen.get();
        if counter("x-rete-subrequests")? != seen.subrequests() {
            return Err(format!("x-rete-subrequests is {}, the bucket and cache saw {seen:?}", counter("x-rete-subrequests")?));
        }
        if seen.subrequests() > MAX_SUBREQUESTS {
            return Err(format!("{} subrequests, over MAX_SUBREQUESTS {MAX_SUBREQUESTS}", seen.subrequests()));
        }
        if counter("x-rete-reads")? != seen.gets + seen.lists || counter("x-rete-bytes")? != seen.body_bytes {
            return Err(format!("x-rete-reads {} and x-rete-bytes {} differ from what the bucket saw: {seen:?}", counter("x-rete-reads")?, counter("x-rete-bytes")?));
        }
        let head = Method::from(spec.method.clone()) == Method::Head;
        if (head || matches!(status, 204 | 303 | 304)) && !self.body.is_empty() {
            return Err(format!("a {status} answer to {} has a body", spec.method));
        }
        match status {
            304 if self.header("etag").is_none() => return Err("304 without an ETag".into()),
            303 if self.header("location").is_none() => return Err("303 without a Location".into()),
            405 if self.header("allow").is_none() => return Err("405 without Allow".into()),
            422 if self.header("x-rete-limit").is_none() => return Err("422 without x-rete-limit".into()),
            _ => {}
        }
        let content_type = self.header("content-type").unwrap_or_default();
        if status >= 400 && !head {
            if content_type.starts_with("text/html") {
                return std::str::from_utf8(&self.body).map(|_| ()).map_err(|e| format!("an HTML error page that is not UTF-8: {e}"));
            }
            if content_type != "application/json" {
                return Err(format!("a {status} error of type {content_type:?}, not JSON"));
            }
            let body: Value = serde_json::from_slice(&self.body).map_err(|e| format!("an error body that is not JSON: {e}"))?;
            let members = body["error"].is_string() && body["message"].as_str().is_some_and(|m| !m.is_empty()) && body["status"] == status;
            if !members {
                return Err("an error body without error, message and its status".into());
            }
        } else if status == 200 && !head && content_type.contains("json") {
            // Parsed without building the tree: only whether it is JSON counts here.
            serde_json::from_slice::<serde::de::IgnoredAny>(&self.body).map_err(|e| format!("a {content_type} answer that is not JSON: {e}"))?;
        }
        Ok(())
    }
}

/// What the bucket and the cache saw during one request.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    gets: u64,
    lists: u64,
    body_bytes: u64,
    cache_gets: u64,
    cache_puts: u64,
}

impl Seen {
    fn subrequests(&self) -> u64 {
        self.gets + self.lists + self.cache_gets + self.cache_puts
    }
}

/// The runtime of one isolate: the bucket, the location's Cache API (empty
/// at first), the clock, and the request's tasks.
struct Memory {
    objects: Arc<Objects>,
    cache: RefCell<HashMap<String, Vec<u8>>>,
    /// Cache writes made after the answer (`waitUntil`).
    pending_puts: RefCell<Vec<(String, Vec<u8>)>>,
    spawner: LocalSpawner,
    clock: Arc<VirtualClock>,
    seen: Rc<Cell<Seen>>,
    log: RefCell<Vec<String>>,
}

impl Memory {
    fn new(bucket: &Bucket, spawner: LocalSpawner) -> Self {
        Self {
            objects: Arc::clone(&bucket.objects),
            cache: RefCell::default(),
            pending_puts: RefCell::default(),
            spawner,
            clock: Arc::new(VirtualClock { now_ms: AtomicU64::new(1_764_115_200_000), request_cpu_start_ns: AtomicU64::new(0) }),
            seen: Rc::default(),
            log: RefCell::default(),
        }
    }

    fn start_request(&self) {
        self.seen.set(Seen::default());
        self.log.borrow_mut().clear();
        self.clock.request_cpu_start_ns.store(cpu_ns(), Ordering::Relaxed);
    }

    fn end_request(&self) {
        self.cache.borrow_mut().extend(self.pending_puts.borrow_mut().drain(..));
        // A second between requests: pointers are reused (`POINTER_TTL_S`), leases stay fresh.
        self.clock.now_ms.fetch_add(1000, Ordering::Relaxed);
    }

    fn count(&self, change: impl FnOnce(&mut Seen)) {
        let mut seen = self.seen.get();
        change(&mut seen);
        self.seen.set(seen);
    }
}

/// Milliseconds that pass only when the Worker sleeps; the CPU-limit
/// signal from this process's CPU time.
struct VirtualClock {
    now_ms: AtomicU64,
    request_cpu_start_ns: AtomicU64,
}

impl Clock for VirtualClock {
    fn now_ms(&self) -> f64 {
        self.now_ms.load(Ordering::Relaxed) as f64
    }

    fn near_cpu_limit(&self) -> bool {
        let used_ns = cpu_ns().saturating_sub(self.request_cpu_start_ns.load(Ordering::Relaxed));
        used_ns as f64 * 1e-9 > CPU_SIGNAL_SECONDS
    }
}

fn cpu_ns() -> u64 {
    (crate::limits::process_cpu_seconds() * 1e9) as u64
}

impl Host for Memory {
    fn get(&self, key: &str, span: Span, condition: Condition) -> LocalBoxFuture<'_, Result<Option<Object>, String>> {
        self.count(|s| s.gets += 1);
        let Some((bytes, etag)) = self.objects.get(key) else { return Box::pin(ready(Ok(None))) };
        let size = bytes.len() as u64;
        let (start, end) = match span {
            Span::Whole => (0, size),
            Span::Prefix { length } => (0, length.min(size)),
            Span::Range(range) => match range.offset.checked_add(range.length) {
                Some(end) if end <= size => (range.offset, end),
                _ => return Box::pin(ready(Err(format!("range {}+{} of a {size}-byte object is not satisfiable", range.offset, range.length)))),
            },
        };
        let met = match &condition {
            Condition::Always => true,
            Condition::EtagMatches(wanted) => wanted == etag,
            Condition::EtagDoesNotMatch(known) => known != etag,
        };
        let seen = Rc::clone(&self.seen);
        let body = met.then(|| {
            let slice = bytes[start as usize..end as usize].to_vec();
            Box::pin(lazy(move |_| {
                let mut counted = seen.get();
                counted.body_bytes += slice.len() as u64;
                seen.set(counted);
                Ok(slice)
            })) as LocalBoxFuture<'static, Result<Vec<u8>, String>>
        });
        Box::pin(ready(Ok(Some(Object { etag: etag.clone(), size, body }))))
    }

    fn list(&self, prefix: &str, cursor: Option<String>) -> LocalBoxFuture<'_, Result<Listing, String>> {
        self.count(|s| s.lists += 1);
        let prefixes: BTreeSet<String> = self
            .objects
            .keys()
            .filter_map(|key| key.strip_prefix(prefix).and_then(|rest| rest.find('/').map(|slash| format!("{prefix}{}", &rest[..=slash]))))
            .filter(|p| cursor.as_ref().is_none_or(|c| p > c))
            .collect();
        Box::pin(ready(Ok(Listing { prefixes: prefixes.into_iter().collect(), truncated: false, cursor: None })))
    }

    fn cache_get(&self, key: &str) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>, String>> {
        self.count(|s| s.cache_gets += 1);
        Box::pin(ready(Ok(self.cache.borrow().get(key).cloned())))
    }

    fn cache_put_later(&self, key: String, bytes: Vec<u8>) {
        self.count(|s| s.cache_puts += 1);
        self.pending_puts.borrow_mut().push((key, bytes));
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()> {
        let clock = Arc::clone(&self.clock);
        Box::pin(lazy(move |_| {
            clock.now_ms.fetch_add(ms, Ordering::Relaxed);
        }))
    }

    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        self.spawner.spawn_local(task).unwrap_or_else(|e| panic!("cannot spawn a task: {e}"));
    }

    fn log_error(&self, message: &str) {
        self.log.borrow_mut().push(message.to_owned());
    }

    fn log(&self, message: &str) {
        self.log.borrow_mut().push(message.to_owned());
    }

    fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }
}
