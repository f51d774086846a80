//! The S3-API target: R2 at `https://<account>.r2.cloudflarestorage.com`
//! (region `auto`), or any S3-compatible endpoint. It owns a small tokio
//! runtime and blocks on it, so nothing outside this file is async.
//!
//! Uploads larger than one part use a multipart upload whose parts all have
//! the same size but the last (R2 rejects anything else), read from the file
//! in order and sent `parallel_parts` at a time; object_store retries each
//! request with backoff. On any failure, or Ctrl-C, the upload is aborted so
//! no parts linger; if the process is killed instead, the incomplete upload
//! stays invisible and R2's default lifecycle rule removes it after 7 days.

use super::config::RemoteTarget;
use super::{ObjectInfo, StorageError, Tuning, UploadStats, Verify, part_bytes_for, shorten};
use anyhow::{Context, Result};
use bytes::Bytes;
use futures::stream::{FuturesUnordered, StreamExt, TryStreamExt};
use indicatif::ProgressBar;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{Attribute, Attributes, BackoffConfig, ClientOptions, MultipartUpload, ObjectStore, ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, RetryConfig};
use rete_core::format::write::ContentHasher;
use std::fs::File;
use std::io::Read;
use std::future::Future;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A bucket reached through the S3 API.
pub struct S3Target {
    runtime: tokio::runtime::Runtime,
    store: Arc<AmazonS3>,
    endpoint: String,
    bucket: String,
    tuning: Tuning,
}

