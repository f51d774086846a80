//! `rete publish`, `ls`, `rollback` and `gc` against a real S3 server: s3s-fs
//! (SigV4 checks, multipart uploads kept on disk) started in-process on
//! 127.0.0.1 by each test, behind a thin layer that can fail or hold part
//! uploads. The `rete` binary runs as a child process, as a user runs it; the
//! stored objects are read back through the library's S3 target. Every child
//! runs under a deadline ([`CHILD_LIMIT`]): a test fails, it never hangs.
//!
//! `publish_throughput` (ignored) is the upload benchmark of docs/BENCHMARK.md.

use http::{Method, Response};
use rete_publisher::ingest::build::{BuildOptions, build};
use rete_publisher::ingest::input::Input;
use rete_publisher::r2::config::{RemoteTarget, Secret};
use rete_publisher::r2::layout::{self, VersionEntry};
use rete_publisher::r2::s3::S3Target;
use rete_publisher::r2::{Target, Tuning};
use std::borrow::BorrowMut;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const ACCESS: &str = "AKIDRETETEST0001";
const SECRET: &str = "rete-test-secret-never-printed";
const BUCKET: &str = "rete-test";

/// What the server does to part uploads (`PUT ?partNumber=N&uploadId=…`).
#[derive(Default)]
struct Faults {
    /// Answer 500 to every part numbered at least this (0: off).
    fail_parts_from: AtomicU32,
    /// Answer 500 to this many part uploads, then behave.
    fail_next_parts: AtomicU32,
    /// Hold parts numbered at least this until it is reset (0: off).
    stall_parts_from: AtomicU32,
    /// Part uploads received.
    parts_seen: AtomicU32,
    /// Multipart aborts received (`DELETE ?uploadId=…`).
    aborts_seen: AtomicU32,
    /// Answer 500 to every PUT of a `current.json` while not 0.
    fail_pointer_puts: AtomicU32,
    /// Flip the last byte of GET answers longer than 16 KiB for `.rete` keys while not 0
    /// (the stored object stays intact: only what the reader sees differs).
    corrupt_reads: AtomicU32,
}

struct Server {
    endpoint: String,
    root: tempfile::TempDir,
    faults: Arc<Faults>,
    _runtime: tokio::runtime::Runtime,
}

impl Server {
    fn start() -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(root.path().join(BUCKET)).expect("bucket dir");
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let mut builder = s3s::service::S3ServiceBuilder::new(s3s_fs::FileSystem::new(root.path()).expect("s3s-fs"));
        builder.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS, SECRET));
        let service = builder.build();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("address"));
        let faults = Arc::new(Faults::default());
        let shared = faults.clone();
        runtime.spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { continue };
                let (service, faults) = (service.clone(), shared.clone());
                tokio::spawn(async move {
                    let handler = hyper::service::service_fn(move |request| {
                        let (service, faults) = (service.clone(), faults.clone());
                        async move { faulty(&service, &faults, request).await }
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(hyper_util::rt::TokioIo::new(socket), handler)
                        .await;
                });
            }
        });
        Self { endpoint, root, faults, _runtime: runtime }
    }

    /// The library's view of the bucket, for reading back what `rete` stored.
    fn target(&self) -> Target {
        let remote = RemoteTarget { endpoint: self.endpoint.clone(), access_key_id: ACCESS.into(), secret_access_key: Secret::new(SECRET), bucket: BUCKET.into() };
        Target::S3(S3Target::new(&remote, Tuning::default()).expect("s3 target"))
    }

    fn pointer(&self, name: &str) -> Option<VersionEntry> {
        let bytes = self.target().get(&layout::pointer_key(name)).expect("read current.json")?;
        Some(VersionEntry::from_json(&bytes, name).expect("valid current.json"))
    }

    /// Multipart uploads the server still keeps parts or records of.
    fn pending_uploads(&self) -> usize {
        std::fs::read_dir(self.root.path()).expect("server root").filter_map(Result::ok).filter(|e| e.file_name().to_string_lossy().starts_with(".upload")).count()
    }
}

