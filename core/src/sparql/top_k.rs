//! Top-k sorts read only the blocks of their top k:
//! `SELECT … { ?e :attendance ?n … } ORDER BY DESC(?n) LIMIT 20` reads the
//! POS blocks of `:attendance`'s 20 largest values, not every value.
//! Numbers, dateTimes and dates have ids in value order in files with
//! `required_features` bit 2 (FORMAT.md §5.1.1), so a predicate's values
//! lie in POS in value order and its top k are the last k of its rows.
//!
//! The query's pattern is evaluated with the predicate's objects restricted
//! to an id range reaching from the end of the order to a *threshold*, and
//! the ORDER BY and LIMIT run on what that gives (docs/READ-PATH.md):
//!
//! 1. The threshold is the value of the k-th row from the end of the
//!    predicate's POS rows (k = OFFSET + LIMIT), found by reading POS from
//!    that end, and only where the predicate's first and last objects (so
//!    all of them) are of one value-ordered kind: other terms sort
//!    elsewhere under ORDER BY.
//! 2. Other patterns and FILTERs may drop rows, so the pattern is first run
//!    (with LIMIT k, no output) over the rows whose key is at least the
//!    threshold's. If it gives k rows, those beat every row outside the
//!    range, and the query runs over the range widened by what keys do not
//!    tell apart (a double's rounding, 14 hours for a date without
//!    timezone): rows tied with the k-th are kept. If not, the threshold
//!    moves 4× as many rows from the end and the check runs again; past the
//!    predicate's first row, nothing is restricted.
//!
//! The store applies the range to every read of the predicate's pattern,
//! whatever else is bound (`dataset.rs`), which the check's count relies
//! on. Only the simplest shape is taken: a `SELECT` whose solutions are
//! sliced (LIMIT) right after the ORDER BY (a projection between them),
//! the first order key a variable that is the object of the query's only
//! pattern with that predicate, the ordered pattern made of joins, basic
//! graph patterns and FILTERs (so every row binds the variable), no pattern
//! with a variable predicate and no property path. Everything else — other
//! order keys first, DISTINCT, GROUP BY, OPTIONAL, mixed kinds, a FILTER
//! range on the same predicate (`value_ranges.rs`) — runs as before.

use super::budget::Meter;
use super::value_ranges;
use crate::format::permutation::Permutation;
use crate::format::term;
use crate::read::PermutationKeys;
use crate::{RangeSource, ReadError, Store, TermId};
use oxrdf::{NamedNode, Variable};
use spargebra::Query;
use spargebra::algebra::{Expression, GraphPattern, OrderExpression};
use std::ops::Range;

/// A query that sorts by the object of one predicate and keeps its first rows.
#[derive(Debug, Clone)]
pub(crate) struct TopK {
    /// The predicate whose object is the first order key.
    pub predicate: NamedNode,
    /// `DESC(?n)`: the top rows are the largest values.
    pub descending: bool,
    /// OFFSET + LIMIT: how many rows the ORDER BY must get right.
    pub want: u64,
    /// The pattern under the ORDER BY.
    pub pattern: GraphPattern,
}

impl TopK {
    /// Whether the ordered pattern is the predicate's pattern alone.
    fn lone_pattern(&self) -> bool {
        matches!(&self.pattern, GraphPattern::Bgp { patterns } if patterns.len() == 1)
    }
}

/// The top-k shape of a query (see the module doc), if it has it.
pub(crate) fn top_k(query: &Query) -> Option<TopK> {
    let Query::Select { pattern: GraphPattern::Slice { inner, start, length: Some(length) }, .. } = query else { return None };
    let ordered = match inner.as_ref() {
        GraphPattern::Project { inner, .. } => inner.as_ref(),
        other => other,
    };
    let GraphPattern::OrderBy { inner: pattern, expression } = ordered else { return None };
    let (variable, descending) = match expression.first()? {
        OrderExpression::Asc(Expression::Variable(variable)) => (variable, false),
        OrderExpression::Desc(Expression::Variable(variable)) => (variable, true),
        _ => return None,
    };
    let want = u64::try_from(start.checked_add(*length)?).ok()?;
    if want == 0 || !joins_only(pattern) {
        return None;
    }
    let predicate = sole_predicate_of(pattern, variable)?;
    let uses = value_ranges::predicate_uses(query)?;
    (uses.get(&predicate) == Some(&1)).then(|| TopK { predicate, descending, want, pattern: pattern.as_ref().clone() })
}

