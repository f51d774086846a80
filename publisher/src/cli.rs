//! Every flag of `rete`, documented once: clap builds `--help` from these
//! doc comments (first line: short help; the rest: `--help` only).

use clap::{Parser, Subcommand};
use std::path::PathBuf;

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  invalid data: an RDF syntax error, a corrupt .rete file, a failed verify
  2  usage error: unknown flag, missing argument, invalid flag value
  3  any other failure: a file that cannot be read or written, …";

/// rete: publish an RDF dataset as one .rete file and query it where it sits.
#[derive(Debug, Parser)]
#[command(name = "rete", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a .rete file from N-Triples, N-Quads, Turtle, TriG or RDF/XML.
    ///
    /// Inputs are parsed as a stream (never held whole); the dictionary and the
    /// six quad orders are sorted on disk when they outgrow --mem. The output is
    /// written beside OUT and renamed into place only when complete, so a failed
    /// build leaves no partial file.
    ///
    /// Example: rete build people.nt.gz places.ttl -o dataset.rete
    #[command(after_help = EXIT_CODES)]
    Build {
        /// Input files (`.gz` is decompressed; `-` reads stdin and needs --format).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The .rete file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Syntax of every input: nt, nq, ttl, trig or rdfxml.
        ///
        /// By default each input's syntax comes from its extension (.nt, .nq, .ttl,
        /// .trig, .rdf/.owl, optionally followed by .gz).
        #[arg(short, long)]
        format: Option<String>,
        /// Memory budget, e.g. 512MiB, 2GiB.
        ///
        /// The term table and the sorts spill to temporary files beyond it.
        #[arg(long, default_value = "1GiB")]
        mem: String,
        /// Worker threads for sorting and compression (default: all cores).
        ///
        /// The output is byte-identical whatever the thread count.
        #[arg(long)]
        threads: Option<usize>,
        /// Skip statements with syntax errors and report how many, instead of failing.
        #[arg(long)]
        lenient: bool,
        /// Directory for temporary files (default: the output's directory).
        #[arg(long)]
        temp_dir: Option<PathBuf>,
        /// No progress bar or summary line.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Show a file's header, sections, counts and card.
    #[command(after_help = EXIT_CODES)]
    Inspect {
        /// The .rete file.
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check every checksum, every block and the content hash.
    ///
    /// Exits with 1 and lists the problems when anything does not match.
    #[command(after_help = EXIT_CODES)]
    Verify {
        /// The .rete file.
        file: PathBuf,
    },
    /// Write every quad as N-Quads to stdout.
    #[command(after_help = EXIT_CODES)]
    Dump {
        /// The .rete file.
        file: PathBuf,
    },
}

/// Parses a byte size such as `1GiB`, `512M`, `4096`.
pub fn parse_bytes(text: &str) -> Option<usize> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let multiplier: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = number * multiplier;
    (bytes.is_finite() && bytes >= 1.0).then_some(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes() {
        assert_eq!(parse_bytes("1GiB"), Some(1 << 30));
        assert_eq!(parse_bytes("512M"), Some(512 << 20));
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("1.5k"), Some(1536));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("0"), None);
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