async fn faulty(service: &s3s::service::S3Service, faults: &Faults, request: http::Request<hyper::body::Incoming>) -> Result<s3s::HttpResponse, s3s::HttpError> {
    let query = request.uri().query().unwrap_or("").to_owned();
    if request.method() == Method::DELETE && query.contains("uploadId=") {
        faults.aborts_seen.fetch_add(1, Ordering::SeqCst);
    }
    if request.method() == Method::PUT && request.uri().path().ends_with("/current.json") && faults.fail_pointer_puts.load(Ordering::SeqCst) != 0 {
        return Ok(injected_error());
    }
    let part: Option<u32> = if request.method() == Method::PUT { query.split('&').find_map(|p| p.strip_prefix("partNumber=")?.parse().ok()) } else { None };
    if let Some(part) = part {
        faults.parts_seen.fetch_add(1, Ordering::SeqCst);
        let from = faults.fail_parts_from.load(Ordering::SeqCst);
        if (from != 0 && part >= from) || faults.fail_next_parts.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
            return Ok(injected_error());
        }
        loop {
            let stall = faults.stall_parts_from.load(Ordering::SeqCst);
            if stall == 0 || part < stall {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let corrupt = request.method() == Method::GET && request.uri().path().ends_with(".rete") && faults.corrupt_reads.load(Ordering::SeqCst) != 0;
    let mut response = service.call(request.map(s3s::Body::from)).await?;
    if corrupt && response.status().is_success() {
        let mut body = response.body_mut().store_all_limited(1 << 30).await.expect("read the answer").to_vec();
        if body.len() > 16 << 10
            && let Some(last) = body.last_mut()
        {
            *last ^= 1;
        }
        *response.body_mut() = s3s::Body::from(bytes::Bytes::from(body));
    }
    Ok(response)
}

fn injected_error() -> s3s::HttpResponse {
    let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>InternalError</Code><Message>injected by the test</Message></Error>";
    Response::builder().status(500).body(s3s::Body::from(body.to_owned())).expect("response")
}

/// `rete ARGS` with R2 pointed at `server` (none: no R2 configuration at all) and a
/// private HOME, so the developer's own config file is never read.
fn rete(server: Option<&Server>, home: &Path, args: &[&str]) -> Command {
    rete_at(Path::new(env!("CARGO_BIN_EXE_rete")), server, home, args)
}

/// [`rete`] with another build of the binary.
fn rete_at(binary: &Path, server: Option<&Server>, home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(binary);
    command.args(args).env("HOME", home).env_remove("XDG_CONFIG_HOME").stdin(Stdio::null());
    for name in rete_publisher::r2::config::ENV_VARS {
        command.env_remove(name);
    }
    if let Some(server) = server {
        command.env("R2_ENDPOINT", &server.endpoint).env("R2_ACCESS_KEY_ID", ACCESS).env("R2_SECRET_ACCESS_KEY", SECRET).env("R2_BUCKET", BUCKET);
    }
    command
}

/// The longest any child process of these tests may run.
const CHILD_LIMIT: Duration = Duration::from_secs(240);

/// Runs `command` to completion, killing it and failing the test after `limit`.
fn output_within(command: &mut Command, limit: Duration) -> Output {
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    // Read on threads, through channels: a grandchild holding a pipe must not block the test.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            let _ = sender.send(bytes);
        });
        receiver
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = stderr.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
            panic!("{command:?} did not finish within {limit:?}; its stderr:\n{}", String::from_utf8_lossy(&stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let collect = |receiver: std::sync::mpsc::Receiver<Vec<u8>>| receiver.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
    Output { status, stdout: collect(stdout), stderr: collect(stderr) }
}

fn run(mut command: impl BorrowMut<Command>) -> Output {
    let command = command.borrow_mut();
    let output = output_within(command, CHILD_LIMIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains(SECRET) && !String::from_utf8_lossy(&output.stdout).contains(SECRET), "the secret was printed:\n{stderr}");
    output
}

fn ok(mut command: impl BorrowMut<Command>) -> String {
    let command = command.borrow_mut();
    let output = run(&mut *command);
    assert!(output.status.success(), "{command:?} failed with {}:\n{}", output.status, String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("utf-8 stdout")
}

fn json(command: impl BorrowMut<Command>) -> serde_json::Value {
    let stdout = ok(command);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// Writes `triples` N-Triples statements; different seeds give different datasets.
fn write_nt(path: &Path, triples: usize, seed: u64, literal_chars: usize) {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create nt"));
    for i in 0..triples {
        let literal: String = (0..literal_chars)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                ALPHABET[(state % 64) as usize] as char
            })
            .collect();
        writeln!(out, "<http://example.org/s{seed}/{i}> <http://example.org/p{}> \"{literal}\" .", i % 7).expect("write nt");
    }
    out.flush().expect("flush nt");
}

/// Builds a `.rete` with the library.
fn build_rete(dir: &Path, name: &str, triples: usize, seed: u64, literal_chars: usize) -> PathBuf {
    let nt = dir.join(format!("{name}.nt"));
    write_nt(&nt, triples, seed, literal_chars);
    let output = dir.join(format!("{name}.rete"));
    let inputs = vec![Input::new(&nt, None).expect("input")];
    build(&BuildOptions { inputs, output: output.clone(), memory_bytes: 64 << 20, lenient: false, temp_dir: None, progress: false, metadata: Default::default(), pyramid: true, blocks: Default::default() }).expect("build");
    output
}

fn version_of(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("read .rete");
    rete_core::Header::decode(&bytes, Some(bytes.len() as u64)).expect("header").content_hash_hex()
}

/// A `.rete` of more than two 5 MiB parts, built once per test run.
fn big_rete() -> &'static Path {
    static BIG: OnceLock<PathBuf> = OnceLock::new();
    BIG.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("publish-big");
        std::fs::create_dir_all(&dir).expect("tmp dir");
        let path = build_rete(&dir, "big", 160_000, 42, 64);
        let bytes = std::fs::metadata(&path).expect("big").len();
        assert!(bytes > 10 << 20, "the big dataset must span three 5 MiB parts; it has {bytes} bytes");
        path
    })
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