impl S3Target {
    /// Configures the client; nothing is sent yet.
    pub fn new(remote: &RemoteTarget, tuning: Tuning) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(tuning.parallel_parts.clamp(1, 8))
            .enable_all()
            .build()
            .context("cannot start the upload runtime")?;
        let retry = RetryConfig {
            backoff: BackoffConfig { init_backoff: Duration::from_millis(200), max_backoff: Duration::from_secs(10), base: 2.0 },
            max_retries: tuning.max_retries,
            retry_timeout: Duration::from_secs(300),
        };
        let client = ClientOptions::new()
            .with_allow_http(remote.endpoint.starts_with("http://"))
            .with_timeout(tuning.request_timeout)
            .with_connect_timeout(Duration::from_secs(10));
        let store = AmazonS3Builder::new()
            .with_endpoint(remote.endpoint.trim_end_matches('/'))
            .with_region("auto")
            .with_bucket_name(&remote.bucket)
            .with_access_key_id(&remote.access_key_id)
            .with_secret_access_key(remote.secret_access_key.expose())
            .with_virtual_hosted_style_request(false)
            .with_retry(retry)
            .with_client_options(client)
            .build()
            .with_context(|| format!("invalid S3 endpoint {:?}", remote.endpoint))?;
        Ok(Self { runtime, store: Arc::new(store), endpoint: remote.endpoint.clone(), bucket: remote.bucket.clone(), tuning })
    }

    /// The bucket.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// `bucket B at ENDPOINT`.
    pub fn describe(&self) -> String {
        format!("bucket {} at {}", self.bucket, self.endpoint)
    }

    fn error(&self, op: impl Into<String>, error: object_store::Error) -> StorageError {
        classify(self.describe(), op.into(), error)
    }

    /// Runs one operation to completion, or until Ctrl-C (once tokio watches
    /// SIGINT, the default "exit at once" is gone, so every wait must listen).
    fn block<T>(&self, op: &str, future: impl Future<Output = Result<T, object_store::Error>>) -> Result<T, StorageError> {
        self.runtime.block_on(async {
            tokio::select! {
                result = future => result.map_err(|e| self.error(op, e)),
                _ = tokio::signal::ctrl_c() => Err(StorageError::Interrupted { op: op.to_owned() }),
            }
        })
    }

    /// Every object under `prefix`.
    pub fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>, StorageError> {
        // object_store lists by path segments; list the parent and filter for a partial last segment.
        let (dir, _) = prefix.rsplit_once('/').unwrap_or(("", prefix));
        let dir = (!dir.is_empty()).then(|| ObjectPath::from(dir));
        let objects: Vec<object_store::ObjectMeta> = self.block(&format!("listing {prefix}"), self.store.list(dir.as_ref()).try_collect())?;
        Ok(objects
            .into_iter()
            .map(|o| ObjectInfo { key: o.location.to_string(), bytes: o.size, modified_unix_s: Some(o.last_modified.timestamp()) })
            .filter(|o| o.key.starts_with(prefix))
            .collect())
    }

    /// Small objects, fetched concurrently.
    pub fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        let fetches = keys.iter().map(|key| async move {
            match self.store.get(&ObjectPath::from(key.as_str())).await {
                Ok(result) => result.bytes().await.map(|b| Some(b.to_vec())),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        let op = if keys.len() == 1 { format!("reading {}", keys[0]) } else { format!("reading {} objects", keys.len()) };
        self.block(&op, futures::stream::iter(fetches).buffered(8).try_collect())
    }

    /// Length of an object (`None` when missing).
    pub fn size(&self, key: &str) -> Result<Option<u64>, StorageError> {
        let head = async {
            match self.store.head(&ObjectPath::from(key)).await {
                Ok(meta) => Ok(Some(meta.size)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        };
        self.block(&format!("checking {key}"), head)
    }

    /// A byte range of an object.
    pub fn get_range(&self, key: &str, range: Range<u64>) -> Result<Vec<u8>, StorageError> {
        let op = format!("reading bytes {}..{} of {key}", range.start, range.end);
        self.block(&op, self.store.get_range(&ObjectPath::from(key), range)).map(|b| b.to_vec())
    }

    /// One PUT.
    pub fn put_bytes(&self, key: &str, bytes: &[u8], content_type: &str) -> Result<(), StorageError> {
        let options = PutOptions { attributes: attributes(content_type), ..Default::default() };
        self.block(&format!("writing {key}"), self.store.put_opts(&ObjectPath::from(key), PutPayload::from(bytes.to_vec()), options)).map(drop)
    }

    /// Deletes an object.
    pub fn delete(&self, key: &str) -> Result<(), StorageError> {
        let delete = async {
            match self.store.delete(&ObjectPath::from(key)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        };
        self.block(&format!("deleting {key}"), delete)
    }

    /// Uploads `path` (`bytes` long) to `key`: one PUT when it fits in a part,
    /// else a multipart upload that is aborted on failure.
    pub fn upload_file(&self, key: &str, path: &Path, bytes: u64, progress: &ProgressBar) -> Result<UploadStats, StorageError> {
        let started = Instant::now();
        let part_bytes = part_bytes_for(bytes, self.tuning.part_bytes);
        let op = format!("uploading {key}");
        let read_error = |e: std::io::Error| StorageError::Failed { target: "the local file".into(), op: format!("reading {}", path.display()), detail: e.to_string() };
        let mut file = File::open(path).map_err(read_error)?;
        if bytes <= part_bytes {
            let mut data = Vec::with_capacity(bytes as usize);
            file.read_to_end(&mut data).map_err(read_error)?;
            let options = PutOptions { attributes: attributes(CONTENT_TYPE), ..Default::default() };
            self.block(&op, self.store.put_opts(&ObjectPath::from(key), PutPayload::from(data), options))?;
            progress.inc(bytes);
            return Ok(UploadStats { bytes, parts: 1, part_bytes: bytes, elapsed: started.elapsed() });
        }
        let parts = bytes.div_ceil(part_bytes);
        self.runtime.block_on(async {
            let options = PutMultipartOptions { attributes: attributes(CONTENT_TYPE), ..Default::default() };
            let mut upload = self.store.put_multipart_opts(&ObjectPath::from(key), options).await.map_err(|e| self.error(op.clone(), e))?;
            let send = async {
                let mut in_flight = FuturesUnordered::new();
                let mut next = 0u64;
                loop {
                    while in_flight.len() < self.tuning.parallel_parts.max(1) && next < parts {
                        let length = part_bytes.min(bytes - next * part_bytes);
                        let mut data = vec![0u8; length as usize];
                        file.read_exact(&mut data).map_err(read_error)?;
                        let sending = upload.put_part(PutPayload::from(Bytes::from(data)));
                        let part = next + 1;
                        in_flight.push(async move { sending.await.map(|()| length).map_err(|e| (part, e)) });
                        next += 1;
                    }
                    match in_flight.next().await {
                        None => return Ok(()),
                        Some(Ok(length)) => progress.inc(length),
                        Some(Err((part, e))) => return Err(self.error(format!("{op} (part {part} of {parts})"), e)),
                    }
                }
            };
            let sent = tokio::select! {
                sent = send => sent,
                _ = tokio::signal::ctrl_c() => Err(StorageError::Interrupted { op: op.clone() }),
            };
            let result = match sent {
                Ok(()) => upload.complete().await.map(drop).map_err(|e| self.error(format!("{op} (completing the multipart upload)"), e)),
                Err(e) => Err(e),
            };
            if result.is_err() {
                // Best effort: the upload is invisible either way, this only frees its parts.
                let _ = tokio::time::timeout(Duration::from_secs(30), upload.abort()).await;
            }
            result
        })?;
        Ok(UploadStats { bytes, parts, part_bytes, elapsed: started.elapsed() })
    }

    /// Checks length, header bytes and, in full mode, the content hash of
    /// the whole object read back.
    pub fn verify(&self, key: &str, bytes: u64, header: &[u8], content_hash: u128, mode: Verify, progress: &ProgressBar) -> Result<(), StorageError> {
        let mismatch = |detail: String| StorageError::Mismatch { target: self.describe(), key: key.to_owned(), detail };
        match self.size(key)? {
            Some(found) if found == bytes => {}
            Some(found) => return Err(mismatch(format!("{found} bytes stored, {bytes} sent"))),
            None => return Err(mismatch("the object is missing after the upload".into())),
        }
        let stored_header = self.get_range(key, 0..header.len() as u64)?;
        if stored_header != header {
            return Err(mismatch("its header differs".into()));
        }
        progress.inc(header.len() as u64);
        if mode == Verify::Full {
            // Ranged GETs of one part size, `parallel_parts` in flight and hashed in
            // order: each request stays within the request timeout whatever the
            // object's size, and memory stays at a few parts.
            let location = ObjectPath::from(key);
            let chunk = self.tuning.part_bytes.max(1);
            let ranges: Vec<Range<u64>> = (0..bytes.div_ceil(chunk)).map(|i| i * chunk..((i + 1) * chunk).min(bytes)).collect();
            let (hash, read) = self.block(&format!("reading {key} back"), async {
                let mut chunks = futures::stream::iter(ranges).map(|range| self.store.get_range(&location, range)).buffered(self.tuning.parallel_parts.max(1));
                let mut hasher = ContentHasher::default();
                let mut read = 0u64;
                while let Some(chunk) = chunks.next().await {
                    let chunk = chunk?;
                    hasher.update(&chunk);
                    read += chunk.len() as u64;
                    progress.set_position(read);
                }
                Ok((hasher.finish(), read))
            })?;
            if read != bytes {
                return Err(mismatch(format!("{read} bytes read back, {bytes} sent")));
            }
            if hash != content_hash {
                return Err(mismatch(format!("content hash {hash:032x} read back, {content_hash:032x} expected")));
            }
        }
        Ok(())
    }
}

/// Content type of `.rete` objects.
pub const CONTENT_TYPE: &str = "application/vnd.rete";

fn attributes(content_type: &str) -> Attributes {
    let mut attributes = Attributes::new();
    attributes.insert(Attribute::ContentType, content_type.to_owned().into());
    attributes
}

/// Sorts an object_store error into credentials, network, or other.
fn classify(target: String, op: String, error: object_store::Error) -> StorageError {
    let chain = error_chain(&error);
    let no_bucket = chain.contains("<Code>NoSuchBucket</Code>");
    let detail = shorten(&chain);
    match error {
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => StorageError::Credentials { target, op, detail },
        _ if is_connect_error(&error) => StorageError::Unreachable { target, op, detail },
        _ if no_bucket => StorageError::NoSuchBucket { target, op, detail },
        _ => StorageError::Failed { target, op, detail },
    }
}

fn is_connect_error(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if let Some(http) = e.downcast_ref::<object_store::client::HttpError>()
            && matches!(http.kind(), object_store::client::HttpErrorKind::Connect | object_store::client::HttpErrorKind::Timeout)
        {
            return true;
        }
        cause = e.source();
    }
    false
}

fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let next = e.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = e.source();
    }
    text
}
