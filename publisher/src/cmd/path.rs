//! `rete path`: a shortest path between two nodes by bidirectional search
//! (`rete_core::graph::path`), each step a triple as it is stored, read
//! where the file sits in rounds.

use super::graph::{node_argument, run_machine};
use crate::source::Location;
use anyhow::{Result, anyhow};
use rete_core::graph::path::{Path, PathOptions};
use rete_core::graph::answer;
use std::io::Write;
use std::path::PathBuf;

/// What `rete path` was asked.
#[derive(Debug, Clone)]
pub struct PathArgs {
    /// The file or URL.
    pub location: PathBuf,
    /// Source node.
    pub from: String,
    /// Target node.
    pub to: String,
    /// Predicates to follow (none: every predicate).
    pub via: Vec<String>,
    /// Follow triples both ways.
    pub undirected: bool,
    /// Longest path looked for.
    pub max_depth: Option<u32>,
    /// Plain BFS from the source only (for comparison).
    pub unidirectional: bool,
    /// Print JSON.
    pub json: bool,
}

/// Finds the path and prints it; no path is not an error.
pub fn run(args: &PathArgs, mut out: impl Write) -> Result<()> {
    let from = node_argument(&args.from, "FROM")?;
    let to = node_argument(&args.to, "TO")?;
    let predicates = args.via.iter().map(|p| node_argument(p, "--via")?.try_into().map_err(|_| anyhow!(super::InvalidNode(format!("--via {p:?} is a blank node; give a predicate IRI"))))).collect::<Result<Vec<_>>>()?;
    let location = Location::open(&args.location)?;
    let mut search = Path::new(from, to, PathOptions { predicates, undirected: args.undirected, max_depth: args.max_depth, unidirectional: args.unidirectional });
    let (found, stats) = run_machine(&location, &mut search)?;
    let answer = answer::path(&found, stats);
    if args.json {
        serde_json::to_writer(&mut out, &answer)?;
        writeln!(out)?;
    } else {
        match answer["path"].as_array() {
            Some(steps) => {
                writeln!(out, "length {}", steps.len())?;
                for step in steps {
                    let parts: Vec<&str> = step.as_array().into_iter().flatten().filter_map(|t| t.as_str()).collect();
                    writeln!(out, "{}", parts.join("\t"))?;
                }
            }
            None => writeln!(out, "no path{}", args.max_depth.map(|d| format!(" of length {d} or less")).unwrap_or_default())?,
        }
        writeln!(out, "# {} nodes visited, {} rounds, {} bytes", found.visited, stats.rounds, stats.bytes)?;
    }
    Ok(())
}