#[test]
fn publish_switch_rollback_gc() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");

    // v1 from RDF: built, uploaded, switched.
    let nt = dir.path().join("people.nt");
    write_nt(&nt, 30, 1, 12);
    let first = json(rete(Some(&server), home.path(), &["publish", path_str(&nt), "--name", "people", "--json", "-o", path_str(&dir.path().join("v1.rete"))]));
    let v1 = version_of(&dir.path().join("v1.rete"));
    assert_eq!(first["dataset"], "people");
    assert_eq!(first["version"], v1.as_str());
    assert_eq!(first["key"], format!("datasets/people/{v1}.rete"));
    assert_eq!(first["action"], "uploaded");
    assert_eq!(first["target"], "r2");
    assert_eq!(first["quads"], 30);
    assert!(first["card_url"].is_null(), "no --url and no configured url: no links");
    let pointer = server.pointer("people").expect("current.json");
    assert_eq!((pointer.version.as_str(), pointer.bytes, pointer.quads), (v1.as_str(), first["bytes"].as_u64().expect("bytes"), 30));
    assert!(server.target().get(&layout::entry_key("people", &v1)).expect("entry").is_some());

    // Same content again: nothing to do.
    let again = json(rete(Some(&server), home.path(), &["publish", path_str(&dir.path().join("v1.rete")), "--name", "people", "--json"]));
    assert_eq!(again["action"], "unchanged");

    // v2 (a ready .rete): the pointer moves, v1's object stays.
    let v2_file = build_rete(dir.path(), "v2", 40, 2, 12);
    let v2 = version_of(&v2_file);
    let second = json(rete(Some(&server), home.path(), &["publish", path_str(&v2_file), "--name", "people", "--json", "--url", "https://rete.example/"]));
    assert_eq!((second["version"].as_str(), second["previous"].as_str()), (Some(v2.as_str()), Some(v1.as_str())));
    assert_eq!(second["card_url"], "https://rete.example/people/card");
    assert_eq!(second["sparql_url"], "https://rete.example/people/sparql");
    assert_eq!(server.pointer("people").expect("pointer").version, v2);
    assert!(server.target().size(&layout::file_key("people", &v1)).expect("head").is_some(), "v1 must stay for readers of the old pointer");

    // ls: both versions, v2 current.
    let listing = json(rete(Some(&server), home.path(), &["ls", "--json"]));
    assert_eq!(listing[0]["name"], "people");
    assert_eq!(listing[0]["current"], v2.as_str());
    let versions: Vec<&str> = listing[0]["versions"].as_array().expect("versions").iter().map(|v| v["version"].as_str().expect("version")).collect();
    assert_eq!(versions, [v2.as_str(), v1.as_str()], "newest first");
    let table = ok(rete(Some(&server), home.path(), &["ls", "people"]));
    assert!(table.contains(&format!("*{v2}")), "{table}");

    // rollback: to the previous version, then forward again by a prefix.
    let back = json(rete(Some(&server), home.path(), &["rollback", "people", "--json"]));
    assert_eq!((back["version"].as_str(), back["previous"].as_str()), (Some(v1.as_str()), Some(v2.as_str())));
    assert_eq!(server.pointer("people").expect("pointer").version, v1);
    ok(rete(Some(&server), home.path(), &["rollback", "people", &v2[..8]]));
    assert_eq!(server.pointer("people").expect("pointer").version, v2);
    let unknown = run(rete(Some(&server), home.path(), &["rollback", "people", "ffffffff"]));
    assert_eq!(unknown.status.code(), Some(3), "{}", String::from_utf8_lossy(&unknown.stderr));

    // v3, then serve v1 and collect keeping one: v3 (newest) and v1 (current) stay, v2 goes.
    let v3_file = build_rete(dir.path(), "v3", 50, 3, 12);
    let v3 = version_of(&v3_file);
    ok(rete(Some(&server), home.path(), &["publish", path_str(&v3_file), "--name", "people", "-q"]));
    ok(rete(Some(&server), home.path(), &["rollback", "people", &v1]));
    let dry = json(rete(Some(&server), home.path(), &["gc", "people", "--keep", "1", "--dry-run", "--json"]));
    assert_eq!(dry["deleted"], serde_json::json!([v2]));
    assert!(server.target().size(&layout::file_key("people", &v2)).expect("head").is_some(), "--dry-run deletes nothing");
    let collected = json(rete(Some(&server), home.path(), &["gc", "people", "--keep", "1", "--json"]));
    assert_eq!(collected["deleted"], serde_json::json!([v2]));
    let target = server.target();
    assert_eq!(target.size(&layout::file_key("people", &v2)).expect("head"), None);
    assert_eq!(target.get(&layout::entry_key("people", &v2)).expect("get"), None);
    for kept in [&v1, &v3] {
        assert!(target.size(&layout::file_key("people", kept)).expect("head").is_some());
    }
    // --keep 0 still keeps the current version.
    let all = json(rete(Some(&server), home.path(), &["gc", "people", "--keep", "0", "--json"]));
    assert_eq!(all["deleted"], serde_json::json!([v3]));
    assert_eq!(all["kept"], serde_json::json!([v1]));
    assert_eq!(server.pointer("people").expect("pointer").version, v1);
}

