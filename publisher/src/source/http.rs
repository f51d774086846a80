//! A `.rete` file on any static HTTP server that honours `Range`, as a
//! [`RangeSource`]. The ranges of one call (one round of the read path) are
//! fetched in parallel. The first response's validators (ETag, Last-Modified)
//! are pinned: later requests carry them (`If-Match` for a strong ETag,
//! `If-Unmodified-Since`) and every response is compared with them, so a
//! file replaced on the server gives a clear error instead of mixed bytes.
//! A server that ignores `Range` (it answers 200 with the whole file) is an
//! error naming servers that work, read no further than its headers.

use rete_core::{ByteRange, RangeSource, ReadError};
use std::cell::{Cell, RefCell};
use std::io::Read;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How many requests one call keeps in flight.
const PARALLEL_REQUESTS: usize = 16;

/// Ranged GETs against one URL.
pub struct HttpSource {
    agent: ureq::Agent,
    url: String,
    pinned: RefCell<Validators>,
    length: Cell<Option<u64>>,
    requests: Cell<u64>,
    bytes: Cell<u64>,
}

/// What identifies the version of the file a response came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Validators {
    etag: Option<String>,
    last_modified: Option<String>,
}

impl Validators {
    /// Whether `seen` (a later response's) contradicts the pinned ones.
    fn differs(&self, seen: &Validators) -> bool {
        let differ = |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if a != b);
        differ(&self.etag, &seen.etag) || differ(&self.last_modified, &seen.last_modified)
    }
}

impl HttpSource {
    /// A source for `url` (http or https).
    pub fn new(url: &str) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .user_agent(concat!("rete/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Self { agent, url: url.to_owned(), pinned: RefCell::default(), length: Cell::new(None), requests: Cell::new(0), bytes: Cell::new(0) }
    }

    /// The URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Requests sent so far.
    pub fn requests(&self) -> u64 {
        self.requests.get()
    }

    /// Body bytes received so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.get()
    }

    /// The file length, once a response has told it.
    pub fn length(&self) -> Option<u64> {
        self.length.get()
    }
}

