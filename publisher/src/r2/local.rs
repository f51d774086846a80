//! The local target: the R2 bucket that `wrangler dev` serves from
//! `--persist-to` (default `.wrangler/state`), written only through supported
//! interfaces, never by touching miniflare's files. Writes and deletes run
//! `wrangler r2 object put|delete BUCKET/KEY --local --persist-to DIR`;
//! wrangler has no list command, so listings and reads go through miniflare's
//! `getR2Bucket()` API (one `node` call each), pointed at the same `DIR/v3`
//! that wrangler uses. Both come from the project's `node_modules`, found by
//! walking up from the current directory. Every call runs with wrangler's
//! metrics, error reports and update checks off, miniflare's `cf` fetch off,
//! and a deadline after which the child is killed: a stuck `node` must never
//! hang `rete`.

use super::{ObjectInfo, StorageError, UploadStats, Verify, shorten};
use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use rete_core::format::write::ContentHasher;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Environment that keeps wrangler off the network (TOOLCHAIN.md).
pub const QUIET_WRANGLER_ENV: [(&str, &str); 4] =
    [("WRANGLER_SEND_METRICS", "false"), ("WRANGLER_SEND_ERROR_REPORTS", "false"), ("CLOUDFLARE_CF_FETCH_ENABLED", "false"), ("WRANGLER_HIDE_BANNER", "true")];

