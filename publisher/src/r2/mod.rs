//! Where `rete publish`, `ls`, `rollback` and `gc` put and find datasets: R2
//! through its S3-compatible API ([`s3`]), or wrangler's local R2 ([`local`])
//! that `wrangler dev` serves. Both speak the object layout of [`layout`]; the
//! commands see only [`Target`], a small synchronous interface.
//!
//! **Why object_store.** The S3 client is `object_store` 0.14 (the `aws`
//! feature), measured against the alternatives on this machine (TOOLCHAIN.md):
//! it has multipart uploads whose parts we size and run in parallel ourselves
//! (`put_part` futures are independent), retries with exponential backoff and
//! jitter on 5xx, 429 and connection errors, request timeouts, and custom
//! endpoints with path-style requests and `allow_http` for local servers; it
//! uploaded 1 GiB to R2 at 110–130 MB/s in 43 MB of memory. `rusty-s3` + `ureq`
//! builds lighter but leaves multipart, parallelism and retries to us;
//! `aws-sdk-s3` is the heaviest build and needs checksum settings changed to
//! work with R2. The price is tokio and reqwest: they stay in this module
//! (`Target` blocks on its own runtime) and in the publisher crate, never in
//! rete-core. They bring 92 of the publisher's 221 crates (`cargo tree -e normal`,
//! November 2026): hyper, reqwest, tokio and their helpers; rustls is shared with ureq.

pub mod catalog;
pub mod config;
pub use rete_layout as layout;
pub mod local;
pub mod s3;

use anyhow::Result;
use indicatif::ProgressBar;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A failure of the storage itself, as opposed to bad input or a bad flag:
/// `rete` exits with 4 on it, and nothing was switched.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// 401/403: wrong key id or secret, or a token without access to the bucket.
    #[error("{target} rejected the credentials while {op}: {detail}; check R2_ACCESS_KEY_ID and R2_SECRET_ACCESS_KEY (and that the API token may write to the bucket)")]
    Credentials {
        /// The target's description.
        target: String,
        /// What was being done.
        op: String,
        /// The server's answer.
        detail: String,
    },
    /// DNS, connection refused, TLS, timeouts, after the retries.
    #[error("cannot reach {target} while {op}: {detail}; check R2_ACCOUNT_ID / R2_ENDPOINT and the network")]
    Unreachable {
        /// The target's description.
        target: String,
        /// What was being done.
        op: String,
        /// The underlying error.
        detail: String,
    },
    /// The bucket is not there (S3's `NoSuchBucket`).
    #[error("{target} does not exist ({op}): {detail}; create the bucket (npx wrangler r2 bucket create NAME) or set R2_BUCKET / --bucket to an existing one")]
    NoSuchBucket {
        /// The target's description.
        target: String,
        /// What was being done.
        op: String,
        /// The server's answer.
        detail: String,
    },
    /// Any other error answer (5xx after retries, …).
    #[error("{target} failed while {op}: {detail}")]
    Failed {
        /// The target's description.
        target: String,
        /// What was being done.
        op: String,
        /// The server's answer.
        detail: String,
    },
    /// The object read back is not the file that was sent.
    #[error("{key} on {target} does not match the local file: {detail}")]
    Mismatch {
        /// The target's description.
        target: String,
        /// The object key.
        key: String,
        /// What differs.
        detail: String,
    },
    /// Ctrl-C during an upload (the multipart upload was aborted).
    #[error("interrupted while {op}")]
    Interrupted {
        /// What was being done.
        op: String,
    },
    /// A `wrangler` or `node` command for the local target failed.
    #[error("{command} failed: {detail}")]
    Local {
        /// The command line, shortened.
        command: String,
        /// Its exit status and last lines of output.
        detail: String,
    },
}

/// One object of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Full key.
    pub key: String,
    /// Length.
    pub bytes: u64,
    /// Last modification, seconds since the Unix epoch, when the target says.
    pub modified_unix_s: Option<i64>,
}

/// How an upload went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UploadStats {
    /// Bytes sent.
    pub bytes: u64,
    /// Parts (1 for a single PUT).
    pub parts: u64,
    /// Bytes of each part but the last.
    pub part_bytes: u64,
    /// Wall time of the upload.
    pub elapsed: Duration,
}