/// Whether a command-line argument names a file over HTTP rather than a path.
pub fn is_url(location: &str) -> bool {
    let lower = location.get(..8).unwrap_or(location).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

struct Fetched {
    bytes: Vec<u8>,
    validators: Validators,
    total: Option<u64>,
}

fn fetch(agent: &ureq::Agent, url: &str, range: ByteRange, pinned: &Validators) -> Result<Fetched, String> {
    if range.length == 0 {
        return Ok(Fetched { bytes: Vec::new(), validators: Validators::default(), total: None });
    }
    let mut request = agent.get(url).header("Range", format!("bytes={}-{}", range.offset, range.end() - 1)).header("Accept-Encoding", "identity");
    // A weak ETag never matches If-Match (strong comparison), so only a strong one is sent.
    if let Some(etag) = pinned.etag.as_deref().filter(|etag| !etag.starts_with("W/")) {
        request = request.header("If-Match", etag);
    }
    if let Some(date) = &pinned.last_modified {
        request = request.header("If-Unmodified-Since", date);
    }
    let mut response = request.call().map_err(|e| format!("GET {url}: {e}"))?;
    let status = response.status().as_u16();
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let validators = Validators { etag: header("etag"), last_modified: header("last-modified") };
    let content_range = header("content-range");
    let content_length = header("content-length").and_then(|v| v.trim().parse::<u64>().ok());
    let total = match status {
        206 => {
            let start = content_range.as_deref().and_then(range_start);
            if start != Some(range.offset) {
                return Err(format!("{url} answered the range {} for a request of bytes {}-{}", content_range.unwrap_or_default(), range.offset, range.end() - 1));
            }
            content_range.as_deref().and_then(total_length)
        }
        // The whole file, when it is no longer than what was asked from its start.
        200 if range.offset == 0 && content_length.is_some_and(|length| length <= range.length) => content_length,
        200 => {
            return Err(format!(
                "{url} ignores Range requests (it answered 200 with the whole file); serve the file from a server that honours Range, such as nginx, Caddy, `npx http-server` or R2"
            ));
        }
        416 => return Ok(Fetched { bytes: Vec::new(), validators, total: content_range.as_deref().and_then(total_length) }),
        412 => return Err(changed_message(url)),
        404 => return Err(format!("{url} was not found (404)")),
        other => return Err(format!("GET {url} answered {other}")),
    };
    let mut bytes = Vec::with_capacity(range.length.min(64 << 20) as usize);
    response.body_mut().as_reader().take(range.length).read_to_end(&mut bytes).map_err(|e| format!("reading {url}: {e}"))?;
    Ok(Fetched { bytes, validators, total })
}

fn changed_message(url: &str) -> String {
    format!("{url} changed on the server while it was being read; run the query again")
}

/// "bytes 0-99/1234" → 1234.
fn total_length(content_range: &str) -> Option<u64> {
    content_range.rsplit_once('/')?.1.trim().parse().ok()
}

/// "bytes 0-99/1234" → 0.
fn range_start(content_range: &str) -> Option<u64> {
    content_range.trim().strip_prefix("bytes")?.trim().split_once('-')?.0.parse().ok()
}

impl RangeSource for HttpSource {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        let pinned = self.pinned.borrow().clone();
        let (agent, url) = (&self.agent, self.url.as_str());
        let results: Vec<Mutex<Option<Result<Fetched, String>>>> = ranges.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..ranges.len().min(PARALLEL_REQUESTS) {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(range) = ranges.get(i) else { break };
                        let result = fetch(agent, url, *range, &pinned);
                        let failed = result.is_err();
                        if let Ok(mut slot) = results[i].lock() {
                            *slot = Some(result);
                        }
                        if failed {
                            // The call fails anyway: send nothing more.
                            next.store(ranges.len(), Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        let mut out = Vec::with_capacity(ranges.len());
        for result in results {
            let result = result.into_inner().ok().flatten().unwrap_or_else(|| Err("request not sent".into()));
            let fetched = result.map_err(ReadError::Source)?;
            self.requests.set(self.requests.get() + 1);
            self.bytes.set(self.bytes.get() + fetched.bytes.len() as u64);
            {
                let mut pinned = self.pinned.borrow_mut();
                if *pinned == Validators::default() {
                    *pinned = fetched.validators;
                } else if pinned.differs(&fetched.validators) {
                    // A server that ignores If-Match still shows the change in its validators.
                    return Err(ReadError::Source(changed_message(&self.url)));
                }
            }
            if let Some(total) = fetched.total {
                match self.length.get() {
                    None => self.length.set(Some(total)),
                    Some(known) if known != total => return Err(ReadError::Source(changed_message(&self.url))),
                    Some(_) => {}
                }
            }
            out.push(fetched.bytes);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_content_range() {
        assert_eq!(total_length("bytes 0-99/1234"), Some(1234));
        assert_eq!(range_start("bytes 100-199/1234"), Some(100));
        assert_eq!(total_length("bytes */1234"), Some(1234));
        assert_eq!(range_start("items 1-2/3"), None);
    }

    #[test]
    fn recognises_urls() {
        assert!(is_url("https://example.org/a.rete"));
        assert!(is_url("HTTP://example.org/a.rete"));
        assert!(!is_url("data/a.rete"));
        assert!(!is_url("http"));
    }

    #[test]
    fn validators_differ_only_when_both_sides_say() {
        let pinned = Validators { etag: Some("\"a\"".into()), last_modified: None };
        assert!(!pinned.differs(&Validators::default()));
        assert!(!pinned.differs(&Validators { etag: Some("\"a\"".into()), last_modified: Some("x".into()) }));
        assert!(pinned.differs(&Validators { etag: Some("\"b\"".into()), last_modified: None }));
    }
}
