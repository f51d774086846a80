//! `rete`: argument parsing, dispatch, and turning errors into messages and
//! exit codes (listed in `--help`). Everything else lives in the library.

mod cli;

use anyhow::{Context, Result, bail};
use clap::Parser;
use cli::{Cli, Command};
use rete_publisher::cmd::{self, UsageError};
use rete_publisher::ingest::build::{BuildOptions, build};
use rete_publisher::ingest::input::{Input, format_from_name};
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
        Command::Build { inputs, output, format, mem, threads, lenient, temp_dir, quiet } => {
            let format = match format.as_deref() {
                None => None,
                Some(name) => Some(format_from_name(&name.to_ascii_lowercase()).ok_or_else(|| UsageError(format!("unknown --format {name:?}; expected nt, nq, ttl, trig or rdfxml")))?),
            };
            let inputs = inputs.iter().map(|path| Input::new(path, format)).collect::<Result<Vec<_>>>()?;
            let Some(memory_bytes) = cli::parse_bytes(&mem) else { bail!(UsageError(format!("invalid --mem {mem:?}; write a size such as 512MiB or 2GiB"))) };
            if let Some(threads) = threads {
                rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build_global().context("cannot start worker threads")?;
            }
            let interactive = !quiet && std::io::stderr().is_terminal();
            let report = build(&BuildOptions { inputs, output: output.clone(), memory_bytes, lenient, temp_dir, progress: interactive })?;
            if report.skipped > 0 {
                eprintln!("rete: skipped {} bad statements (--lenient)", report.skipped);
            }
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
        Command::Inspect { file, json } => cmd::inspect::run(&file, json),
        Command::Verify { file } => cmd::verify::run(&file),
        Command::Dump { file } => cmd::dump::run(&file, &mut std::io::stdout().lock()),
    }
}

/// 1 for invalid data, 2 for usage errors, 3 for everything else.
fn exit_code(error: &anyhow::Error) -> u8 {
    for cause in error.chain() {
        if cause.is::<UsageError>() {
            return 2;
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
