//! `rete path`: a shortest path between two nodes by bidirectional search
//! (`rete_core::graph::path`), each step a triple as it is stored, read
//! where the file sits in rounds.

use super::graph::{node_argument, run_rounds};
use crate::source::Location;
use anyhow::{Result, anyhow};
use rete_core::graph::path::{Path, PathOptions};
use rete_core::graph::term_text;
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
    let (found, stats) = run_rounds(&location, |store, rounds| rounds.run(store, &mut search))?;
    let steps: Option<Vec<[String; 3]>> = found.path.map(|path| path.iter().map(|t| [term_text(t[0].as_ref()), term_text(t[1].as_ref()), term_text(t[2].as_ref())]).collect());
    if args.json {
        let json = match &steps {
            Some(steps) => serde_json::json!({"length": steps.len(), "path": steps, "visited": found.visited, "rounds": stats.rounds, "bytes": stats.bytes}),
            None => serde_json::json!({"length": null, "visited": found.visited, "rounds": stats.rounds, "bytes": stats.bytes}),
        };
        serde_json::to_writer(&mut out, &json)?;
        writeln!(out)?;
    } else {
        match &steps {
            Some(steps) => {
                writeln!(out, "length {}", steps.len())?;
                for [s, p, o] in steps {
                    writeln!(out, "{s}\t{p}\t{o}")?;
                }
            }
            None => writeln!(out, "no path{}", args.max_depth.map(|d| format!(" of length {d} or less")).unwrap_or_default())?,
        }
        writeln!(out, "# {} nodes visited, {} rounds, {} bytes", found.visited, stats.rounds, stats.bytes)?;
    }
    Ok(())
}