#[test]
fn entries_carry_the_cards_title_and_licence_and_the_first_read() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    // card.toml is read beside the first input: a folder of its own.
    let titled = dir.path().join("titled");
    std::fs::create_dir(&titled).expect("titled dir");
    let nt = titled.join("units.nt");
    write_nt(&nt, 20, 7, 8);
    std::fs::write(titled.join("card.toml"), "title = \"Units of measure\"\nlicense = \"https://creativecommons.org/licenses/by/4.0/\"\n").expect("card.toml");
    let file = dir.path().join("units.rete");
    ok(rete(Some(&server), home.path(), &["publish", path_str(&nt), "--name", "units", "-q", "-o", path_str(&file)]));
    let version = version_of(&file);
    let pointer = server.pointer("units").expect("current.json");
    assert_eq!(pointer.title.as_deref(), Some("Units of measure"));
    assert_eq!(pointer.license.as_deref(), Some("https://creativecommons.org/licenses/by/4.0/"));
    // The reader's first read of the file, so the Worker opens it from the pointer.
    let bytes = std::fs::read(&file).expect("read units.rete");
    assert_eq!(pointer.first_read(), Some(Ok(bytes[..bytes.len().min(16384)].to_vec())));
    let entry = server.target().get(&layout::entry_key("units", &version)).expect("get").expect("history entry");
    assert_eq!(VersionEntry::from_json(&entry, "units").expect("entry"), pointer, "the history entry is the pointer");
    let listing = json(rete(Some(&server), home.path(), &["ls", "--json"]));
    assert_eq!(listing[0]["title"], "Units of measure");

    // A file whose card has neither: the members are left out, not empty.
    let bare = build_rete(dir.path(), "bare", 10, 8, 8);
    ok(rete(Some(&server), home.path(), &["publish", path_str(&bare), "--name", "bare", "-q"]));
    let raw = String::from_utf8(server.target().get(&layout::pointer_key("bare")).expect("get").expect("pointer")).expect("utf-8");
    assert!(!raw.contains("title") && !raw.contains("license"), "{raw}");

    // Written before entries recorded them: publishing the same file again adds them and
    // keeps the first publish time.
    let old = VersionEntry { title: None, license: None, head: None, ..pointer.clone() };
    let target = server.target();
    for key in [layout::entry_key("units", &version), layout::pointer_key("units")] {
        target.put_bytes(&key, &old.to_json(), "application/json").expect("put old entry");
    }
    let again = json(rete(Some(&server), home.path(), &["publish", path_str(&file), "--name", "units", "--json"]));
    assert_eq!(again["action"], "reused");
    assert_eq!(server.pointer("units").expect("current.json"), pointer);
}

