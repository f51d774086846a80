//! `rete`: argument parsing, dispatch, and turning errors into messages and
//! exit codes (listed in `--help`). Everything else lives in the library.

mod cli;

use anyhow::{Context, Result, bail};
use clap::Parser;
use cli::{Cli, Command};
use rete_publisher::cmd::{self, UsageError};
use rete_core::graph::Direction;
use rete_core::graph::check::Tier;
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rete: {error:#}");
            ExitCode::from(exit_code(&error))
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Build { inputs, output, build, quiet, card } => {
            let settings = build.to_settings(&card)?;
            settings.start_threads()?;
            cmd::build::run(&inputs, &output, &settings, quiet, !quiet && std::io::stderr().is_terminal())
        }
        Command::Inspect { file, json } => cmd::inspect::run(&file, json),
        Command::Verify { file } => cmd::verify::run(&file),
        Command::Dump { file } => cmd::dump::run(&file, &mut std::io::stdout().lock()),
        Command::Query { file, query, query_file, format, base, default_graphs, named_graphs, timeout_s } => {
            let query = match (query, query_file) {
                (Some(text), _) => text,
                (None, Some(path)) if path.as_os_str() == "-" => std::io::read_to_string(std::io::stdin()).context("cannot read the query from stdin")?,
                (None, Some(path)) => std::fs::read_to_string(&path).with_context(|| format!("cannot read the query file {}", path.display()))?,
                (None, None) => bail!("no query: give its text or --file"),
            };
            let timeout = match timeout_s {
                Some(seconds) if seconds.is_finite() && seconds > 0.0 => Some(std::time::Duration::from_secs_f64(seconds)),
                Some(seconds) => bail!("invalid --timeout-s {seconds}; give a positive number of seconds"),
                None => None,
            };
            let args = cmd::query::QueryArgs { query, base_iri: base, format, default_graphs, named_graphs, timeout };
            cmd::query::run(&file, &args, std::io::stdout().lock())
        }
        Command::Cost { file, query, query_file, json, rounds } => cmd::cost::run(&file, &cmd::cost::query_text(query, query_file)?, json, rounds, std::io::stdout().lock()),
        Command::Reach { file, from, from_file, via, inverse, undirected, max_depth, parallel, members, json } => {
            let direction = if undirected {
                Direction::Both
            } else if inverse {
                Direction::Inverse
            } else {
                Direction::Forward
            };
            let args = cmd::reach::ReachArgs { location: file, from, from_file, via, direction, max_depth, parallel, members, json };
            cmd::reach::run(&args, std::io::stdout().lock())
        }
        Command::Path { file, from, to, via, undirected, max_depth, unidirectional, json } => {
            cmd::path::run(&cmd::path::PathArgs { location: file, from, to, via, undirected, max_depth, unidirectional, json }, std::io::stdout().lock())
        }
        Command::Check { file, tier, json } => {
            let tier = Tier::from_number(tier).ok_or_else(|| UsageError(format!("--tier {tier}: give 0, 1 or 2")))?;
            cmd::check::run(&file, tier, json, std::io::stdout().lock())
        }
        Command::Search { file, query, lang, limit, types, json } => cmd::search::run(&file, &query, lang.as_deref(), limit, types, json, std::io::stdout().lock()),
        Command::Publish(args) => {
            let options = args.to_options(std::io::stderr().is_terminal())?;
            options.build.start_threads()?;
            cmd::publish::run(&options)
        }
        Command::Ls { name, json, target } => cmd::ls::run(&target.to_options(Default::default()), name.as_deref(), json),
        Command::Rollback { name, version, json, target } => cmd::rollback::run(&target.to_options(Default::default()), &name, version.as_deref(), json),
        Command::Gc { name, keep, dry_run, json, target } => cmd::gc::run(&target.to_options(Default::default()), &name, keep, dry_run, json),
    }
}

/// 1 for invalid data, 2 for usage errors, 4 for storage errors, 3 for
/// everything else; `rete query` decides for its own failures (5 for a limit).
fn exit_code(error: &anyhow::Error) -> u8 {
    for cause in error.chain() {
        if let Some(failed) = cause.downcast_ref::<cmd::query::QueryFailed>() {
            return failed.exit_code();
        }
        if cause.is::<UsageError>() {
            return 2;
        }
        if cause.is::<cmd::InvalidNode>() {
            return 1;
        }
        if matches!(cause.downcast_ref::<rete_core::ReadError>(), Some(rete_core::ReadError::Budget { .. })) {
            return 5;
        }
        if cause.is::<rete_publisher::r2::StorageError>() {
            return 4;
        }
        if cause.is::<rete_publisher::ingest::parse::InputError>()
            || cause.is::<rete_core::FormatError>()
            || cause.is::<cmd::verify::VerifyFailed>()
            || matches!(cause.downcast_ref::<rete_core::ReadError>(), Some(rete_core::ReadError::Format(_)))
        {
            return 1;
        }
    }
    3
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}
