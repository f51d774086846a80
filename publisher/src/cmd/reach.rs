//! `rete reach`: from many seeds at once, how many distinct nodes each
//! reaches along the given predicates (`rete_core::graph::reach`), read
//! where the file sits in rounds (a local file and a URL alike), with what
//! the reads cost.

use super::graph::{node_argument, run_machine};
use crate::source::Location;
use anyhow::{Context, Result};
use rete_core::graph::reach::{Reach, ReachOptions};
use rete_core::graph::{Direction, answer};
use std::io::Write;
use std::path::PathBuf;

/// What `rete reach` was asked.
#[derive(Debug, Clone)]
pub struct ReachArgs {
    /// The file or URL.
    pub location: PathBuf,
    /// Seeds given as flags.
    pub from: Vec<String>,
    /// A file of seeds, one a line.
    pub from_file: Option<PathBuf>,
    /// Predicates to follow.
    pub via: Vec<String>,
    /// Which way.
    pub direction: Direction,
    /// Most hops.
    pub max_depth: Option<u32>,
    /// Seeds on all cores.
    pub parallel: bool,
    /// List the nodes reached.
    pub members: bool,
    /// Print JSON.
    pub json: bool,
}

/// The seeds: `--from` flags, then the lines of `--from-file` (blank lines
/// and lines starting with `#` skipped).
fn seeds(args: &ReachArgs) -> Result<Vec<String>> {
    let mut seeds = args.from.clone();
    if let Some(path) = &args.from_file {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read the seeds file {}", path.display()))?;
        seeds.extend(text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')).map(str::to_owned));
    }
    Ok(seeds)
}

/// Runs the reachability and prints it.
pub fn run(args: &ReachArgs, mut out: impl Write) -> Result<()> {
    let seeds = seeds(args)?;
    if seeds.is_empty() {
        anyhow::bail!(super::UsageError("no seeds: give --from IRI or --from-file FILE".into()));
    }
    let seed_terms = seeds.iter().map(|s| node_argument(s, "--from")).collect::<Result<Vec<_>>>()?;
    let predicates = args.via.iter().map(|p| node_argument(p, "--via")?.try_into().map_err(|_| anyhow::anyhow!(super::InvalidNode(format!("--via {p:?} is a blank node; give a predicate IRI"))))).collect::<Result<Vec<_>>>()?;
    let location = Location::open(&args.location)?;
    let mut reach = Reach::new(seed_terms.clone(), ReachOptions { predicates, direction: args.direction, max_depth: args.max_depth, members: args.members, parallel: args.parallel });
    let (results, stats) = run_machine(&location, &mut reach)?;
    let answer = answer::reach(&seed_terms, &results, stats);
    if args.json {
        serde_json::to_writer(&mut out, &answer)?;
        writeln!(out)?;
    } else {
        for seed in answer["seeds"].as_array().into_iter().flatten() {
            writeln!(out, "{}\t{}", seed["reached"], seed["from"].as_str().unwrap_or_default())?;
            for member in seed["members"].as_array().into_iter().flatten() {
                writeln!(out, "\t{}", member.as_str().unwrap_or_default())?;
            }
        }
        writeln!(out, "# {} rounds, {} requests, {} bytes", stats.rounds, stats.requests, stats.bytes)?;
    }
    Ok(())
}
