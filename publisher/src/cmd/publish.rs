//! `rete publish`: build (or take a ready `.rete`), upload, verify, then
//! switch `datasets/NAME/current.json`, in that order, so that readers see
//! either the old version or the new one and never part of a file. The object
//! key is the content hash, which makes a re-run after any failure safe: it
//! uploads afresh (multipart uploads restart; they do not resume), or reuses
//! an object a previous run finished, and then switches the pointer.

use crate::cmd::UsageError;
use crate::cmd::build::BuildSettings;
use crate::r2::layout::{self, VersionEntry};
use crate::r2::{self, TargetOptions, Verify};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use rete_core::Header;
use rete_core::format::write::ContentHasher;
use serde::Serialize;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What `rete publish` was asked to do.
#[derive(Debug, Clone)]
pub struct PublishOptions {
    /// RDF files to build, or one ready `.rete` file.
    pub inputs: Vec<PathBuf>,
    /// Dataset name.
    pub name: String,
    /// Keep the built file here (default: a temporary file, removed).
    pub output: Option<PathBuf>,
    /// How to build RDF inputs (as `rete build`).
    pub build: BuildSettings,
    /// Where to publish.
    pub target: TargetOptions,
    /// Base URL of the Worker for the printed links.
    pub url: Option<String>,
    /// How to check the uploaded object.
    pub verify: Verify,
    /// Print one JSON object on stdout instead of text.
    pub json: bool,
    /// Say what would happen; upload and switch nothing.
    pub dry_run: bool,
    /// Progress bars on stderr.
    pub progress: bool,
    /// No summary on stderr.
    pub quiet: bool,
}

/// What a publish did: printed as text or, with `--json`, as this object.
#[derive(Debug, Clone, Serialize)]
pub struct PublishReport {
    /// Dataset name.
    pub dataset: String,
    /// Content hash of the published file.
    pub version: String,
    /// Object key of the file.
    pub key: String,
    /// Its length.
    pub bytes: u64,
    /// Distinct quads.
    pub quads: u64,
    /// `r2` or `local`.
    pub target: &'static str,
    /// Bucket.
    pub bucket: String,
    /// The version served before, if any.
    pub previous: Option<String>,
    /// `uploaded`, `reused` (the object was already there), `unchanged`
    /// (already current) or `dry-run`.
    pub action: &'static str,
    /// Upload speed, when something was uploaded.
    pub upload_bytes_per_s: Option<f64>,
    /// `<base>/NAME/card`, when a base URL is known.
    pub card_url: Option<String>,
    /// `<base>/NAME/sparql`, when a base URL is known.
    pub sparql_url: Option<String>,
}

/// Default base URL for the local target: `wrangler dev`'s address.
pub const LOCAL_URL: &str = "http://127.0.0.1:8787";

/// Runs `rete publish` and prints its report.
pub fn run(options: &PublishOptions) -> Result<()> {
    let report = publish(options)?;
    if options.json {
        println!("{}", serde_json::to_string(&report)?);
    } else if !options.quiet {
        print_report(&report);
    }
    Ok(())
}