/// Whether every solution of the pattern is a join of its triple patterns'
/// (BGPs, joins and FILTERs only).
fn joins_only(pattern: &GraphPattern) -> bool {
    match pattern {
        GraphPattern::Bgp { .. } => true,
        GraphPattern::Join { left, right } => joins_only(left) && joins_only(right),
        GraphPattern::Filter { inner, .. } => joins_only(inner),
        _ => false,
    }
}

/// The predicate of the one pattern `?s <p> ?variable` of a joined group.
fn sole_predicate_of(pattern: &GraphPattern, variable: &Variable) -> Option<NamedNode> {
    let mut patterns = Vec::new();
    value_ranges::joined_patterns(pattern, &mut patterns);
    let mut predicates = patterns.into_iter().filter(|(_, object)| object == variable).map(|(predicate, _)| predicate);
    let predicate = predicates.next()?;
    predicates.next().is_none().then_some(predicate)
}

/// The objects a run reads for the top-k predicate: every read of a
/// pattern with that predicate is restricted to them (`dataset.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Restriction {
    pub predicate: TermId,
    /// `None`: nothing in this run, whose answer is thrown away (it missed
    /// the blocks that place the range; they come in the next round).
    pub objects: Option<Range<TermId>>,
}

/// How many rows (up to the count asked for) the top-k pattern gives when
/// the predicate's objects are restricted to these ids.
pub(crate) type Count<'c> = dyn FnMut(&Restriction, u64) -> Option<u64> + 'c;

/// The restriction for a top-k query (see the module doc), `None` when
/// reading every value is needed or cheaper to decide (the predicate is
/// absent or not yet looked up, its values are of mixed kinds, it has
/// fewer rows than asked for). `count` runs the pattern; `None` from it
/// (an error) gives up the restriction, so the query meets that error
/// itself.
pub(crate) fn restriction<S: RangeSource>(store: &Store<S>, meter: &Meter, top: &TopK, count: &mut Count<'_>) -> Option<Restriction> {
    let missed = |error: ReadError| match error {
        ReadError::Missing(ranges) => meter.note_missing(&ranges),
        error => meter.stop(super::QueryError::Read(error)),
    };
    // A predicate not looked up yet makes its patterns pending (no read).
    let predicate = match store.term_id(top.predicate.as_ref().into()) {
        Ok(id) => id?,
        Err(error) => {
            missed(error);
            return None;
        }
    };
    let deferred = Restriction { predicate, objects: None };
    let mut depth = top.want;
    loop {
        let ends = match ends(store, predicate, depth, top.descending) {
            Ok(ends) => ends?,
            Err(error) => {
                missed(error);
                return Some(deferred);
            }
        };
        // Blocks missed from here on are asked for together: a run that
        // missed is thrown away, so it may go on as if the kinds agree.
        match one_kind(store, &ends) {
            Ok(true) => {}
            Ok(false) => return None,
            Err(error) => missed(error),
        }
        let sure = if top.descending { ends.threshold..TermId::MAX } else { 0..ends.threshold.saturating_add(1) };
        let kept = match store.encoded_term(ends.threshold).and_then(|threshold| range_beyond(store, &threshold, top.descending)) {
            Ok(kept) => kept,
            Err(error) => {
                missed(error);
                sure.clone()
            }
        };
        let kept = Restriction { predicate, objects: Some(kept) };
        // A run that missed reads the range now and checks it in the next
        // round. A lone pattern over a file without named graphs has a row
        // for each of the `depth` quads: nothing to check.
        if meter.has_missed() || (top.lone_pattern() && store.index().graphs.is_empty()) {
            return Some(kept);
        }
        let rows = count(&Restriction { predicate, objects: Some(sure) }, top.want)?;
        if meter.has_missed() || rows >= top.want {
            return Some(kept);
        }
        depth = deeper(depth, rows, top.want);
    }
}

