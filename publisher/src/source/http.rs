//! A `.rete` file on any static HTTP server that honours `Range`, as a
//! [`RangeSource`]. Ranges of one call are fetched in parallel. The first
//! response's validator (ETag, else Last-Modified) is pinned and sent with
//! every later request (`If-Match` / `If-Unmodified-Since`), so a file
//! replaced on the server gives a clear error instead of mixed bytes.

use rete_core::{ByteRange, RangeSource, ReadError};
use std::cell::{Cell, RefCell};
use std::io::Read;
use std::time::Duration;

/// How many requests one call keeps in flight.
const PARALLEL_REQUESTS: usize = 8;

/// Ranged GETs against one URL.
pub struct HttpSource {
    agent: ureq::Agent,
    url: String,
    validator: RefCell<Option<Validator>>,
    length: Cell<Option<u64>>,
    requests: Cell<u64>,
    bytes: Cell<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Validator {
    ETag(String),
    LastModified(String),
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
        Self { agent, url: url.to_owned(), validator: RefCell::new(None), length: Cell::new(None), requests: Cell::new(0), bytes: Cell::new(0) }
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

fn fetch(agent: &ureq::Agent, url: &str, range: ByteRange, validator: Option<&Validator>) -> Result<Fetched, String> {
        if range.length == 0 {
            return Ok(Fetched { bytes: Vec::new(), validator: None, total: None });
        }
        let mut request = agent.get(url).header("Range", format!("bytes={}-{}", range.offset, range.end() - 1)).header("Accept-Encoding", "identity");
        match validator {
            Some(Validator::ETag(etag)) => request = request.header("If-Match", etag),
            Some(Validator::LastModified(date)) => request = request.header("If-Unmodified-Since", date),
            None => {}
        }
        let mut response = request.call().map_err(|e| format!("GET {}: {e}", url))?;
        let status = response.status().as_u16();
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let seen = header("etag").map(Validator::ETag).or_else(|| header("last-modified").map(Validator::LastModified));
        let content_range = header("content-range");
        match status {
            206 => {}
            416 => return Ok(Fetched { bytes: Vec::new(), validator: seen, total: content_range.as_deref().and_then(total_length) }),
            412 => return Err(changed_message(&url)),
            200 => {
                return Err(format!(
                    "{} ignores Range requests (it answered 200 with the whole file); serve the file from a server that honours Range, such as nginx, Caddy, `npx http-server` or R2",
                    url
                ));
            }
            404 => return Err(format!("{} was not found (404)", url)),
            other => return Err(format!("GET {} answered {other}", url)),
        }
        let total = content_range.as_deref().and_then(total_length);
        let start = content_range.as_deref().and_then(range_start);
        if start != Some(range.offset) {
            return Err(format!("{} answered the range {} for a request of bytes {}-{}", url, content_range.unwrap_or_default(), range.offset, range.end() - 1));
        }
        let mut bytes = Vec::with_capacity(range.length.min(64 << 20) as usize);
        response.body_mut().as_reader().take(range.length).read_to_end(&mut bytes).map_err(|e| format!("reading {}: {e}", url))?;
        Ok(Fetched { bytes, validator: seen, total })
}

struct Fetched {
    bytes: Vec<u8>,
    validator: Option<Validator>,
    total: Option<u64>,
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
        let pinned = self.validator.borrow().clone();
        let (agent, url, pinned_ref) = (&self.agent, self.url.as_str(), pinned.as_ref());
        let mut results: Vec<Option<Result<Fetched, String>>> = (0..ranges.len()).map(|_| None).collect();
        for (chunk_index, chunk) in ranges.chunks(PARALLEL_REQUESTS).enumerate() {
            let fetched: Vec<Result<Fetched, String>> = std::thread::scope(|scope| {
                let handles: Vec<_> = chunk.iter().map(|&range| scope.spawn(move || fetch(agent, url, range, pinned_ref))).collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("request thread failed".into()))).collect()
            });
            for (i, result) in fetched.into_iter().enumerate() {
                results[chunk_index * PARALLEL_REQUESTS + i] = Some(result);
            }
        }
        let mut out = Vec::with_capacity(ranges.len());
        for result in results {
            let fetched = result.unwrap_or_else(|| Err("request not sent".into())).map_err(ReadError::Source)?;
            self.requests.set(self.requests.get() + 1);
            self.bytes.set(self.bytes.get() + fetched.bytes.len() as u64);
            if let Some(seen) = fetched.validator {
                let mut pinned = self.validator.borrow_mut();
                match &*pinned {
                    None => *pinned = Some(seen),
                    // A server that ignores If-Match still shows the change in its validator.
                    Some(known) if *known != seen => return Err(ReadError::Source(changed_message(&self.url))),
                    Some(_) => {}
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
}