#[test]
fn multipart_upload_reads_back_byte_for_byte() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let big = big_rete();
    let local = std::fs::read(big).expect("read big");
    let started = Instant::now();
    let report = json(rete(Some(&server), home.path(), &["publish", path_str(big), "--name", "big", "--part-size", "5MiB", "--parallel", "3", "--verify", "full", "--json"]));
    let elapsed = started.elapsed();
    let key = report["key"].as_str().expect("key").to_owned();
    assert_eq!(report["bytes"], local.len() as u64);
    let parts = server.faults.parts_seen.load(Ordering::SeqCst);
    assert_eq!(u64::from(parts), (local.len() as u64).div_ceil(5 << 20), "equal 5 MiB parts, the last shorter");
    println!(
        "multipart: {} bytes in {parts} parts, {:.2} s for the whole command, upload at {:.1} MB/s",
        local.len(),
        elapsed.as_secs_f64(),
        report["upload_bytes_per_s"].as_f64().unwrap_or(0.0) / 1e6
    );
    let target = server.target();
    let len = local.len() as u64;
    // The header, a range across the first part boundary, and the tail.
    for range in [0..16384, (5 << 20) - 100..(5 << 20) + 100, len - 1000..len] {
        let bytes = target.get_range(&key, range.clone()).expect("ranged read");
        assert_eq!(bytes, &local[range.start as usize..range.end as usize], "range {range:?}");
    }
    assert_eq!(server.pending_uploads(), 0);
}

#[test]
fn failed_parts_leave_the_previous_version_served() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let small = build_rete(dir.path(), "small", 20, 7, 12);
    ok(rete(Some(&server), home.path(), &["publish", path_str(&small), "--name", "ds", "-q"]));
    let v1 = version_of(&small);

    server.faults.fail_parts_from.store(2, Ordering::SeqCst);
    let big = big_rete();
    let failed = run(rete(Some(&server), home.path(), &["publish", path_str(big), "--name", "ds", "--part-size", "5MiB", "--retries", "1"]));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains(&format!("still serves {v1}")) && stderr.contains("re-run"), "{stderr}");
    // Parts 2 and 3 both fail, in parallel: either may be the one reported.
    assert!(stderr.contains("(part 2 of 3)") || stderr.contains("(part 3 of 3)"), "{stderr}");
    assert_eq!(server.pointer("ds").expect("pointer").version, v1);
    assert_eq!(server.target().size(&layout::file_key("ds", &version_of(big))).expect("head"), None, "no half-visible object");
    assert!(server.faults.aborts_seen.load(Ordering::SeqCst) >= 1, "the multipart upload is aborted");
    assert_eq!(server.pending_uploads(), 0, "no parts left behind");

    server.faults.fail_parts_from.store(0, Ordering::SeqCst);
    let rerun = json(rete(Some(&server), home.path(), &["publish", path_str(big), "--name", "ds", "--part-size", "5MiB", "--json"]));
    assert_eq!(rerun["action"], "uploaded");
    assert_eq!(server.pointer("ds").expect("pointer").version, version_of(big));
}

#[test]
fn transient_part_errors_are_retried() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    server.faults.fail_next_parts.store(2, Ordering::SeqCst);
    let big = big_rete();
    let report = json(rete(Some(&server), home.path(), &["publish", path_str(big), "--name", "retry", "--part-size", "5MiB", "--json"]));
    assert_eq!(report["action"], "uploaded");
    assert_eq!(server.faults.fail_next_parts.load(Ordering::SeqCst), 0, "both injected errors were hit");
    assert_eq!(server.pointer("retry").expect("pointer").version, version_of(big));
}

#[test]
fn killed_mid_upload_then_rerun() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let small = build_rete(dir.path(), "small", 20, 8, 12);
    ok(rete(Some(&server), home.path(), &["publish", path_str(&small), "--name", "ds", "-q"]));
    let v1 = version_of(&small);

    server.faults.stall_parts_from.store(2, Ordering::SeqCst);
    let big = big_rete();
    let mut child = rete(Some(&server), home.path(), &["publish", path_str(big), "--name", "ds", "--part-size", "5MiB", "--parallel", "2"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(120);
    while server.faults.parts_seen.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "the upload never reached part 2");
        assert!(child.try_wait().expect("child").is_none(), "publish ended before it was killed");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    server.faults.stall_parts_from.store(0, Ordering::SeqCst);
    assert_eq!(server.pointer("ds").expect("pointer").version, v1, "the pointer must not move");
    assert_eq!(server.target().size(&layout::file_key("ds", &version_of(big))).expect("head"), None, "no half-visible object");

    // Re-running restarts the upload and finishes.
    let rerun = json(rete(Some(&server), home.path(), &["publish", path_str(big), "--name", "ds", "--part-size", "5MiB", "--json"]));
    assert_eq!(rerun["previous"], v1.as_str());
    assert_eq!(server.pointer("ds").expect("pointer").version, version_of(big));
}

