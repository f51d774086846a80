//! The JSON answers of the graph questions, written once for every host
//! (the CLI's `--json`, the Worker's routes): the member names issue 13
//! spells out, terms as [`term_text`] prints them, and what the reads cost.

use super::check::{Report, Tier};
use super::path::FoundPath;
use super::reach::SeedReach;
use super::term_text;
use crate::read::RoundStats;
use oxrdf::Term;
use serde_json::{Value, json};

/// `{"seeds":[{"from":IRI,"reached":N[,"members":[…]]}],"rounds":R,"requests":Q,"bytes":B}`.
pub fn reach(seeds: &[Term], results: &[SeedReach], stats: RoundStats) -> Value {
    let seeds: Vec<Value> = seeds
        .iter()
        .zip(results)
        .map(|(from, result)| {
            let mut seed = json!({"from": term_text(from.as_ref()), "reached": result.reached});
            if let Some(members) = &result.members {
                seed["members"] = members.iter().map(|t| term_text(t.as_ref())).collect();
            }
            seed
        })
        .collect();
    json!({"seeds": seeds, "rounds": stats.rounds, "requests": stats.requests, "bytes": stats.bytes})
}

/// `{"length":L,"path":[[s,p,o],…],"visited":V,"rounds":R,"bytes":B}`, or
/// `{"length":null,…}` without `path` when there is none.
pub fn path(found: &FoundPath, stats: RoundStats) -> Value {
    match &found.path {
        Some(steps) => {
            let steps: Vec<[String; 3]> = steps.iter().map(triple).collect();
            json!({"length": steps.len(), "path": steps, "visited": found.visited, "rounds": stats.rounds, "bytes": stats.bytes})
        }
        None => json!({"length": null, "visited": found.visited, "rounds": stats.rounds, "bytes": stats.bytes}),
    }
}

/// `{"tier":T,"findings":[{"kind":K,"subject":IRI,"evidence":[[s,p,o],…]}],"rounds":R,"bytes":B}`.
pub fn check(tier: Tier, report: &Report, stats: RoundStats) -> Value {
    let findings: Vec<Value> = report
        .findings
        .iter()
        .map(|f| json!({"kind": f.kind.name(), "subject": term_text(f.subject.as_ref()), "evidence": f.evidence.iter().map(triple).collect::<Vec<_>>()}))
        .collect();
    json!({"tier": tier as u8, "findings": findings, "rounds": stats.rounds, "bytes": stats.bytes})
}

fn triple(t: &[Term; 3]) -> [String; 3] {
    [term_text(t[0].as_ref()), term_text(t[1].as_ref()), term_text(t[2].as_ref())]
}