/// How hard to check an uploaded object before switching to it. Either way
/// each request body was already checked by the server against the SHA-256
/// that signs it (SigV4 `x-amz-content-sha256`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verify {
    /// Length (HEAD) and the header bytes (a ranged GET), which carry the content hash.
    Quick,
    /// Also read the whole object back and recompute its content hash.
    #[default]
    Full,
}

/// The parameters of uploads to an S3 API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Size of every multipart part but the last (R2: equal sizes, at least 5 MiB).
    pub part_bytes: u64,
    /// Parts in flight at once (memory: about `part_bytes × parallel_parts`).
    pub parallel_parts: usize,
    /// Retries of one failed request, with exponential backoff.
    pub max_retries: usize,
    /// Timeout of one request.
    pub request_timeout: Duration,
}

impl Default for Tuning {
    fn default() -> Self {
        Self { part_bytes: 16 << 20, parallel_parts: 4, max_retries: 5, request_timeout: Duration::from_secs(120) }
    }
}

/// Smallest part S3 and R2 accept (every part but the last).
pub const MIN_PART_BYTES: u64 = 5 << 20;
/// Most parts in one multipart upload.
pub const MAX_PARTS: u64 = 10_000;

/// Which kind of target to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Remote when credentials are configured, else local (with a notice).
    Auto,
    /// Wrangler's local R2.
    Local,
    /// R2's S3 API; missing credentials are an error.
    Remote,
}

/// Everything that selects and configures a target.
#[derive(Debug, Clone)]
pub struct TargetOptions {
    /// Remote, local, or decide from the configuration.
    pub choice: Choice,
    /// `--config`.
    pub config_file: Option<PathBuf>,
    /// `--bucket`.
    pub bucket: Option<String>,
    /// `--persist-to` (local only).
    pub persist_to: PathBuf,
    /// Uploads (remote only).
    pub tuning: Tuning,
}

/// Bucket of the local target when `--bucket` is not given.
pub const LOCAL_BUCKET: &str = "rete";

/// A place datasets are published to.
pub enum Target {
    /// R2 (or another S3-compatible server).
    S3(s3::S3Target),
    /// Wrangler's local R2.
    Local(local::LocalTarget),
}

/// An opened target, with the configuration's base URL and any notice to print.
pub struct Opened {
    /// The target.
    pub target: Target,
    /// `url` from the config file or `RETE_URL`.
    pub configured_url: Option<String>,
    /// Said on stderr before anything else (why this target was chosen).
    pub notice: Option<String>,
}

/// Resolves the configuration and opens the target.
pub fn open(options: &TargetOptions) -> Result<Opened> {
    let config = config::R2Config::load(options.config_file.as_deref())?;
    let configured_url = config.url.clone();
    let local = |notice| -> Result<Opened> {
        let bucket = options.bucket.clone().unwrap_or_else(|| LOCAL_BUCKET.to_owned());
        let target = local::LocalTarget::new(bucket, &options.persist_to, options.tuning.request_timeout)?;
        Ok(Opened { target: Target::Local(target), configured_url: configured_url.clone(), notice })
    };
    match options.choice {
        Choice::Local => local(None),
        Choice::Auto if config.is_empty() => local(Some(format!(
            "no R2 credentials configured (R2_ACCOUNT_ID, R2_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY, R2_BUCKET, or {}); using wrangler's local R2 in {} (pass --local to silence this, --remote to require R2)",
            config::default_path().map_or_else(|| "a config file".to_owned(), |p| p.display().to_string()),
            options.persist_to.display()
        ))),
        Choice::Auto | Choice::Remote => {
            let remote = config.complete(options.bucket.as_deref())?;
            Ok(Opened { target: Target::S3(s3::S3Target::new(&remote, options.tuning)?), configured_url, notice: None })
        }
    }
}

impl Target {
    /// A short description for messages: `bucket B at ENDPOINT` or `local bucket B in DIR`.
    pub fn describe(&self) -> String {
        match self {
            Target::S3(t) => t.describe(),
            Target::Local(t) => t.describe(),
        }
    }