/// Waits for `child`, failing the test after [`CHILD_LIMIT`].
fn wait_within(child: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + CHILD_LIMIT;
    loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the child did not finish within {CHILD_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_aborts_the_upload() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let small = build_rete(dir.path(), "small", 20, 13, 12);
    ok(rete(Some(&server), home.path(), &["publish", path_str(&small), "--name", "ds", "-q"]));
    let v1 = version_of(&small);

    server.faults.stall_parts_from.store(2, Ordering::SeqCst);
    let big = big_rete();
    let mut child = rete(Some(&server), home.path(), &["publish", path_str(big), "--name", "ds", "--part-size", "5MiB", "--parallel", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(120);
    while server.faults.parts_seen.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "the upload never reached part 2");
        assert!(child.try_wait().expect("child").is_none(), "publish ended before it was interrupted");
        std::thread::sleep(Duration::from_millis(20));
    }
    let interrupt = output_within(Command::new("kill").args(["-INT", &child.id().to_string()]), Duration::from_secs(10));
    assert!(interrupt.status.success(), "kill -INT failed");
    let status = wait_within(&mut child);
    server.faults.stall_parts_from.store(0, Ordering::SeqCst);
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("read stderr");
    assert_eq!(status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("interrupted while uploading") && stderr.contains(&format!("still serves {v1}")), "{stderr}");
    assert!(server.faults.aborts_seen.load(Ordering::SeqCst) >= 1, "the multipart upload is aborted");
    assert_eq!(server.pointer("ds").expect("pointer").version, v1);
    assert_eq!(server.target().size(&layout::file_key("ds", &version_of(big))).expect("head"), None, "no half-visible object");
}

#[test]
fn failed_switch_then_rerun_reuses_the_upload() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let v1_file = build_rete(dir.path(), "v1", 20, 14, 12);
    let v2_file = build_rete(dir.path(), "v2", 30, 15, 12);
    let (v1, v2) = (version_of(&v1_file), version_of(&v2_file));
    ok(rete(Some(&server), home.path(), &["publish", path_str(&v1_file), "--name", "ds", "-q"]));

    // The file and its entry are written, the pointer PUT fails: v1 stays served.
    server.faults.fail_pointer_puts.store(1, Ordering::SeqCst);
    let failed = run(rete(Some(&server), home.path(), &["publish", path_str(&v2_file), "--name", "ds", "--retries", "1"]));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("datasets/ds/current.json") && stderr.contains(&format!("still serves {v1}")), "{stderr}");
    assert_eq!(server.pointer("ds").expect("pointer").version, v1);
    assert!(server.target().size(&layout::file_key("ds", &v2)).expect("head").is_some());

    // Re-running checks the stored object, reuses it and switches.
    server.faults.fail_pointer_puts.store(0, Ordering::SeqCst);
    let rerun = json(rete(Some(&server), home.path(), &["publish", path_str(&v2_file), "--name", "ds", "--json"]));
    assert_eq!((rerun["action"].as_str(), rerun["previous"].as_str()), (Some("reused"), Some(v1.as_str())));
    assert_eq!(server.pointer("ds").expect("pointer").version, v2);

    // A damaged current.json does not block a publish: it is replaced, with a warning.
    let target = server.target();
    target.put_bytes(&layout::pointer_key("ds"), b"{not json", "application/json").expect("put");
    let output = run(rete(Some(&server), home.path(), &["publish", path_str(&v1_file), "--name", "ds", "--json"]));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && stderr.contains("is invalid"), "{stderr}");
    assert_eq!(server.pointer("ds").expect("pointer").version, v1);
}

#[test]
fn a_corrupt_read_back_blocks_the_switch() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let v1_file = build_rete(dir.path(), "v1", 20, 16, 12);
    let v2_file = build_rete(dir.path(), "v2", 3000, 17, 64);
    assert!(std::fs::metadata(&v2_file).expect("v2").len() > 16 << 10, "v2 must be longer than the corrupted threshold");
    let (v1, v2) = (version_of(&v1_file), version_of(&v2_file));
    ok(rete(Some(&server), home.path(), &["publish", path_str(&v1_file), "--name", "ds", "-q"]));

    // The default check reads the object back: the flipped byte is caught, nothing switches.
    server.faults.corrupt_reads.store(1, Ordering::SeqCst);
    let failed = run(rete(Some(&server), home.path(), &["publish", path_str(&v2_file), "--name", "ds"]));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("does not match the local file: content hash") && stderr.contains(&format!("still serves {v1}")), "{stderr}");
    assert_eq!(server.pointer("ds").expect("pointer").version, v1);

    // Reads are sound again: the stored object checks out, is reused, and is switched to.
    server.faults.corrupt_reads.store(0, Ordering::SeqCst);
    let rerun = json(rete(Some(&server), home.path(), &["publish", path_str(&v2_file), "--name", "ds", "--json"]));
    assert_eq!(rerun["action"], "reused");
    assert_eq!(server.pointer("ds").expect("pointer").version, v2);
}

