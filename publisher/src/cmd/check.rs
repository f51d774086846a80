//! `rete check`: coherence findings in tiers (`rete_core::graph::check`),
//! each with the stored triples that prove it. Tier 0 reads the CLASS
//! AXIOMS section only (FORMAT.md §12), often inside the open's first read.

use super::graph::run_rounds;
use crate::source::Location;
use anyhow::Result;
use rete_core::ReadError;
use rete_core::format::axioms;
use rete_core::graph::check::{Check, Tier};
use rete_core::graph::term_text;
use std::io::Write;
use std::path::Path;

/// Runs the check and prints its findings; findings are not an error (exit 0).
pub fn run(location: &Path, tier: Tier, json: bool, mut out: impl Write) -> Result<()> {
    let location = Location::open(location)?;
    let (report, stats) = run_rounds(&location, |store, rounds| {
        // Tier 2 reads its schema from the quads; the others from the sections, when present.
        let properties = tier >= Tier::Selective;
        let axioms = match (store.axioms(properties), axioms::sections(store.header(), properties)) {
            _ if tier == Tier::WholeGraph => None,
            (Err(ReadError::Missing(_)), Some(sections)) => Some(axioms::open_sections(&sections, &rounds.read(&sections.iter().map(|s| s.range()).collect::<Vec<_>>())?)?),
            (result, _) => result?,
        };
        rounds.run(store, &mut Check::new(tier, axioms))
    })?;
    let findings: Vec<serde_json::Value> = report
        .findings
        .iter()
        .map(|f| {
            let evidence: Vec<[String; 3]> = f.evidence.iter().map(|t| [term_text(t[0].as_ref()), term_text(t[1].as_ref()), term_text(t[2].as_ref())]).collect();
            serde_json::json!({"kind": f.kind.name(), "subject": term_text(f.subject.as_ref()), "evidence": evidence})
        })
        .collect();
    if json {
        serde_json::to_writer(&mut out, &serde_json::json!({"tier": tier as u8, "findings": findings, "rounds": stats.rounds, "bytes": stats.bytes}))?;
        writeln!(out)?;
        return Ok(());
    }
    for finding in &findings {
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
