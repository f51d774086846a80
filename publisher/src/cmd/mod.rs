//! One module per subcommand.

pub mod build;
pub mod check;
pub mod cost;
pub mod dump;
pub mod gc;
pub mod graph;
pub mod inspect;
pub mod query;
pub mod ls;
pub mod path;
pub mod publish;
pub mod reach;
pub mod rollback;
pub mod search;
pub mod verify;

use crate::r2::{self, TargetOptions, catalog, layout};
use crate::source::file::FileSource;
use anyhow::{Context, Result, bail};
use rete_core::Store;
use std::path::Path;

/// A flag or argument with a value the command cannot use (exit code 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A node (IRI or blank node) given on the command line that is not one (exit code 1).
#[derive(Debug)]
pub struct InvalidNode(pub String);

impl std::fmt::Display for InvalidNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidNode {}

/// Decoded blocks the CLI keeps in memory at most.
pub const CACHE_BYTES: usize = 256 << 20;

/// Opens a local `.rete` file.
pub fn open(path: &Path) -> Result<Store<FileSource>> {
    let source = FileSource::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    Store::open(source, CACHE_BYTES).with_context(|| format!("cannot read {}", path.display()))
}

/// Opens the storage target and loads one published dataset (rollback, gc).
pub fn open_dataset(target: &TargetOptions, name: &str) -> Result<(r2::Target, catalog::Dataset)> {
    layout::check_name(name).map_err(UsageError)?;
    let opened = r2::open(target)?;
    if let Some(notice) = &opened.notice {
        eprintln!("rete: {notice}");
    }
    let target = opened.target;
    let Some(dataset) = catalog::load(&target, Some(name))?.into_iter().next() else {
        bail!("there is no dataset {name} on {}; `rete ls` lists them", target.describe())
    };
    Ok((target, dataset))
}