    /// The bucket name.
    pub fn bucket(&self) -> &str {
        match self {
            Target::S3(t) => t.bucket(),
            Target::Local(t) => t.bucket(),
        }
    }

    /// True for wrangler's local R2.
    pub fn is_local(&self) -> bool {
        matches!(self, Target::Local(_))
    }

    /// Every object whose key starts with `prefix`.
    pub fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>, StorageError> {
        match self {
            Target::S3(t) => t.list(prefix),
            Target::Local(t) => t.list(prefix),
        }
    }

    /// Small objects in full (`None` for a missing key), in the order asked.
    pub fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Target::S3(t) => t.get_many(keys),
            Target::Local(t) => t.get_many(keys),
        }
    }

    /// One small object (`None` when missing).
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.get_many(&[key.to_owned()])?.into_iter().next().flatten())
    }

    /// Length of an object, `None` when missing.
    pub fn size(&self, key: &str) -> Result<Option<u64>, StorageError> {
        match self {
            Target::S3(t) => t.size(key),
            Target::Local(t) => t.size(key),
        }
    }

    /// Writes a small object in one PUT.
    pub fn put_bytes(&self, key: &str, bytes: &[u8], content_type: &str) -> Result<(), StorageError> {
        match self {
            Target::S3(t) => t.put_bytes(key, bytes, content_type),
            Target::Local(t) => t.put_bytes(key, bytes, content_type),
        }
    }

    /// Uploads a file; the object appears only once it is complete.
    pub fn upload_file(&self, key: &str, path: &Path, bytes: u64, progress: &ProgressBar) -> Result<UploadStats, StorageError> {
        match self {
            Target::S3(t) => t.upload_file(key, path, bytes, progress),
            Target::Local(t) => t.upload_file(key, path, bytes, progress),
        }
    }

    /// Checks the uploaded object against the local file: its length, its
    /// header bytes (which hold the content hash), and with [`Verify::Full`]
    /// the content hash of every byte read back. `progress` counts bytes read.
    pub fn verify(&self, key: &str, bytes: u64, header: &[u8], content_hash: u128, mode: Verify, progress: &ProgressBar) -> Result<(), StorageError> {
        match self {
            Target::S3(t) => t.verify(key, bytes, header, content_hash, mode, progress),
            Target::Local(t) => t.verify(key, bytes, header, content_hash, mode, progress),
        }
    }

    /// A byte range of an object.
    pub fn get_range(&self, key: &str, range: Range<u64>) -> Result<Vec<u8>, StorageError> {
        match self {
            Target::S3(t) => t.get_range(key, range),
            Target::Local(t) => t.get_range(key, range),
        }
    }

    /// Deletes an object (a missing one is not an error).
    pub fn delete(&self, key: &str) -> Result<(), StorageError> {
        match self {
            Target::S3(t) => t.delete(key),
            Target::Local(t) => t.delete(key),
        }
    }
}

/// Part size for a file: `wanted` (at least [`MIN_PART_BYTES`]), grown in
/// whole MiB when the file would need more than [`MAX_PARTS`] parts.
pub fn part_bytes_for(file_bytes: u64, wanted: u64) -> u64 {
    let floor = file_bytes.div_ceil(MAX_PARTS).div_ceil(1 << 20) << 20;
    wanted.max(MIN_PART_BYTES).max(floor)
}

/// Shortens a long error text for a one-line message.
pub(crate) fn shorten(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > 400 { format!("{}…", text.chars().take(400).collect::<String>()) } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_sizes() {
        assert_eq!(part_bytes_for(100 << 20, 16 << 20), 16 << 20);
        assert_eq!(part_bytes_for(100 << 20, 1 << 20), MIN_PART_BYTES);
        // 1 TiB in 16 MiB parts would be 65,536 parts: grow to 105 MiB.
        let part = part_bytes_for(1 << 40, 16 << 20);
        assert_eq!(part % (1 << 20), 0);
        assert!((1u64 << 40).div_ceil(part) <= MAX_PARTS);
    }
}
