//! `rete query` and `rete cost` against real HTTP servers on 127.0.0.1: a
//! small Range-honouring static server (Python's `http.server` with `Range`,
//! `ETag` and `If-Match` added, written below), Python's stock
//! `http.server` (which ignores `Range`), and a file replaced while it is
//! being read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rete_core::read::{RoundOptions, run_in_rounds};
use rete_core::sparql::{Answer, QueryOptions, query};
use rete_core::{RangeSource, ReadError};
use rete_publisher::source::Location;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Serves the files of a directory: `/plain/NAME` honours `Range`, sends a
/// strong ETag and answers 412 to a failed `If-Match`; `/no-if-match/NAME`
/// is the same but ignores `If-Match` (the reader must notice the new ETag).
const RANGE_SERVER: &str = r#"
import hashlib, http.server, os, re, sys
root = sys.argv[1]
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def reply(self, status, headers=(), body=b""):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        mode, _, name = self.path.lstrip("/").partition("/")
        try:
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
        except OSError:
            return self.reply(404)
        etag = '"%s"' % hashlib.sha1(data).hexdigest()
        wanted = self.headers.get("If-Match")
        if mode == "plain" and wanted is not None and wanted not in ("*", etag):
            return self.reply(412, [("ETag", etag)])
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range") or "")
        if match is None:
            return self.reply(200, [("ETag", etag)], data)
        start = int(match[1])
        end = min(int(match[2]) if match[2] else len(data) - 1, len(data) - 1)
        if start >= len(data):
            return self.reply(416, [("Content-Range", "bytes */%d" % len(data)), ("ETag", etag)])
        self.reply(206, [("Content-Range", "bytes %d-%d/%d" % (start, end, len(data))), ("ETag", etag)], data[start:end + 1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// A server process, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python() -> Command {
    Command::new("python3")
}

/// Starts a server and reads the first line it prints, which holds its port.
fn start(mut command: Command, port_of: impl Fn(&str) -> Option<u16>) -> Server {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("python3 is needed for the HTTP tests");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let port = loop {
        let line = lines.next().expect("the server exited before printing its port").unwrap();
        if let Some(port) = port_of(&line) {
            break port;
        }
    };
    Server { child, port }
}

fn range_server(root: &Path) -> Server {
    let mut command = python();
    command.arg("-c").arg(RANGE_SERVER).arg(root);
    start(command, |line| line.trim().parse().ok())
}

/// Python's own static server, which answers every GET with 200 and the whole file.
fn stock_server(root: &Path) -> Server {
    let mut command = python();
    command.args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory"]).arg(root);
    // "Serving HTTP on 127.0.0.1 port 45678 (http://127.0.0.1:45678/) ..."
    start(command, |line| line.split(" port ").nth(1)?.split_whitespace().next()?.parse().ok())
}

/// People with names, ages and friends: a file of a few dozen KiB, so the
/// blocks lie past the first 16 KiB read.
fn turtle() -> String {
    let mut text = String::from("@prefix : <http://example.org/> .\n");
    for i in 0..1500 {
        text.push_str(&format!(":p{i} a :Person ; :name \"Person {i}\" ; :age {} ; :knows :p{} , :p{} .\n", 20 + i % 50, (i * 7 + 1) % 1500, (i * 13 + 5) % 1500));
    }
    text
}

fn build(dir: &Path, name: &str, turtle: &str) -> PathBuf {
    let input = dir.join(format!("{name}.ttl"));
    std::fs::write(&input, turtle).unwrap();
    let output = dir.join(format!("{name}.rete"));
    let status = Command::new(env!("CARGO_BIN_EXE_rete")).arg("build").arg(&input).arg("-o").arg(&output).arg("--quiet").status().unwrap();
    assert!(status.success());
    output
}

fn rete(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rete")).args(args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout.clone()).unwrap()
}

const QUERIES: [&str; 5] = [
    "PREFIX : <http://example.org/> SELECT ?n WHERE { :p42 :knows ?f . ?f :name ?n } ORDER BY ?n",
    "PREFIX : <http://example.org/> SELECT ?p WHERE { ?p :age 33 } ORDER BY ?p",
    "PREFIX : <http://example.org/> ASK { :p42 :knows :p295 }",
    "PREFIX : <http://example.org/> DESCRIBE :p1000",
    "PREFIX : <http://example.org/> CONSTRUCT { ?f :knownBy :p7 } WHERE { :p7 :knows ?f }",
];

#[test]
fn query_over_http_answers_as_the_local_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = build(dir.path(), "people", &turtle());
    assert!(std::fs::metadata(&file).unwrap().len() > 16384, "blocks past the first read");
    let server = range_server(dir.path());
    let url = format!("http://127.0.0.1:{}/plain/people.rete", server.port);
    for query in QUERIES {
        let local = stdout(&rete(&["query", file.to_str().unwrap(), query]));
        let remote = stdout(&rete(&["query", &url, query]));
        assert_eq!(remote, local, "{query}");
        assert!(!local.is_empty() && !local.contains("\"bindings\":[]"), "{query}: {local}");
    }
    let csv = stdout(&rete(&["query", &url, QUERIES[1], "-f", "csv"]));
    assert_eq!(csv.lines().count(), 31, "a header and 30 people aged 33: {csv}");
}

