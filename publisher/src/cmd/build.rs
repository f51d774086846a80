//! `rete build`, and the build settings `rete publish` shares with it: the
//! `--format` parse, the worker threads and the `--lenient` report live here
//! once, whichever command builds.

use crate::cmd::UsageError;
use crate::ingest::build::{BlockLayout, BuildOptions, BuildReport, build};
use crate::ingest::input::{Input, format_from_name};
use crate::ingest::metadata::Metadata;
use anyhow::{Context, Result};
use oxrdfio::RdfFormat;
use std::path::{Path, PathBuf};

/// How to build a dataset: the flags `rete build` and `rete publish` share, checked.
#[derive(Debug, Clone)]
pub struct BuildSettings {
    /// Syntax of every input (`--format`); `None`: each input's extension.
    pub format: Option<RdfFormat>,
    /// Memory budget (`--mem`).
    pub memory_bytes: usize,
    /// Worker threads (`--threads`); `None`: one per core.
    pub threads: Option<usize>,
    /// Skip bad statements instead of failing (`--lenient`).
    pub lenient: bool,
    /// Where temporary files go (`--temp-dir`; default: beside the output).
    pub temp_dir: Option<PathBuf>,
    /// Card members given as flags.
    pub metadata: Metadata,
    /// Compute the summary's community levels (not `--no-pyramid`).
    pub pyramid: bool,
    /// Block sizes and directory (hidden `--block-quads`, `--node-entries`).
    pub blocks: BlockLayout,
}

impl BuildSettings {
    /// The syntax a `--format` value names, or a usage error listing the known ones.
    pub fn parse_format(name: &str) -> Result<RdfFormat, UsageError> {
        format_from_name(&name.to_ascii_lowercase()).ok_or_else(|| UsageError(format!("unknown --format {name:?}; expected nt, nq, ttl, trig or rdfxml")))
    }

    /// Starts the worker threads of parsing, sorting and compression
    /// (`--threads`); without it rayon starts one per core when first used.
    pub fn start_threads(&self) -> Result<()> {
        if let Some(threads) = self.threads {
            rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build_global().context("cannot start worker threads")?;
        }
        Ok(())
    }

    /// Builds `inputs` into `output`. Skipped statements (`--lenient`) are
    /// reported on stderr when `report_skipped`.
    pub fn build(&self, inputs: &[PathBuf], output: &Path, progress: bool, report_skipped: bool) -> Result<BuildReport> {
        let inputs = inputs.iter().map(|path| Input::new(path, self.format)).collect::<Result<Vec<_>>>()?;
        let options = BuildOptions {
            inputs,
            output: output.to_owned(),
            memory_bytes: self.memory_bytes,
            lenient: self.lenient,
            temp_dir: self.temp_dir.clone(),
            progress,
            metadata: self.metadata.clone(),
            pyramid: self.pyramid,
            blocks: self.blocks,
        };
        let report = build(&options)?;
        if report.skipped > 0 && report_skipped {
            eprintln!("rete: skipped {} bad statements (--lenient)", report.skipped);
        }
        Ok(report)
    }
}

/// Runs `rete build`: builds, then (unless `quiet`) prints one summary line.
/// Progress bars show when `progress`; skipped statements are reported even when quiet.
pub fn run(inputs: &[PathBuf], output: &Path, settings: &BuildSettings, quiet: bool, progress: bool) -> Result<()> {
    let report = settings.build(inputs, output, progress, true)?;
    if !quiet {
        let ratio = if report.input_bytes > 0 { format!(" ({:.2}× the input)", report.file_bytes as f64 / report.input_bytes as f64) } else { String::new() };
        let seconds = report.elapsed.as_secs_f64();
        eprintln!(
            "built {}: {} quads ({} parsed), {} terms, {} graphs, {} bytes{ratio} in {seconds:.2} s ({:.0} quads/s)",
            output.display(),
            report.quads,
            report.parsed,
            report.terms,
            report.graphs,
            report.file_bytes,
            report.parsed as f64 / seconds.max(1e-9),
        );
    }
    Ok(())
}