#[test]
fn wrong_credentials_fail_clearly() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let small = build_rete(dir.path(), "small", 10, 9, 12);
    let wrong = "wrong-secret-also-never-printed";
    let output = run(rete(Some(&server), home.path(), &["publish", path_str(&small), "--name", "ds"]).env("R2_SECRET_ACCESS_KEY", wrong));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("rejected the credentials") && stderr.contains("R2_SECRET_ACCESS_KEY"), "{stderr}");
    assert!(!stderr.contains(wrong), "{stderr}");
    assert_eq!(server.pointer("ds"), None);

    let listing = run(rete(Some(&server), home.path(), &["ls"]).env("R2_ACCESS_KEY_ID", "AKIDUNKNOWN"));
    assert_eq!(listing.status.code(), Some(4), "{}", String::from_utf8_lossy(&listing.stderr));

    // A bucket that does not exist is named. (s3s-fs creates buckets on a PUT, so only a
    // listing shows this here; R2 answers NoSuchBucket to both.)
    let listing = run(rete(Some(&server), home.path(), &["ls", "--bucket", "no-such-bucket"]));
    let stderr = String::from_utf8_lossy(&listing.stderr);
    assert_eq!(listing.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("bucket no-such-bucket at") && stderr.contains("does not exist"), "{stderr}");
}

#[test]
fn unreachable_endpoint_fails_clearly() {
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let small = build_rete(dir.path(), "small", 10, 10, 12);
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("port").port();
    let output = run(rete(None, home.path(), &["publish", path_str(&small), "--name", "ds", "--retries", "1"])
        .env("R2_ENDPOINT", format!("http://127.0.0.1:{port}"))
        .env("R2_ACCESS_KEY_ID", ACCESS)
        .env("R2_SECRET_ACCESS_KEY", SECRET)
        .env("R2_BUCKET", BUCKET));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("cannot reach"), "{stderr}");
}

#[test]
fn incomplete_configuration_is_a_usage_error() {
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let small = build_rete(dir.path(), "small", 10, 11, 12);
    let output = run(rete(None, home.path(), &["publish", path_str(&small), "--name", "ds"]).env("R2_ACCESS_KEY_ID", ACCESS));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("R2_SECRET_ACCESS_KEY") && stderr.contains("R2_BUCKET") && stderr.contains("R2_ACCOUNT_ID"), "{stderr}");
    let output = run(&mut rete(None, home.path(), &["publish", path_str(&small), "--name", "ds", "--remote"]));
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    let output = run(&mut rete(None, home.path(), &["publish", path_str(&small), "--name", "no/slash", "--local"]));
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn config_file_and_dry_run() {
    let server = Server::start();
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let small = build_rete(dir.path(), "small", 10, 12, 12);
    let config = dir.path().join("config.toml");
    let text = format!("[r2]\nendpoint = \"{}\"\naccess_key_id = \"{ACCESS}\"\nsecret_access_key = \"{SECRET}\"\nbucket = \"{BUCKET}\"\nurl = \"https://edge.example\"\n", server.endpoint);
    std::fs::write(&config, text).expect("config");
    let dry = json(rete(None, home.path(), &["publish", path_str(&small), "--name", "ds", "--config", path_str(&config), "--dry-run", "--json"]));
    assert_eq!(dry["action"], "dry-run");
    assert_eq!(dry["card_url"], "https://edge.example/ds/card");
    assert!(server.target().list("datasets/").expect("list").is_empty(), "--dry-run uploads nothing");
    let published = json(rete(None, home.path(), &["publish", path_str(&small), "--name", "ds", "--config", path_str(&config), "--json"]));
    assert_eq!(published["action"], "uploaded");
    assert_eq!(server.pointer("ds").expect("pointer").version, version_of(&small));
}

/// The directory holding the project's node_modules, if `npm ci` ran.
fn node_root() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.to_owned();
    root.join("node_modules/.bin/wrangler").is_file().then_some(root)
}