/// How deep the next threshold goes when `rows` of the `want` rows came
/// from `depth` quads: where as many again as needed would come at the rate
/// seen, and at least 4× as deep (16× when none came). Each step costs a
/// round when it reads new blocks, so it aims past the need.
fn deeper(depth: u64, rows: u64, want: u64) -> u64 {
    let aim = if rows == 0 { depth.saturating_mul(16) } else { depth.saturating_mul(want).saturating_mul(2) / rows };
    aim.max(depth.saturating_mul(4))
}

/// The ids from the threshold's key to the end of the order (`DESC`: up to
/// the last id; `ASC`: from the first), widened past what keys do not tell
/// apart from it. Every object of the predicate is of the threshold's kind,
/// so no bound at the kind's other end is needed.
fn range_beyond<S: RangeSource>(store: &Store<S>, threshold: &[u8], descending: bool) -> Result<Range<TermId>, ReadError> {
    let Some((kind, key)) = term::encoded_value_key(threshold) else { return Ok(0..TermId::MAX) };
    let key = value_ranges::widened(&key, if descending { -1 } else { 1 }).unwrap_or(key);
    let mut bound = vec![kind];
    bound.extend_from_slice(key.bytes());
    if descending {
        Ok(store.ids_between(&bound, None)?.start..TermId::MAX)
    } else {
        // `kind, key, FF` is above every term with that key (a datatype IRI follows it).
        bound.push(0xFF);
        Ok(0..store.ids_between(&bound, None)?.start)
    }
}

/// A predicate's lowest and highest objects, and the threshold: the object
/// `depth` rows from the end of its rows in POS (the highest for `DESC`).
struct Ends {
    lowest: TermId,
    highest: TermId,
    threshold: TermId,
}

/// The [`Ends`] of a predicate's objects, `None` when it has fewer than
/// `depth` rows. Reads the POS blocks at both ends of the predicate (the
/// first not when the directory says it starts with the predicate), and from
/// the end of the order as many as the threshold needs.
fn ends<S: RangeSource>(store: &Store<S>, predicate: TermId, depth: u64, descending: bool) -> Result<Option<Ends>, ReadError> {
    let blocks = store.blocks_for_prefix(Permutation::Pos, &[predicate])?;
    if blocks.is_empty() {
        return Ok(None);
    }
    let rows_of = |keys: &PermutationKeys| keys.lower_bound(&[predicate])..keys.lower_bound(&[predicate.saturating_add(1)]);
    let object_at = |keys: &PermutationKeys, row: usize| keys.get(row).map(|key| key[1]);
    let lowest = match store.permutation_head(Permutation::Pos, blocks.start) {
        Some(head) if head[0] == predicate => Ok(Some(head[1])),
        _ => store.permutation_block(Permutation::Pos, blocks.start).map(|keys| object_at(&keys, rows_of(&keys).start)),
    };
    let last = store.permutation_block(Permutation::Pos, blocks.end - 1);
    let (lowest, last) = both(lowest, last)?;
    let highest = rows_of(&last).end.checked_sub(1).and_then(|row| object_at(&last, row));
    let (Some(lowest), Some(highest)) = (lowest, highest) else { return Ok(None) };
    // Walk from the end of the order until `depth` rows are behind.
    let mut seen = 0u64;
    let numbers: Box<dyn Iterator<Item = usize>> = if descending { Box::new(blocks.rev()) } else { Box::new(blocks) };
    for number in numbers {
        let keys = store.permutation_block(Permutation::Pos, number)?;
        let rows = rows_of(&keys);
        let count = rows.len() as u64;
        if seen + count >= depth {
            let from_end = (depth - seen - 1) as usize;
            let row = if descending { rows.end - 1 - from_end } else { rows.start + from_end };
            return Ok(object_at(&keys, row).map(|threshold| Ends { lowest, highest, threshold }));
        }
        seen += count;
    }
    Ok(None)
}

