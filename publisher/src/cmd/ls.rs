//! `rete ls`: the datasets of a target, each version with its size, quads,
//! publish time and state, and which one `current.json` serves (with `--json`,
//! also the served version's title and licence when its entry records them).

use crate::r2::catalog::{self, Dataset};
use crate::r2::{self, TargetOptions, layout};
use anyhow::Result;
use serde_json::json;

/// Lists one dataset (`name`) or all of them, as a table or JSON.
pub fn run(target: &TargetOptions, name: Option<&str>, json: bool) -> Result<()> {
    if let Some(name) = name {
        layout::check_name(name).map_err(super::UsageError)?;
    }
    let opened = r2::open(target)?;
    if let Some(notice) = &opened.notice {
        eprintln!("rete: {notice}");
    }
    let datasets = catalog::load(&opened.target, name)?;
    if json {
        println!("{}", serde_json::to_string(&to_json(&datasets))?);
        return Ok(());
    }
    if datasets.is_empty() {
        eprintln!("no datasets{} on {}", name.map(|n| format!(" named {n}")).unwrap_or_default(), opened.target.describe());
        return Ok(());
    }
    println!("{:<24} {:<34} {:>14} {:>12}  {:<24}  STATE", "DATASET", "VERSION", "BYTES", "QUADS", "PUBLISHED");
    for dataset in &datasets {
        if let Some(error) = &dataset.current_error {
            eprintln!("rete: {}: current.json is invalid: {error}", dataset.name);
        }
        let current = dataset.current.as_ref().map(|c| c.version.as_str());
        if current.is_some_and(|c| !dataset.versions.iter().any(|v| v.version == c)) {
            eprintln!("rete: {}: current.json points to {}, which is not stored", dataset.name, current.unwrap_or_default());
        }
        for version in &dataset.versions {
            let marker = if Some(version.version.as_str()) == current { "*" } else { " " };
            let bytes = version.file.as_ref().map(|f| f.bytes).or(version.entry.as_ref().map(|e| e.bytes));
            println!(
                "{:<24} {marker}{:<33} {:>14} {:>12}  {:<24}  {}",
                dataset.name,
                version.version,
                bytes.map_or_else(|| "-".to_owned(), |b| b.to_string()),
                version.entry.as_ref().map_or_else(|| "-".to_owned(), |e| e.quads.to_string()),
                version.published_at(),
                if marker == "*" { format!("{} (current)", version.state()) } else { version.state().to_owned() },
            );
        }
    }
    Ok(())
}

fn to_json(datasets: &[Dataset]) -> serde_json::Value {
    datasets
        .iter()
        .map(|dataset| {
            let current = dataset.current.as_ref().map(|c| c.version.clone());
            json!({
                "name": dataset.name,
                "title": dataset.current.as_ref().and_then(|c| c.title.as_deref()),
                "license": dataset.current.as_ref().and_then(|c| c.license.as_deref()),
                "current": current,
                "versions": dataset.versions.iter().map(|v| json!({
                    "version": v.version,
                    "key": layout::file_key(&dataset.name, &v.version),
                    "bytes": v.file.as_ref().map(|f| f.bytes).or(v.entry.as_ref().map(|e| e.bytes)),
                    "quads": v.entry.as_ref().map(|e| e.quads),
                    "published_at": v.published_at(),
                    "current": current.as_deref() == Some(v.version.as_str()),
                    "state": v.state(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}