#[test]
fn local_wrangler_target() {
    let Some(root) = node_root() else {
        println!("skipped: no node_modules/.bin/wrangler (run `npm ci` at the repository root)");
        return;
    };
    let home = tempfile::tempdir().expect("home");
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("state");
    let state_arg = path_str(&state).to_owned();
    let v1_file = build_rete(dir.path(), "v1", 20, 20, 12);
    let v2_file = build_rete(dir.path(), "v2", 25, 21, 12);
    let (v1, v2) = (version_of(&v1_file), version_of(&v2_file));
    let local = |args: &[&str]| {
        let mut command = rete(None, home.path(), args);
        command.current_dir(&root).args(["--persist-to", &state_arg]);
        command
    };

    // No credentials at all: local, and said so.
    let output = run(&mut local(&["publish", path_str(&v1_file), "--name", "ds", "--json"]));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("no R2 credentials configured"), "{stderr}");
    let first: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!((first["target"].as_str(), first["bucket"].as_str()), (Some("local"), Some("rete")));
    assert_eq!(first["sparql_url"], "http://127.0.0.1:8787/ds/sparql");

    let second = json(&mut local(&["publish", path_str(&v2_file), "--name", "ds", "--local", "--json"]));
    assert_eq!(second["previous"], v1.as_str());

    // What `wrangler dev` would serve, read with wrangler itself.
    let pointer = output_within(
        Command::new(root.join("node_modules/.bin/wrangler"))
            .args(["r2", "object", "get", "rete/datasets/ds/current.json", "--local", "--persist-to", &state_arg, "--pipe"])
            .envs(rete_publisher::r2::local::QUIET_WRANGLER_ENV)
            .current_dir(&root),
        CHILD_LIMIT,
    );
    assert!(pointer.status.success(), "{}", String::from_utf8_lossy(&pointer.stderr));
    let pointer = VersionEntry::from_json(&pointer.stdout, "ds").expect("pointer JSON");
    assert_eq!(pointer.version, v2);

    // A ranged read of the stored object gives the file's bytes.
    let local_target = rete_publisher::r2::local::LocalTarget::new("rete".into(), &state, Duration::from_secs(120)).expect("local target");
    let bytes = std::fs::read(&v2_file).expect("read v2");
    let len = bytes.len() as u64;
    assert_eq!(local_target.get_range(&layout::file_key("ds", &v2), 100..len - 10).expect("ranged read"), &bytes[100..bytes.len() - 10]);

    let listing = json(&mut local(&["ls", "--local", "--json"]));
    assert_eq!(listing[0]["current"], v2.as_str());
    assert_eq!(listing[0]["versions"].as_array().map(Vec::len), Some(2));

    ok(&mut local(&["rollback", "ds", "--local"]));
    let collected = json(&mut local(&["gc", "ds", "--keep", "0", "--local", "--json"]));
    assert_eq!(collected["deleted"], serde_json::json!([v2]));
    let listing = json(&mut local(&["ls", "ds", "--local", "--json"]));
    assert_eq!(listing[0]["current"], v1.as_str());
    assert_eq!(listing[0]["versions"].as_array().map(Vec::len), Some(1));
}

/// The upload benchmark of docs/BENCHMARK.md "Publish": publishes RETE_BENCH_FILE (a
/// `.rete`) to a fresh in-process s3s-fs server RETE_BENCH_RUNS times (default 5) per
/// verify mode (RETE_BENCH_VERIFY, default "quick full"), with RETE_BENCH_BIN (default:
/// this build's `rete`) and RETE_BENCH_ARGS (extra flags), and prints each run and the medians.
///
/// RETE_BENCH_FILE=big.rete RETE_BENCH_BIN=target/release/rete \
///   cargo test -p rete-publisher --test publish -- --ignored --nocapture publish_throughput
#[test]
#[ignore]
fn publish_throughput() {
    let Some(file) = std::env::var_os("RETE_BENCH_FILE").map(PathBuf::from) else {
        println!("set RETE_BENCH_FILE to a .rete file");
        return;
    };
    let binary = std::env::var_os("RETE_BENCH_BIN").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_rete")), PathBuf::from);
    let runs: usize = std::env::var("RETE_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    let extra = std::env::var("RETE_BENCH_ARGS").unwrap_or_default();
    let bytes = std::fs::metadata(&file).expect("bench file").len();
    let home = tempfile::tempdir().expect("home");
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    println!("{} ({bytes} bytes) with {} {extra}", file.display(), binary.display());
    let modes = std::env::var("RETE_BENCH_VERIFY").unwrap_or_else(|_| "quick full".into());
    for verify in modes.split_whitespace() {
        let (mut upload_rates, mut walls) = (Vec::new(), Vec::new());
        for run in 1..=runs.max(1) {
            let server = Server::start();
            let mut args = vec!["publish", path_str(&file), "--name", "bench", "--json", "--verify", verify];
            args.extend(extra.split_whitespace());
            let started = Instant::now();
            let report = json(rete_at(&binary, Some(&server), home.path(), &args));
            let wall = started.elapsed().as_secs_f64();
            let rate = report["upload_bytes_per_s"].as_f64().expect("upload rate") / 1e6;
            println!("verify {verify} run {run}: upload {rate:.1} MB/s; whole command {wall:.2} s ({:.1} MB/s)", bytes as f64 / wall / 1e6);
            upload_rates.push(rate);
            walls.push(wall);
        }
        let wall = median(walls);
        println!("verify {verify}: median upload {:.1} MB/s; median whole command {wall:.2} s ({:.1} MB/s)", median(upload_rates), bytes as f64 / wall / 1e6);
    }
}