/// Reads through miniflare: `node -e SCRIPT -- PERSIST BUCKET MODE ARGS…`.
/// `list PREFIX` prints `[{key,size,uploaded}]`; `get KEY…` prints an array
/// of bodies as text (only small JSON objects are read this way) or nulls;
/// `save KEY PATH [OFFSET LENGTH]` writes the object (or that range of it) to
/// PATH and prints `[{size}]`, or `[null]` when the key is missing.
///
/// CommonJS on purpose, and `cf: false`: miniflare's proxy runs a worker
/// thread that inherits node's `execArgv`, so `--input-type=module` would turn
/// that thread's CommonJS into a syntax error and leave `getR2Bucket()` waiting
/// forever; and without `cf: false` miniflare fetches `Request.cf` from
/// workers.cloudflare.com.
const MINIFLARE_SCRIPT: &str = r#"
const { Miniflare } = require("miniflare");
const fs = require("node:fs");
const { Readable } = require("node:stream");
const { pipeline } = require("node:stream/promises");
const [persist, bucket, mode, ...args] = process.argv.slice(1);
(async () => {
  const mf = new Miniflare({ cf: false, modules: true, script: "export default { fetch() { return new Response(null) } }", r2Buckets: { BUCKET: bucket }, defaultPersistRoot: persist + "/v3" });
  try {
    const b = await mf.getR2Bucket("BUCKET");
    const out = [];
    if (mode === "list") {
      let cursor;
      do {
        const page = await b.list({ prefix: args[0], cursor });
        for (const o of page.objects) out.push({ key: o.key, size: o.size, uploaded: Math.floor(o.uploaded.getTime() / 1000) });
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
    } else if (mode === "get") {
      for (const key of args) {
        const o = await b.get(key);
        out.push(o === null ? null : await o.text());
      }
    } else if (mode === "save") {
      const [key, path, offset, length] = args;
      const o = await b.get(key, offset === undefined ? undefined : { range: { offset: Number(offset), length: Number(length) } });
      if (o === null) {
        out.push(null);
      } else {
        await pipeline(Readable.fromWeb(o.body), fs.createWriteStream(path));
        out.push({ size: o.size });
      }
    } else {
      throw new Error("unknown mode " + mode);
    }
    process.stdout.write(JSON.stringify(out));
  } finally {
    await mf.dispose();
  }
})().catch((e) => { console.error(String(e && e.stack || e)); process.exitCode = 1; });
"#;

/// Deadline of one `node` (miniflare) call; they take about a second.
const NODE_TIMEOUT: Duration = Duration::from_secs(90);

/// Wrangler's local R2.
pub struct LocalTarget {
    bucket: String,
    persist_to: PathBuf,
    /// The directory holding `node_modules` (node runs there to resolve `miniflare`).
    node_root: PathBuf,
    /// Deadline of one wrangler call, plus [`Self::per_mib`] for each MiB it sends.
    timeout: Duration,
}

impl LocalTarget {
    /// Finds `node_modules/.bin/wrangler` above the current directory.
    /// `timeout` bounds each wrangler call (more for large files).
    pub fn new(bucket: String, persist_to: &Path, timeout: Duration) -> Result<Self> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let persist_to = if persist_to.is_absolute() { persist_to.to_owned() } else { cwd.join(persist_to) };
        let Some(node_root) = cwd.ancestors().find(|dir| dir.join("node_modules/.bin/wrangler").is_file() && dir.join("node_modules/miniflare").is_dir()) else {
            bail!(
                "the local target needs wrangler and miniflare in node_modules, and none was found above {}; run `npm ci` in the rete checkout and run rete from there (or configure R2 credentials)",
                cwd.display()
            )
        };
        Ok(Self { bucket, persist_to, node_root: node_root.to_owned(), timeout })
    }

    /// The bucket.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// `local bucket B in DIR`.
    pub fn describe(&self) -> String {
        format!("local bucket {} in {}", self.bucket, self.persist_to.display())
    }

    /// A wrangler call's deadline: the base timeout plus a second per 4 MiB sent.
    fn per_mib(&self, bytes: u64) -> Duration {
        self.timeout + Duration::from_secs(bytes >> 22)
    }

    fn wrangler(&self, args: &[&str], timeout: Duration) -> Result<Vec<u8>, StorageError> {
        let program = self.node_root.join("node_modules/.bin/wrangler");
        let mut command = Command::new(&program);
        command.args(args).args(["--local", "--persist-to"]).arg(&self.persist_to).envs(QUIET_WRANGLER_ENV);
        run(command, &format!("wrangler {}", args.iter().take(4).copied().collect::<Vec<_>>().join(" ")), timeout)
    }

    fn miniflare(&self, mode: &str, args: &[String]) -> Result<Vec<serde_json::Value>, StorageError> {
        let mut command = Command::new("node");
        command.current_dir(&self.node_root).args(["-e", MINIFLARE_SCRIPT, "--"]).arg(&self.persist_to).arg(&self.bucket).arg(mode).args(args);
        let what = format!("node (miniflare getR2Bucket() {mode})");
        let stdout = run(command, &what, NODE_TIMEOUT)?;
        serde_json::from_slice(&stdout).map_err(|e| StorageError::Local { command: what, detail: format!("unexpected output: {e}") })
    }

    fn object_path(&self, key: &str) -> String {
        format!("{}/{key}", self.bucket)
    }

    /// False until wrangler first wrote to the bucket's state directory.
    fn has_state(&self) -> bool {
        self.persist_to.join("v3").is_dir()
    }

    /// Every object under `prefix`.
    pub fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>, StorageError> {
        if !self.has_state() {
            return Ok(Vec::new());
        }
        let bad = |detail: &str| StorageError::Local { command: "node (miniflare list)".into(), detail: detail.into() };
        self.miniflare("list", &[prefix.to_owned()])?
            .into_iter()
            .map(|o| {
                Ok(ObjectInfo {
                    key: o["key"].as_str().ok_or_else(|| bad("object without a key"))?.to_owned(),
                    bytes: o["size"].as_u64().ok_or_else(|| bad("object without a size"))?,
                    modified_unix_s: o["uploaded"].as_i64(),
                })
            })
            .collect()
    }

    /// Small objects in full.
    pub fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        if !self.has_state() {
            return Ok(vec![None; keys.len()]);
        }
        Ok(self.miniflare("get", keys)?.into_iter().map(|body| body.as_str().map(|text| text.as_bytes().to_vec())).collect())
    }

    /// Length of an object (`None` when missing).
    pub fn size(&self, key: &str) -> Result<Option<u64>, StorageError> {
        Ok(self.list(key)?.into_iter().find(|o| o.key == key).map(|o| o.bytes))
    }

    /// Copies an object, or a range of it, into a temporary file; `None` when missing.
    fn save(&self, key: &str, range: Option<std::ops::Range<u64>>) -> Result<Option<(u64, tempfile::NamedTempFile)>, StorageError> {
        let temp_error = |e: std::io::Error| StorageError::Local { command: "a temporary file".into(), detail: e.to_string() };
        if !self.has_state() {
            return Ok(None);
        }
        let file = tempfile::NamedTempFile::new().map_err(temp_error)?;
        let mut args = vec![key.to_owned(), file.path().to_string_lossy().into_owned()];
        if let Some(range) = range {
            args.extend([range.start.to_string(), range.end.saturating_sub(range.start).to_string()]);
        }
        let answer = self.miniflare("save", &args)?;
        match answer.first().and_then(|o| o["size"].as_u64()) {
            Some(size) => Ok(Some((size, file))),
            None => Ok(None),
        }
    }

    /// A byte range of an object.
    pub fn get_range(&self, key: &str, range: std::ops::Range<u64>) -> Result<Vec<u8>, StorageError> {
        let missing = || StorageError::Failed { target: self.describe(), op: format!("reading bytes {}..{} of {key}", range.start, range.end), detail: "no such object".into() };
        let (_, file) = self.save(key, Some(range.clone()))?.ok_or_else(missing)?;
        std::fs::read(file.path()).map_err(|e| StorageError::Local { command: "a temporary file".into(), detail: e.to_string() })
    }

    /// `wrangler r2 object put` of a small object.
    pub fn put_bytes(&self, key: &str, bytes: &[u8], content_type: &str) -> Result<(), StorageError> {
        let temp = tempfile::NamedTempFile::new().map_err(|e| StorageError::Local { command: "a temporary file".into(), detail: e.to_string() })?;
        std::fs::write(temp.path(), bytes).map_err(|e| StorageError::Local { command: "a temporary file".into(), detail: e.to_string() })?;
        self.put_file(key, temp.path(), bytes.len() as u64, content_type)
    }

    fn put_file(&self, key: &str, path: &Path, bytes: u64, content_type: &str) -> Result<(), StorageError> {
        let path = path.to_string_lossy();
        self.wrangler(&["r2", "object", "put", &self.object_path(key), "--file", &path, "--content-type", content_type], self.per_mib(bytes)).map(drop)
    }

    /// `wrangler r2 object put` of the file (one call; wrangler has no local size limit).
    pub fn upload_file(&self, key: &str, path: &Path, bytes: u64, progress: &ProgressBar) -> Result<UploadStats, StorageError> {
        let started = Instant::now();
        self.put_file(key, path, bytes, super::s3::CONTENT_TYPE)?;
        progress.inc(bytes);
        Ok(UploadStats { bytes, parts: 1, part_bytes: bytes, elapsed: started.elapsed() })
    }

    /// Checks the stored object: its length and header, and in full mode its content hash.
    pub fn verify(&self, key: &str, bytes: u64, header: &[u8], content_hash: u128, mode: Verify, progress: &ProgressBar) -> Result<(), StorageError> {
        let mismatch = |detail: String| StorageError::Mismatch { target: self.describe(), key: key.to_owned(), detail };
        let range = (mode == Verify::Quick).then_some(0..header.len() as u64);
        let Some((size, file)) = self.save(key, range)? else { return Err(mismatch("the object is missing after the upload".into())) };
        if size != bytes {
            return Err(mismatch(format!("{size} bytes stored, {bytes} sent")));
        }
        let read_error = |e: std::io::Error| StorageError::Local { command: "a temporary file".into(), detail: e.to_string() };
        let mut reader = std::fs::File::open(file.path()).map_err(read_error)?;
        let mut stored_header = vec![0u8; header.len()];
        reader.read_exact(&mut stored_header).map_err(|_| mismatch("it is shorter than its header".into()))?;
        if stored_header != header {
            return Err(mismatch("its header differs".into()));
        }
        progress.inc(header.len() as u64);
        if mode == Verify::Full {
            let mut hasher = ContentHasher::default();
            hasher.update(&stored_header);
            let mut buffer = vec![0u8; 1 << 20];
            let mut read = header.len() as u64;
            loop {
                let n = reader.read(&mut buffer).map_err(read_error)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buffer[..n]);
                read += n as u64;
                progress.inc(n as u64);
            }
            if read != bytes {
                return Err(mismatch(format!("{read} bytes read back, {bytes} sent")));
            }
            let hash = hasher.finish();
            if hash != content_hash {
                return Err(mismatch(format!("content hash {hash:032x} read back, {content_hash:032x} expected")));
            }
        }
        Ok(())
    }

    /// `wrangler r2 object delete`.
    pub fn delete(&self, key: &str) -> Result<(), StorageError> {
        self.wrangler(&["r2", "object", "delete", &self.object_path(key)], self.timeout).map(drop)
    }
}