/// Whether the lowest and the highest objects, and so every object between
/// them, are of one value-ordered kind. The lowest's kind is its dictionary
/// block's head's when that is the highest's kind (the head is ≤ the lowest
/// ≤ the highest), known without reading the block.
fn one_kind<S: RangeSource>(store: &Store<S>, ends: &Ends) -> Result<bool, ReadError> {
    let kind = |encoded: Vec<u8>| encoded.first().copied();
    let highest = store.encoded_term(ends.highest).map(kind);
    let head = store.dictionary_head_for_id(ends.lowest).as_deref().and_then(<[u8]>::first).copied();
    let lowest = match (&highest, head) {
        (Ok(Some(kind)), Some(head)) if head == *kind => Ok(Some(head)),
        // Decided in the next round, with the highest's kind.
        (Err(_), Some(head)) if term::key_length(head).is_some() => Ok(Some(head)),
        _ => store.encoded_term(ends.lowest).map(kind),
    };
    let (highest, lowest) = both(highest, lowest)?;
    Ok(highest.is_some_and(|kind| term::key_length(kind).is_some()) && highest == lowest)
}

/// Both results, or every range both missed.
fn both<A, B>(a: Result<A, ReadError>, b: Result<B, ReadError>) -> Result<(A, B), ReadError> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(ReadError::Missing(mut first)), Err(ReadError::Missing(second))) => {
            first.extend(second);
            Err(ReadError::Missing(first))
        }
        (Err(error), _) | (_, Err(error)) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sparql::parse_query;

    fn shape(query: &str) -> Option<(String, bool, u64)> {
        let query = parse_query(&format!("PREFIX : <http://a/> {query}"), None).unwrap();
        top_k(&query).map(|top| (top.predicate.as_str().to_owned(), top.descending, top.want))
    }

    #[test]
    fn the_first_order_key_as_a_predicates_object_is_a_top_k() {
        assert_eq!(shape("SELECT ?e ?n { ?e :n ?n } ORDER BY DESC(?n) LIMIT 20"), Some(("http://a/n".into(), true, 20)));
        assert_eq!(shape("SELECT * { ?e :n ?n ; :name ?x FILTER(?x != 1) } ORDER BY ?n ?e LIMIT 5 OFFSET 10"), Some(("http://a/n".into(), false, 15)));
        assert_eq!(shape("SELECT ?e { ?e :n ?n . ?n :m ?o } ORDER BY DESC(?n) LIMIT 1"), Some(("http://a/n".into(), true, 1)));
    }

    #[test]
    fn other_shapes_are_not() {
        for query in [
            "SELECT ?e ?n { ?e :n ?n } ORDER BY DESC(?n)",
            "SELECT ?e ?n { ?e :n ?n } ORDER BY ?e DESC(?n) LIMIT 20",
            "SELECT ?e ?n { ?e :n ?n } ORDER BY DESC(?n + 1) LIMIT 20",
            "SELECT DISTINCT ?n { ?e :n ?n } ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?e ?n { ?e :n ?n } ORDER BY DESC(?n) LIMIT 0",
            "SELECT ?e ?n { ?e :x ?y OPTIONAL { ?e :n ?n } } ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?e ?n { ?e :n ?n . ?f :n ?m } ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?e ?n { ?e :n ?n . ?f :m ?n } ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?e ?n { ?e :n ?n . ?f ?p ?o } ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?e ?n { ?e :n ?n . ?f :p+ ?o } ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?e ?n { ?e :n ?n FILTER EXISTS { ?e :n 3 } } ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?e ?n { { ?e :n ?n } UNION { ?e :m ?n } } ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?e ?n { GRAPH ?g { ?e :n ?n } } ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?n (COUNT(*) AS ?c) { ?e :n ?n } GROUP BY ?n ORDER BY DESC(?n) LIMIT 20",
            "SELECT ?e ?n { ?e :n ?n BIND(1 AS ?one) } ORDER BY DESC(?n) LIMIT 20",
            "ASK { { SELECT ?n { ?e :n ?n } ORDER BY DESC(?n) LIMIT 1 } }",
        ] {
            assert_eq!(shape(query), None, "{query}");
        }
    }

    #[test]
    fn the_threshold_goes_deeper_at_the_rate_rows_come() {
        // 6 of 20 rows from 20 quads: 20 × 20 × 2 / 6 = 133 quads next.
        assert_eq!(deeper(20, 6, 20), 133);
        assert_eq!(deeper(20, 19, 20), 80);
        assert_eq!(deeper(20, 0, 20), 320);
        assert_eq!(deeper(u64::MAX / 2, 1, 20), u64::MAX);
    }
}
