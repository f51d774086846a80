//! Extension functions this engine does not know (`<http://example.org/f>(?x)`).
//!
//! SPARQL 1.1 §17.3 makes a call to an unknown function an expression error:
//! a FILTER using it drops the solution, BIND and a SELECT expression leave
//! their variable unbound, the query itself runs. spareval refuses the whole
//! query instead, so every such function is registered as one whose every
//! call fails, and the host is told which they were ([`super::warnings`]) to
//! say so once per query (stderr in the CLI, `x-rete-warning` in the Worker).

use super::algebra::{VisitMut, query_pattern_mut};
use oxrdf::{Dataset, NamedNode};
use spareval::{QueryEvaluationError, QueryEvaluator};
use spargebra::Query;

/// The custom functions `query` calls that spareval does not implement, in
/// the order the query names them.
pub(crate) fn unknown_functions(query: &Query) -> Vec<NamedNode> {
    let called = called_functions(query);
    let mut unknown = Vec::new();
    // spareval knows its own (the XSD casts) only when it builds the query:
    // build it over an empty dataset until it names no other.
    while unknown.len() < called.len() {
        let evaluator = failing(QueryEvaluator::new(), &unknown);
        match evaluator.prepare(query).execute(&Dataset::new()) {
            Err(QueryEvaluationError::UnsupportedCustomFunction(name)) if called.contains(&name) && !unknown.contains(&name) => unknown.push(name),
            _ => break,
        }
    }
    unknown.sort_by_key(|name| called.iter().position(|called| called == name));
    unknown
}

/// `evaluator` with each of `functions` failing on every call.
pub(crate) fn failing(evaluator: QueryEvaluator, functions: &[NamedNode]) -> QueryEvaluator {
    functions.iter().fold(evaluator, |evaluator, name| evaluator.with_custom_function(name.clone(), |_| None))
}

/// What to tell the user about the unknown functions, if any.
pub(crate) fn warning(unknown: &[NamedNode]) -> Option<String> {
    if unknown.is_empty() {
        return None;
    }
    let names: Vec<String> = unknown.iter().map(ToString::to_string).collect();
    let (noun, pronoun) = if unknown.len() == 1 { ("function", "it") } else { ("functions", "them") };
    Some(format!(
        "unknown {noun} {}: every call is an expression error (SPARQL 1.1 §17.3), so a FILTER using {pronoun} drops the solution and BIND or SELECT leave the variable unbound",
        names.join(", ")
    ))
}

fn called_functions(query: &Query) -> Vec<NamedNode> {
    struct Calls(Vec<NamedNode>);
    impl VisitMut for Calls {
        fn custom_function(&mut self, name: &NamedNode) {
            if !self.0.contains(name) {
                self.0.push(name.clone());
            }
        }
    }
    let mut calls = Calls(Vec::new());
    calls.pattern(query_pattern_mut(&mut query.clone()));
    calls.0
}