/// Runs `command` to completion within `timeout` and returns its stdout; a
/// failure, or the deadline (the child is then killed), is a
/// [`StorageError::Local`] carrying the last lines of its output.
fn run(mut command: Command, what: &str, timeout: Duration) -> Result<Vec<u8>, StorageError> {
    let failed = |detail: String| StorageError::Local { command: what.to_owned(), detail };
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| failed(format!("cannot start it: {e}")))?;
    // Drained on threads so a chatty child never blocks on a full pipe. The
    // bytes come back in chunks through channels, so a grandchild (workerd)
    // that keeps a pipe open cannot block us once the child is gone.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let (sender, receiver) = mpsc::channel::<Vec<u8>>();
        if let Some(mut pipe) = pipe {
            std::thread::spawn(move || {
                let mut buffer = vec![0u8; 64 << 10];
                while let Ok(n @ 1..) = pipe.read(&mut buffer) {
                    if sender.send(buffer[..n].to_vec()).is_err() {
                        break;
                    }
                }
            });
        }
        receiver
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let deadline = Instant::now() + timeout;
    let status: Option<ExitStatus> = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Err(e) => return Err(failed(format!("cannot wait for it: {e}"))),
        }
    };
    // What the pipes still hold, waiting at most a few seconds for them to close.
    let grace = Instant::now() + Duration::from_secs(if status.is_some() { 5 } else { 1 });
    let collect = |receiver: mpsc::Receiver<Vec<u8>>| {
        let mut bytes = Vec::new();
        while let Ok(chunk) = receiver.recv_timeout(grace.saturating_duration_since(Instant::now())) {
            bytes.extend_from_slice(&chunk);
        }
        bytes
    };
    let (out, err) = (collect(stdout), collect(stderr));
    let tail = || {
        let text = format!("{}\n{}", String::from_utf8_lossy(&err), String::from_utf8_lossy(&out));
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        shorten(&lines[lines.len().saturating_sub(6)..].join(" | "))
    };
    match status {
        Some(status) if status.success() => Ok(out),
        Some(status) => Err(failed(format!("{status}: {}", tail()))),
        None => Err(failed(format!("did not finish within {} s and was killed; output so far: {}", timeout.as_secs(), tail()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stuck_child_is_killed_at_its_deadline() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo started; sleep 30"]);
        let started = Instant::now();
        let error = run(command, "sh", Duration::from_millis(300)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
        assert!(error.contains("did not finish within") && error.contains("started"), "{error}");
    }

    #[test]
    fn failures_carry_the_output() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo out; echo bad thing >&2; exit 3"]);
        let error = run(command, "sh", Duration::from_secs(10)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("bad thing") && error.contains("sh failed"), "{error}");
        let mut command = Command::new("sh");
        command.args(["-c", "printf ok"]);
        assert_eq!(run(command, "sh", Duration::from_secs(10)).ok(), Some(b"ok".to_vec()));
    }
}
