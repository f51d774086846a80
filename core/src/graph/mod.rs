//! Graph questions over a `.rete` file, read in rounds like queries
//! (`docs/READ-PATH.md`): batch reachability ([`reach`]), shortest paths by
//! bidirectional search ([`path`]) and coherence checks in tiers ([`check`]).
//!
//! Each question is a [`Machine`]: the host calls [`Machine::step`] with the
//! store; a step goes as far as the blocks in memory allow and, when it
//! meets missing ones, asks for all of them at once (the store records them)
//! and returns `Ok(None)`. The host fetches and feeds them (one round) and
//! steps again; [`run`] is that loop for synchronous hosts, over
//! [`run_in_rounds`]. Searches go a whole frontier at a time, so a round
//! reads the blocks of every node of a level together, and they keep their
//! own state between steps: a level's blocks are released once it is done.

pub mod answer;
pub mod check;
mod frontier;
pub mod path;
pub mod reach;

pub use frontier::{Direction, Edges};

use crate::read::{RoundOptions, RoundStats, run_in_rounds};
use crate::{RangeSource, ReadError, Store, TermId};
use oxrdf::{NamedNode, Term, TermRef};

/// A graph computation driven in rounds.
pub trait Machine {
    /// What it computes.
    type Output;

    /// Goes on from where the last step stopped. `Ok(None)`: blocks were
    /// missing and the store recorded them (fetch and feed them, then step
    /// again); `Ok(Some(_))`: done, and nothing was missing.
    fn step<S: RangeSource>(&mut self, store: &Store<S>) -> Result<Option<Self::Output>, ReadError>;
}

/// Runs `machine` to its end over `store`, fetching what each step missed
/// with `fetch` (one call a round). Returns its output and what the rounds
/// cost (the open not included).
pub fn run<S: RangeSource, M: Machine>(
    store: &Store<S>,
    options: &RoundOptions,
    fetch: impl FnMut(&[crate::ByteRange]) -> Result<Vec<Vec<u8>>, ReadError>,
    machine: &mut M,
) -> Result<(M::Output, RoundStats), ReadError> {
    let (outcome, stats) = run_in_rounds(store, options, fetch, |store| machine.step(store))?;
    store.release_fed();
    match outcome? {
        Some(output) => Ok((output, stats)),
        None => Err(ReadError::Source("internal error: a graph step neither finished nor missed a block".into())),
    }
}

/// The ids of `terms` (`None` for a term the dataset does not hold), or
/// `Ok(None)` when a dictionary block was missing: every lookup is tried, so
/// one round fetches all their blocks.
pub(crate) fn term_ids<S: RangeSource>(store: &Store<S>, terms: &[Term]) -> Result<Option<Vec<Option<TermId>>>, ReadError> {
    collect_or_missing(terms.iter().map(|term| store.term_id(term.as_ref())))
}

/// The ids of `nodes` (`None` for one the dataset lacks) and of
/// `predicates` (ascending, distinct, absent ones dropped), in one pass so
/// that one round fetches every dictionary block they need.
pub(crate) fn resolve<S: RangeSource>(store: &Store<S>, nodes: &[Term], predicates: &[NamedNode]) -> Result<Option<(Vec<Option<TermId>>, Vec<TermId>)>, ReadError> {
    let terms: Vec<Term> = nodes.iter().cloned().chain(predicates.iter().cloned().map(Term::from)).collect();
    let Some(ids) = term_ids(store, &terms)? else { return Ok(None) };
    let (node_ids, predicate_ids) = ids.split_at(nodes.len());
    let mut predicate_ids: Vec<TermId> = predicate_ids.iter().flatten().copied().collect();
    predicate_ids.sort_unstable();
    predicate_ids.dedup();
    Ok(Some((node_ids.to_vec(), predicate_ids)))
}

/// The terms of `ids`, or `Ok(None)` when a dictionary block was missing
/// (every id is still tried).
pub(crate) fn terms_of<S: RangeSource>(store: &Store<S>, ids: &[TermId]) -> Result<Option<Vec<Term>>, ReadError> {
    collect_or_missing(ids.iter().map(|&id| store.term(id)))
}

/// Collects results, carrying on past [`ReadError::Missing`] (the store has
/// recorded the block) so that one run lists every missing block; any other
/// error stops at once.
pub(crate) fn collect_or_missing<T>(results: impl Iterator<Item = Result<T, ReadError>>) -> Result<Option<Vec<T>>, ReadError> {
    let mut out = Vec::new();
    let mut missed = false;
    for result in results {
        match result {
            Ok(value) => out.push(value),
            Err(ReadError::Missing(_)) => missed = true,
            Err(error) => return Err(error),
        }
    }
    Ok((!missed).then_some(out))
}

/// A term the way graph answers print it: an IRI without angle brackets, a
/// blank node as `_:label`, a literal in N-Triples syntax.
pub fn term_text(term: TermRef<'_>) -> String {
    match term {
        TermRef::NamedNode(node) => node.as_str().to_owned(),
        other => other.to_string(),
    }
}

/// Parses a node given by a user: an absolute IRI (angle brackets optional)
/// or a blank node `_:label`.
pub fn parse_node(text: &str) -> Result<Term, String> {
    let text = text.trim();
    if let Some(label) = text.strip_prefix("_:") {
        return oxrdf::BlankNode::new(label).map(Term::from).map_err(|e| format!("invalid blank node {text:?}: {e}"));
    }
    let iri = text.strip_prefix('<').and_then(|t| t.strip_suffix('>')).unwrap_or(text);
    oxrdf::NamedNode::new(iri).map(Term::from).map_err(|e| format!("invalid IRI {text:?}: {e}"))
}

#[cfg(all(test, feature = "write"))]
mod tests;
