//! `rete rollback NAME [VERSION]`: point `current.json` at an older stored
//! version (by default the one published just before the current one). Only
//! the pointer is written, in one PUT, after checking the file is there.

use crate::r2::{TargetOptions, layout};
use anyhow::{Result, bail};

/// Switches `name` to `version` (a hash or a unique prefix), or to the previous version.
pub fn run(target: &TargetOptions, name: &str, version: Option<&str>, json: bool) -> Result<()> {
    let (target, dataset) = super::open_dataset(target, name)?;
    let current = dataset.current.clone();
    let chosen = match version {
        Some(version) => dataset.find(version).map_err(anyhow::Error::msg)?,
        None => {
            let Some(current) = &current else { bail!("{name} has no current version to roll back from; give a VERSION (`rete ls {name}` lists them)") };
            let older = dataset.versions.iter().find(|v| v.version != current.version && v.entry.is_some() && v.file.is_some() && v.published_at() < current.published_at);
            match older {
                Some(older) => older,
                None => bail!("{name} has no version older than the current {}; `rete ls {name}` lists them", current.version),
            }
        }
    };
    let (Some(entry), Some(file)) = (&chosen.entry, &chosen.file) else {
        bail!("version {} of {name} cannot be served: {} (`rete ls {name}`)", chosen.version, chosen.state())
    };
    if file.bytes != entry.bytes {
        bail!("version {} of {name} is damaged: its entry says {} bytes, the object has {}", chosen.version, entry.bytes, file.bytes);
    }
    let from = current.as_ref().map(|c| c.version.clone());
    if from.as_deref() != Some(entry.version.as_str()) {
        target.put_bytes(&layout::pointer_key(name), &entry.to_json(), "application/json")?;
    }
    if json {
        println!("{}", serde_json::json!({"dataset": name, "version": entry.version, "key": entry.key, "previous": from}));
    } else {
        match from {
            Some(from) if from == entry.version => println!("{name} already serves {}", entry.version),
            Some(from) => println!("{name}: switched from {from} to {} (published {})", entry.version, entry.published_at),
            None => println!("{name}: now serves {} (published {})", entry.version, entry.published_at),
        }
    }
    Ok(())
}