#[test]
fn cost_over_http_counts_rounds_requests_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = build(dir.path(), "people", &turtle());
    let file_bytes = std::fs::metadata(&file).unwrap().len();
    let server = range_server(dir.path());
    let url = format!("http://127.0.0.1:{}/plain/people.rete", server.port);
    for query in QUERIES {
        let text = stdout(&rete(&["cost", &url, query, "--json"]));
        assert!(text.starts_with("{\"rounds\":") && text.ends_with("}\n"), "{text}");
        let remote: serde_json::Value = serde_json::from_str(&text).unwrap();
        let local: serde_json::Value = serde_json::from_str(&stdout(&rete(&["cost", file.to_str().unwrap(), query, "--json"]))).unwrap();
        assert_eq!(remote, local, "{query}: the same rounds over HTTP as from the file");
        let keys: Vec<&str> = remote.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["bytes", "file_bytes", "requests", "rounds"]);
        let (rounds, requests, bytes) = (remote["rounds"].as_u64().unwrap(), remote["requests"].as_u64().unwrap(), remote["bytes"].as_u64().unwrap());
        assert_eq!(remote["file_bytes"].as_u64(), Some(file_bytes));
        assert!((1..=5).contains(&rounds), "{query}: {remote}");
        assert!(requests >= rounds && bytes < file_bytes, "{query}: {remote}");
    }
    let text = stdout(&rete(&["cost", &url, QUERIES[2]]));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("rounds    ") && lines[0].contains("(1 to open"), "{text}");
    assert!(lines[2].starts_with("bytes     ") && lines[2].contains(&format!("of the file's {file_bytes})")), "{text}");
    assert_eq!(lines[3], "rows      1");
    assert!(lines[4].starts_with("memory    ") && lines[4].ends_with(" bytes of decoded blocks"), "{text}");
}

#[test]
fn search_over_http_reads_the_same_as_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("people.ttl");
    std::fs::write(&input, turtle()).unwrap();
    let file = dir.path().join("people.rete");
    let built = Command::new(env!("CARGO_BIN_EXE_rete")).arg("build").arg(&input).args(["--label-predicate", "http://example.org/name", "--quiet", "-o"]).arg(&file).status().unwrap();
    assert!(built.success());
    let server = range_server(dir.path());
    let url = format!("http://127.0.0.1:{}/plain/people.rete", server.port);
    let remote: serde_json::Value = serde_json::from_str(&stdout(&rete(&["search", &url, "person 42", "--json"]))).unwrap();
    let local: serde_json::Value = serde_json::from_str(&stdout(&rete(&["search", file.to_str().unwrap(), "person 42", "--json"]))).unwrap();
    assert_eq!(remote, local, "the same hits and reads over HTTP as from the file");
    assert_eq!(remote["results"][0]["iri"], "http://example.org/p42", "{remote}");
    assert_eq!(remote["results"].as_array().unwrap().len(), 11, "Person 42 and Person 420–429: {remote}");
    assert!(remote["rounds"].as_u64().unwrap() <= 3, "{remote}");
}

#[test]
fn a_server_that_ignores_range_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), "people", &turtle());
    let server = stock_server(dir.path());
    let url = format!("http://127.0.0.1:{}/people.rete", server.port);
    for command in ["query", "cost"] {
        let output = rete(&[command, &url, QUERIES[0]]);
        assert_eq!(output.status.code(), Some(3), "{command}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains(&format!("{url} ignores Range requests (it answered 200 with the whole file)")), "{stderr}");
        assert!(stderr.contains("nginx"), "it names servers that work: {stderr}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = range_server(dir.path());
    let url = format!("http://127.0.0.1:{}/plain/nothing.rete", server.port);
    let output = rete(&["query", &url, QUERIES[0]]);
    assert_eq!(output.status.code(), Some(3));
    assert!(String::from_utf8(output.stderr).unwrap().contains("nothing.rete was not found (404)"));
}

/// Opens the file over HTTP, replaces it on the server, then evaluates:
/// the reader must refuse to go on rather than mix the two files.
fn read_across_a_replacement(mode: &str) -> ReadError {
    let dir = tempfile::tempdir().unwrap();
    let file = build(dir.path(), "people", &turtle());
    let server = range_server(dir.path());
    let url = format!("http://127.0.0.1:{}/{mode}/people.rete", server.port);
    let location = Location::open(Path::new(&url)).unwrap();
    let (store, _) = location.open_in_rounds(64 << 20).unwrap();
    let replacement = build(dir.path(), "other", &turtle().replace("Person", "Human"));
    std::fs::rename(&replacement, &file).unwrap();
    // The OSP blocks lie past the first read (the open has the dictionary and SPO).
    let everything = "SELECT * WHERE { ?s ?p <http://example.org/p7> }";
    let outcome = run_in_rounds(&store, &RoundOptions::default(), |ranges| location.read_ranges(ranges), |store| {
        match query(store, everything, None, &QueryOptions::default()) {
            Ok(Answer::Solutions(solutions)) => solutions.count(),
            _ => 0,
        }
    });
    outcome.expect_err("a replaced file must not be read on")
}

#[test]
fn a_file_replaced_while_read_is_a_clear_error() {
    for mode in ["plain", "no-if-match"] {
        let error = read_across_a_replacement(mode);
        assert!(matches!(error, ReadError::Source(_)), "{mode}: {error:?}");
        assert!(error.to_string().ends_with("/people.rete changed on the server while it was being read; run the query again"), "{mode}: {error}");
    }
}
