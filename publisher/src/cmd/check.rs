//! `rete check`: coherence findings in tiers (`rete_core::graph::check`),
//! each with the stored triples that prove it. Tier 0 reads the CLASS
//! AXIOMS section only (FORMAT.md §13), often inside the open's first read.

use super::graph::run_machine;
use crate::source::Location;
use anyhow::Result;
use rete_core::graph::check::{Check, Tier};
use rete_core::graph::answer;
use std::io::Write;
use std::path::Path;

/// Runs the check and prints its findings; findings are not an error (exit 0).
pub fn run(location: &Path, tier: Tier, json: bool, mut out: impl Write) -> Result<()> {
    let location = Location::open(location)?;
    let (report, stats) = run_machine(&location, &mut Check::new(tier))?;
    let answer = answer::check(tier, &report, stats);
    if json {
        serde_json::to_writer(&mut out, &answer)?;
        writeln!(out)?;
        return Ok(());
    }
    let findings = answer["findings"].as_array().map_or(&[][..], Vec::as_slice);
    for finding in findings {
        writeln!(out, "{}\t{}", finding["kind"].as_str().unwrap_or_default(), finding["subject"].as_str().unwrap_or_default())?;
        for triple in finding["evidence"].as_array().into_iter().flatten() {
            let parts: Vec<&str> = triple.as_array().into_iter().flatten().filter_map(|t| t.as_str()).collect();
            writeln!(out, "\t{}", parts.join("\t"))?;
        }
    }
    let source = if report.from_section { "the axiom sections" } else { "the quads" };
    writeln!(out, "# tier {}: {} findings; schema from {source}; {} rounds, {} bytes", tier as u8, findings.len(), stats.rounds, stats.bytes)?;
    Ok(())
}