/// Publishes and returns what was done (tests call this directly).
pub fn publish(options: &PublishOptions) -> Result<PublishReport> {
    layout::check_name(&options.name).map_err(UsageError)?;
    let opened = r2::open(&options.target)?;
    if let Some(notice) = &opened.notice
        && !options.quiet
    {
        eprintln!("rete: {notice}");
    }
    let target = opened.target;
    let base_url = options.url.clone().or(opened.configured_url).or_else(|| target.is_local().then(|| LOCAL_URL.to_owned()));

    // 1. The file: given, or built into a temporary directory (removed on return).
    let temp_dir;
    let file = match ready_rete(&options.inputs)? {
        Some(path) => path,
        None => {
            let output = match &options.output {
                Some(path) => path.clone(),
                None => {
                    let root = options.build.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
                    temp_dir = tempfile::Builder::new().prefix(".rete-publish-").tempdir_in(&root).with_context(|| format!("cannot create a temporary directory in {}", root.display()))?;
                    temp_dir.path().join(format!("{}.rete", options.name))
                }
            };
            options.build.build(&options.inputs, &output, options.progress, !options.quiet)?;
            output
        }
    };
    let local = LocalFile::read(&file)?;
    let version = local.header.content_hash_hex();
    let key = layout::file_key(&options.name, &version);
    let pointer_key = layout::pointer_key(&options.name);
    let mut report = PublishReport {
        dataset: options.name.clone(),
        version: version.clone(),
        key: key.clone(),
        bytes: local.bytes,
        quads: local.header.quad_count,
        target: if target.is_local() { "local" } else { "r2" },
        bucket: target.bucket().to_owned(),
        previous: None,
        action: "dry-run",
        upload_bytes_per_s: None,
        card_url: base_url.as_ref().map(|base| format!("{}/{}/card", base.trim_end_matches('/'), options.name)),
        sparql_url: base_url.as_ref().map(|base| format!("{}/{}/sparql", base.trim_end_matches('/'), options.name)),
    };

    // 2. What is served now.
    let current = match target.get(&pointer_key)? {
        Some(bytes) => match VersionEntry::from_json(&bytes, &options.name) {
            Ok(entry) => Some(entry),
            // Publishing replaces it; say so rather than refuse.
            Err(e) => {
                eprintln!("rete: warning: {pointer_key} on {} is invalid ({e}); this publish replaces it", target.describe());
                None
            }
        },
        None => None,
    };
    report.previous = current.as_ref().map(|c| c.version.clone());
    let still = match &current {
        Some(current) => format!("{pointer_key} was not changed and still serves {}", current.version),
        None => format!("{pointer_key} was not written; nothing is served yet"),
    };
    if options.dry_run {
        if !options.quiet && !options.json {
            let existing = target.size(&key)?;
            eprintln!(
                "dry run: would {} {} ({} bytes, {} quads) as {key} on {}, then switch {pointer_key} from {}",
                if existing == Some(local.bytes) { "reuse the stored" } else { "upload" },
                file.display(),
                local.bytes,
                local.header.quad_count,
                target.describe(),
                report.previous.as_deref().unwrap_or("nothing")
            );
        }
        return Ok(report);
    }
    // A pointer written before entries carried the card's title and licence, or the
    // file's first read, is rewritten.
    let current_is_whole = |c: &VersionEntry| {
        c.version == version && c.key == key && c.title == local.title && c.license == local.license && c.first_read() == Some(Ok(local.first_read.clone()))
    };
    if current.as_ref().is_some_and(current_is_whole) && target.size(&key)? == Some(local.bytes) {
        report.action = "unchanged";
        return Ok(report);
    }

    // 3. The file, unless a previous run already stored it.
    let mut upload = || -> Result<()> {
        let stored = target.size(&key)?;
        let show = options.progress && !options.quiet;
        let reusable = stored == Some(local.bytes) && {
            let bar = progress_bar(show, local.bytes, format!("checking the stored {key}"));
            let checked = target.verify(&key, local.bytes, &local.header_bytes, local.header.content_hash, options.verify, &bar);
            bar.finish_and_clear();
            checked.is_ok()
        };
        if reusable {
            report.action = "reused";
        } else {
            let bar = progress_bar(show, local.bytes, format!("uploading to {}", target.describe()));
            let stats = target.upload_file(&key, &file, local.bytes, &bar)?;
            bar.finish_and_clear();
            let rate = stats.bytes as f64 / stats.elapsed.as_secs_f64().max(1e-9);
            report.action = "uploaded";
            report.upload_bytes_per_s = Some(rate);
            if !options.quiet && !options.json {
                let parts = if stats.parts > 1 { format!(", {} parts of {} MiB", stats.parts, stats.part_bytes >> 20) } else { String::new() };
                eprintln!("uploaded {} bytes in {:.2} s ({:.1} MB/s{parts})", stats.bytes, stats.elapsed.as_secs_f64(), rate / 1e6);
            }
            let bar = progress_bar(show, local.bytes, format!("verifying {key}"));
            let checked = target.verify(&key, local.bytes, &local.header_bytes, local.header.content_hash, options.verify, &bar);
            bar.finish_and_clear();
            checked?;
        }
        // 4. The history entry (kept as first written), then the switch.
        let entry_key = layout::entry_key(&options.name, &version);
        // A version published before (then rolled away from) keeps its first publish time.
        let existing = if reusable { target.get(&entry_key)?.and_then(|bytes| VersionEntry::from_json(&bytes, &options.name).ok()) } else { None };
        let published_at = match &existing {
            Some(entry) if entry.key == key && entry.bytes == local.bytes => entry.published_at.clone(),
            _ => now_rfc3339(),
        };
        let mut entry = VersionEntry {
            name: options.name.clone(),
            version: version.clone(),
            key: key.clone(),
            bytes: local.bytes,
            quads: local.header.quad_count,
            published_at,
            title: local.title.clone(),
            license: local.license.clone(),
            head: None,
        };
        entry.set_first_read(&local.first_read);
        // Rewritten only when it differs (an entry from before title, licence and head were recorded).
        if existing.as_ref() != Some(&entry) {
            target.put_bytes(&entry_key, &entry.to_json(), "application/json")?;
        }
        target.put_bytes(&pointer_key, &entry.to_json(), "application/json")?;
        Ok(())
    };
    upload().with_context(|| format!("publishing {} to {} failed; {still}; re-run the same command to finish", options.name, target.describe()))?;
    Ok(report)
}

