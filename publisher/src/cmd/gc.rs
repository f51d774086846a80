//! `rete gc NAME --keep N`: delete all but the N newest versions of a
//! dataset, never the current one. Each version's history entry goes first,
//! then its file, so an interrupted gc leaves at worst a file without an
//! entry, which the next gc removes. Such files younger than an hour are left
//! alone: they may be a publish in progress that has not written its entry yet.

use crate::r2::catalog::StoredVersion;
use crate::r2::{TargetOptions, layout};
use anyhow::{Result, bail};

/// Files without an entry younger than this are kept (a publish may be running).
pub const ORPHAN_GRACE_S: i64 = 3600;

/// Deletes old versions of `name`, keeping the `keep` newest and the current one.
pub fn run(target: &TargetOptions, name: &str, keep: usize, dry_run: bool, json: bool) -> Result<()> {
    let (target, dataset) = super::open_dataset(target, name)?;
    if dataset.current_error.is_some() {
        bail!("{name}'s current.json is invalid; fix it (rete rollback {name} VERSION) before collecting, so the served version is known");
    }
    let current = dataset.current.as_ref().map(|c| c.version.clone());
    let now = chrono::Utc::now().timestamp();
    let mut kept = Vec::new();
    let mut doomed: Vec<&StoredVersion> = Vec::new();
    let mut young_orphans = 0;
    let mut published = 0;
    for version in &dataset.versions {
        let is_current = current.as_deref() == Some(version.version.as_str());
        let is_orphan = version.entry.is_none();
        if is_current {
            kept.push(version.version.clone());
        } else if is_orphan {
            let age = version.file.as_ref().and_then(|f| f.modified_unix_s).map(|t| now - t);
            if age.is_some_and(|age| age < ORPHAN_GRACE_S) {
                young_orphans += 1;
                kept.push(version.version.clone());
            } else {
                doomed.push(version);
            }
        } else if published < keep {
            kept.push(version.version.clone());
        } else {
            doomed.push(version);
        }
        if !is_orphan {
            published += 1;
        }
    }
    let freed: u64 = doomed.iter().filter_map(|v| v.file.as_ref()).map(|f| f.bytes).sum();
    if !dry_run {
        for version in &doomed {
            if version.entry.is_some() {
                target.delete(&layout::entry_key(name, &version.version))?;
            }
            if version.file.is_some() {
                target.delete(&layout::file_key(name, &version.version))?;
            }
        }
    }
    let deleted: Vec<&str> = doomed.iter().map(|v| v.version.as_str()).collect();
    if json {
        println!("{}", serde_json::json!({"dataset": name, "current": current, "kept": kept, "deleted": deleted, "freed_bytes": freed, "dry_run": dry_run}));
    } else {
        let verb = if dry_run { "would delete" } else { "deleted" };
        println!("{name}: {verb} {} versions ({freed} bytes), kept {} (current: {})", deleted.len(), kept.len(), current.as_deref().unwrap_or("none"));
        for version in &deleted {
            println!("  {verb} {version}");
        }
        if young_orphans > 0 {
            println!("  kept {young_orphans} files without an entry younger than an hour (a publish may be running)");
        }
    }
    Ok(())
}
