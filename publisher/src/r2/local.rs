//! The local target: the R2 bucket that `wrangler dev` serves from
//! `--persist-to` (default `.wrangler/state`), written only through supported
//! interfaces, never by touching miniflare's files. Writes and deletes run
//! `wrangler r2 object put|delete BUCKET/KEY --local --persist-to DIR`;
//! wrangler has no list command, so listings and small reads go through
//! miniflare's `getR2Bucket()` API (one `node` call each), pointed at the same
//! `DIR/v3` that wrangler uses. Both come from the project's `node_modules`,
//! found by walking up from the current directory. Every call runs with
//! wrangler's metrics, error reports and update checks off.

use super::{ObjectInfo, StorageError, UploadStats, shorten};
use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// Environment that keeps wrangler off the network (TOOLCHAIN.md).
pub const QUIET_WRANGLER_ENV: [(&str, &str); 4] =
    [("WRANGLER_SEND_METRICS", "false"), ("WRANGLER_SEND_ERROR_REPORTS", "false"), ("CLOUDFLARE_CF_FETCH_ENABLED", "false"), ("WRANGLER_HIDE_BANNER", "true")];

/// Reads through miniflare: `node -e SCRIPT -- PERSIST BUCKET MODE ARGS…`;
/// `list PREFIX` prints `[{key,size,uploaded}]`, `get KEY…` prints an array of
/// bodies as text (only small JSON objects are read) or nulls.
const MINIFLARE_SCRIPT: &str = r#"
import { Miniflare } from "miniflare";
const [persist, bucket, mode, ...args] = process.argv.slice(1);
const mf = new Miniflare({ modules: true, script: "export default { fetch() { return new Response(null) } }", r2Buckets: { BUCKET: bucket }, defaultPersistRoot: persist + "/v3" });
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
  } else {
    for (const key of args) {
      const o = await b.get(key);
      out.push(o === null ? null : await o.text());
    }
  }
  process.stdout.write(JSON.stringify(out));
} finally {
  await mf.dispose();
}
"#;

/// Wrangler's local R2.
pub struct LocalTarget {
    bucket: String,
    persist_to: PathBuf,
    /// The directory holding `node_modules` (node runs there to resolve `miniflare`).
    node_root: PathBuf,
}

impl LocalTarget {
    /// Finds `node_modules/.bin/wrangler` above the current directory.
    pub fn new(bucket: String, persist_to: &Path) -> Result<Self> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let persist_to = if persist_to.is_absolute() { persist_to.to_owned() } else { cwd.join(persist_to) };
        let Some(node_root) = cwd.ancestors().find(|dir| dir.join("node_modules/.bin/wrangler").is_file() && dir.join("node_modules/miniflare").is_dir()) else {
            bail!(
                "the local target needs wrangler and miniflare in node_modules, and none was found above {}; run `npm ci` in the rete checkout and run rete from there (or configure R2 credentials)",
                cwd.display()
            )
        };
        Ok(Self { bucket, persist_to, node_root: node_root.to_owned() })
    }

    /// The bucket.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// `local bucket B in DIR`.
    pub fn describe(&self) -> String {
        format!("local bucket {} in {}", self.bucket, self.persist_to.display())
    }

    fn wrangler(&self, args: &[&str]) -> Result<Output, StorageError> {
        let program = self.node_root.join("node_modules/.bin/wrangler");
        let mut command = Command::new(&program);
        command.args(args).args(["--local", "--persist-to"]).arg(&self.persist_to).envs(QUIET_WRANGLER_ENV);
        run(command, &format!("wrangler {}", args.iter().take(4).copied().collect::<Vec<_>>().join(" ")))
    }

    fn miniflare(&self, mode: &str, args: &[String]) -> Result<Vec<serde_json::Value>, StorageError> {
        let mut command = Command::new("node");
        command.current_dir(&self.node_root).args(["--input-type=module", "-e", MINIFLARE_SCRIPT, "--"]).arg(&self.persist_to).arg(&self.bucket).arg(mode).args(args);
        let what = format!("node (miniflare getR2Bucket().{mode})");
        let output = run(command, &what)?;
        serde_json::from_slice(&output.stdout).map_err(|e| StorageError::Local { command: what, detail: format!("unexpected output: {e}") })
    }

    fn object_path(&self, key: &str) -> String {
        format!("{}/{key}", self.bucket)
    }

    /// Every object under `prefix`.
    pub fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>, StorageError> {
        if !self.persist_to.join("v3").is_dir() {
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
        if !self.persist_to.join("v3").is_dir() {
            return Ok(vec![None; keys.len()]);
        }
        Ok(self.miniflare("get", keys)?.into_iter().map(|body| body.as_str().map(|text| text.as_bytes().to_vec())).collect())
    }

    /// `wrangler r2 object put` of a small object.
    pub fn put_bytes(&self, key: &str, bytes: &[u8], content_type: &str) -> Result<(), StorageError> {
        let temp = tempfile::NamedTempFile::new().map_err(|e| StorageError::Local { command: "a temporary file".into(), detail: e.to_string() })?;
        std::fs::write(temp.path(), bytes).map_err(|e| StorageError::Local { command: "a temporary file".into(), detail: e.to_string() })?;
        self.put_file(key, temp.path(), content_type)
    }

    fn put_file(&self, key: &str, path: &Path, content_type: &str) -> Result<(), StorageError> {
        let path = path.to_string_lossy();
        self.wrangler(&["r2", "object", "put", &self.object_path(key), "--file", &path, "--content-type", content_type]).map(drop)
    }

    /// `wrangler r2 object put` of the file (one call; wrangler has no local size limit).
    pub fn upload_file(&self, key: &str, path: &Path, bytes: u64, progress: &ProgressBar) -> Result<UploadStats, StorageError> {
        let started = Instant::now();
        self.put_file(key, path, super::s3::CONTENT_TYPE)?;
        progress.inc(bytes);
        Ok(UploadStats { bytes, parts: 1, part_bytes: bytes, elapsed: started.elapsed() })
    }

    /// `wrangler r2 object delete`.
    pub fn delete(&self, key: &str) -> Result<(), StorageError> {
        self.wrangler(&["r2", "object", "delete", &self.object_path(key)]).map(drop)
    }
}

fn run(mut command: Command, what: &str) -> Result<Output, StorageError> {
    let output = command.output().map_err(|e| StorageError::Local { command: what.to_owned(), detail: format!("cannot start it: {e}") })?;
    if output.status.success() {
        return Ok(output);
    }
    let text = format!("{}\n{}", String::from_utf8_lossy(&output.stderr), String::from_utf8_lossy(&output.stdout));
    let tail: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).rev().take(6).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(StorageError::Local { command: what.to_owned(), detail: format!("{}: {}", output.status, shorten(&tail.join(" | "))) })
}