fn print_report(report: &PublishReport) {
    let what = match report.action {
        "unchanged" => "already current:",
        "dry-run" => "would publish",
        _ => "published",
    };
    println!("{what} {} version {} ({} bytes, {} quads) at {}/{}", report.dataset, report.version, report.bytes, report.quads, report.bucket, report.key);
    if let Some(previous) = report.previous.as_ref().filter(|p| **p != report.version) {
        println!("  previous: {previous} (rete rollback {} goes back to it)", report.dataset);
    }
    if let (Some(card), Some(sparql)) = (&report.card_url, &report.sparql_url) {
        println!("  card:     {card}\n  sparql:   {sparql}");
    }
}

/// The one input, when it is a `.rete` file (by its magic number, not its name).
fn ready_rete(inputs: &[PathBuf]) -> Result<Option<PathBuf>> {
    let is_rete = |path: &Path| -> bool {
        let mut magic = [0u8; 8];
        path != Path::new("-") && File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && magic == rete_core::format::header::MAGIC
    };
    match inputs {
        [one] if is_rete(one) => Ok(Some(one.clone())),
        many if many.iter().any(|p| is_rete(p)) => bail!(UsageError("a .rete file is published on its own: give either one .rete file or RDF inputs to build".into())),
        _ => Ok(None),
    }
}

/// A local `.rete` file, checked whole before anything is sent.
struct LocalFile {
    bytes: u64,
    header: Header,
    header_bytes: Vec<u8>,
    /// Bytes `[0, 16384)` (a reader's first read), carried in the version entry.
    first_read: Vec<u8>,
    /// The card's title and licence, copied into the version entry.
    title: Option<String>,
    license: Option<String>,
}

impl LocalFile {
    fn read(path: &Path) -> Result<Self> {
        let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let bytes = file.metadata()?.len();
        let mut prefix = vec![0u8; bytes.min(rete_core::format::FIRST_READ_BYTES) as usize];
        file.read_exact(&mut prefix).with_context(|| format!("cannot read {}", path.display()))?;
        let header = Header::decode(&prefix, Some(bytes)).with_context(|| format!("{} is not a valid .rete file", path.display()))?;
        // The content hash covers every byte: a file damaged on disk is not sent.
        let mut hasher = ContentHasher::default();
        hasher.update(&prefix);
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buffer).with_context(|| format!("cannot read {}", path.display()))?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
        }
        if hasher.finish() != header.content_hash {
            let reason = format!("content hash {:032x} does not match the header's {}", hasher.finish(), header.content_hash_hex());
            return Err(rete_core::FormatError::Corrupt { section: "file".into(), offset: 0x10, reason })
                .with_context(|| format!("{} is damaged; rebuild it", path.display()));
        }
        let header_bytes = prefix[..header.header_length as usize].to_vec();
        let card = crate::cmd::open(path)?.card().with_context(|| format!("cannot read the card of {}", path.display()))?;
        Ok(Self { bytes, header, header_bytes, first_read: prefix, title: card.title, license: card.license })
    }
}

/// A byte progress bar on stderr, or a hidden one.
fn progress_bar(show: bool, bytes: u64, message: String) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(bytes);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message);
    bar
}

/// Now as RFC 3339 UTC with milliseconds (`2026-11-05T10:00:00.123Z`), so
/// versions published in the same second still sort by time.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}
