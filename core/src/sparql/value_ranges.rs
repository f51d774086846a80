//! Range filters read only their range: `?s <p> ?v FILTER(?v >= lo && ?v < hi)`
//! on numbers or dates becomes a range of object ids for the pattern, so
//! the store reads the POS blocks of `(p, [lo, hi])` and not every value of
//! `p`. Numbers and dates have ids in value order in files with
//! `required_features` bit 2 (FORMAT.md §5.1.1), so the values between two
//! keys are one id range.
//!
//! A lexical-form filter, `FILTER(STR(?v) = "c")`, reads only the objects
//! whose lexical form (or IRI) is `c`: the dataset looks up the few terms
//! that can be, one per datatype and language tag of the file (`dataset.rs`),
//! instead of reading and decoding every object of `p` (issue 14, qudt 07).
//!
//! Pruning only: the FILTER stays and spareval evaluates it on what is read,
//! so the range need only hold every value the FILTER keeps. It is widened
//! for what keys cannot tell apart (numbers rounded to a double, a float
//! compared as a float, dates without timezone within 14 hours, §5.1.1).
//! The dataset sees patterns, not their place in the query, so a range
//! applies to a predicate only when the query has exactly one triple
//! pattern with it, no pattern with a variable predicate and no property
//! path; the FILTER must sit above that pattern with nothing but joins and
//! other FILTERs between them (every solution of the pattern then meets the
//! FILTER with the pattern's own object as `?v`).

use super::algebra::{VisitMut, query_pattern_mut, walk_pattern};
use crate::format::term::{self, ValueKey};
use oxrdf::vocab::xsd;
use oxrdf::{NamedNode, Variable};
use rustc_hash::FxHashMap;
use spargebra::Query;
use spargebra::algebra::{Expression, Function, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern};

/// The objects a pattern with this predicate needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectRange {
    pub predicate: NamedNode,
    pub objects: Objects,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Objects {
    /// The encoded terms in `[low, high)`, all of one value-ordered kind.
    Between { low: Vec<u8>, high: Vec<u8> },
    /// The terms whose lexical form, or IRI, is this string.
    Lexical(String),
}

/// The object ranges a query's FILTERs allow (see the module doc); ranges
/// of values only when the file's numbers and dates are in value order.
/// The walk is mutable (`algebra::VisitMut`), so the query is borrowed so
/// (a copy of it cost a small query more than the walk); it is left as it was.
pub(crate) fn object_ranges(query: &mut Query, value_order: bool) -> Vec<ObjectRange> {
    let mut finder = Finder { value_order, ..Finder::default() };
    finder.pattern(query_pattern_mut(query));
    if finder.open_predicate {
        return Vec::new();
    }
    let mut by_predicate: FxHashMap<NamedNode, Vec<ObjectRange>> = FxHashMap::default();
    for range in finder.ranges {
        by_predicate.entry(range.predicate.clone()).or_default().push(range);
    }
    by_predicate.into_iter().filter(|(predicate, ranges)| ranges.len() == 1 && finder.uses.get(predicate) == Some(&1)).flat_map(|(_, ranges)| ranges).collect()
}

/// How many triple patterns of the query use each constant predicate;
/// `None` when a pattern has a variable predicate or a property path (any
/// pattern may then read any predicate).
pub(crate) fn predicate_uses(query: &Query) -> Option<FxHashMap<NamedNode, usize>> {
    let mut query = query.clone();
    let mut finder = Finder::default();
    finder.pattern(query_pattern_mut(&mut query));
    (!finder.open_predicate).then_some(finder.uses)
}

/// A key moved past what keys do not tell apart from it (a double's
/// rounding, a date without timezone; see [`NUMBER_SLACK`] and
/// [`TIMELINE_SLACK`]): down for `sign` −1, up for 1.
pub(crate) fn widened(key: &ValueKey, sign: i8) -> Option<ValueKey> {
    Some(Key::of(key)?.widened(sign))
}

#[derive(Default)]
struct Finder {
    /// Triple patterns per constant predicate.
    uses: FxHashMap<NamedNode, usize>,
    /// A pattern with a variable predicate or a property path: any pattern
    /// may then be read with any predicate, and no range applies.
    open_predicate: bool,
    ranges: Vec<ObjectRange>,
    /// Whether ranges of values apply (FORMAT.md §5.1.1).
    value_order: bool,
}

impl VisitMut for Finder {
    fn pattern(&mut self, pattern: &mut GraphPattern) {
        match pattern {
            GraphPattern::Bgp { patterns } => {
                for triple in patterns.iter() {
                    match &triple.predicate {
                        NamedNodePattern::NamedNode(predicate) => *self.uses.entry(predicate.clone()).or_default() += 1,
                        NamedNodePattern::Variable(_) => self.open_predicate = true,
                    }
                }
            }
            GraphPattern::Path { .. } => self.open_predicate = true,
            GraphPattern::Filter { expr, inner } => {
                let bounds = if self.value_order { variable_bounds(expr) } else { FxHashMap::default() };
                let forms = lexical_forms(expr);
                if !bounds.is_empty() || !forms.is_empty() {
                    let mut patterns = Vec::new();
                    joined_patterns(inner, &mut patterns);
                    for (predicate, object) in patterns {
                        if let Some(bounds) = bounds.get(&object) {
                            self.ranges.push(bounds.range(predicate));
                        } else if let Some(lexical) = forms.get(&object) {
                            self.ranges.push(ObjectRange { predicate, objects: Objects::Lexical(lexical.clone()) });
                        }
                    }
                }
            }
            _ => {}
        }
        walk_pattern(self, pattern);
    }
}

/// The `?s <p> ?v` patterns of a group joined under a FILTER: through
/// joins, BGPs and FILTERs only.
pub(crate) fn joined_patterns(pattern: &GraphPattern, out: &mut Vec<(NamedNode, Variable)>) {
    match pattern {
        GraphPattern::Bgp { patterns } => {
            for triple in patterns {
                if let (NamedNodePattern::NamedNode(predicate), TermPattern::Variable(object)) = (&triple.predicate, &triple.object) {
                    out.push((predicate.clone(), object.clone()));
                }
            }
        }
        GraphPattern::Join { left, right } => {
            joined_patterns(left, out);
            joined_patterns(right, out);
        }
        GraphPattern::Filter { inner, .. } => joined_patterns(inner, out),
        _ => {}
    }
}

/// What a FILTER's conjuncts say of a variable: values of one value-ordered
/// kind between two keys.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    kind: u8,
    low: Option<Key>,
    high: Option<Key>,
}

/// A key's value: a number, or a point on the timeline (10^-18 s).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum Key {
    Number(f64),
    Timeline(i128),
}

/// FORMAT.md §5.1.1: numbers widen by a relative 2^-20 (keys are doubles,
/// SPARQL compares a decimal with a float as floats, and oxsdatatypes keeps
/// 18 decimal digits, hence the absolute part)…
const NUMBER_SLACK: f64 = 1.0 / (1 << 20) as f64;
const NUMBER_SLACK_ABSOLUTE: f64 = 1e-15;
/// … and dates and dateTimes by 14 hours and a second (a value without
/// timezone against one with), in 10^-18 s.
const TIMELINE_SLACK: i128 = (14 * 3600 + 1) * 1_000_000_000_000_000_000;

impl Key {
    fn of(key: &ValueKey) -> Option<Self> {
        key.as_number().map(Self::Number).or_else(|| key.as_timeline().map(Self::Timeline))
    }

    /// The key `widen` past the value in the direction `sign` (−1 down, 1 up).
    fn widened(self, sign: i8) -> ValueKey {
        match self {
            Self::Number(value) => ValueKey::number(value + f64::from(sign) * (value.abs() * NUMBER_SLACK + NUMBER_SLACK_ABSOLUTE)),
            Self::Timeline(value) => ValueKey::timeline(value.saturating_add(i128::from(sign) * TIMELINE_SLACK)),
        }
    }
}

impl Bounds {
    fn range(&self, predicate: NamedNode) -> ObjectRange {
        let mut low = vec![self.kind];
        if let Some(key) = self.low {
            low.extend_from_slice(key.widened(-1).bytes());
        }
        // Every term of a kind continues after its key with a datatype IRI,
        // which starts below 0xFF: `kind, key, FF` is above every term with
        // that key; `kind + 1` above every term of the kind.
        let high = match self.high {
            Some(key) => {
                let mut high = vec![self.kind];
                high.extend_from_slice(key.widened(1).bytes());
                high.push(0xFF);
                high
            }
            None => vec![self.kind + 1],
        };
        ObjectRange { predicate, objects: Objects::Between { low, high } }
    }

    fn merge(&mut self, other: Bounds) -> bool {
        if self.kind != other.kind {
            return false;
        }
        let pick = |a: Option<Key>, b: Option<Key>, higher: bool| match (a, b) {
            (Some(a), Some(b)) => Some(if (a > b) == higher { a } else { b }),
            (a, b) => a.or(b),
        };
        self.low = pick(self.low, other.low, true);
        self.high = pick(self.high, other.high, false);
        true
    }
}

/// The bounds the top-level conjuncts of a FILTER put on variables. A
/// conjunct it does not read (an OR, a function, a constant of another
/// datatype) bounds nothing; a variable compared with two kinds (a date and
/// a number) gets no bounds.
fn variable_bounds(expression: &Expression) -> FxHashMap<Variable, Bounds> {
    let mut conjuncts = Vec::new();
    flatten_and(expression, &mut conjuncts);
    let mut bounds: FxHashMap<Variable, Bounds> = FxHashMap::default();
    let mut mixed = Vec::new();
    for conjunct in conjuncts {
        let Some((variable, bound)) = comparison(conjunct) else { continue };
        match bounds.get_mut(&variable) {
            Some(existing) => {
                if !existing.merge(bound) {
                    mixed.push(variable);
                }
            }
            None => _ = bounds.insert(variable, bound),
        }
    }
    for variable in mixed {
        bounds.remove(&variable);
    }
    bounds
}

/// The variables a FILTER's top-level conjuncts give a lexical form:
/// `STR(?v) = "c"` or `"c" = STR(?v)`, `c` a simple literal (`STR` gives
/// one; compared with anything else it is never equal). A variable given
/// two forms keeps the first: the FILTER keeps only what both allow, and
/// the objects read need only hold that.
fn lexical_forms(expression: &Expression) -> FxHashMap<Variable, String> {
    let mut conjuncts = Vec::new();
    flatten_and(expression, &mut conjuncts);
    let mut forms = FxHashMap::default();
    for conjunct in conjuncts {
        let Expression::Equal(a, b) = conjunct else { continue };
        let (call, constant) = match (a.as_ref(), b.as_ref()) {
            (Expression::FunctionCall(Function::Str, arguments), Expression::Literal(literal))
            | (Expression::Literal(literal), Expression::FunctionCall(Function::Str, arguments)) => (arguments, literal),
            _ => continue,
        };
        if let ([Expression::Variable(variable)], xsd::STRING) = (call.as_slice(), constant.datatype()) {
            forms.entry(variable.clone()).or_insert_with(|| constant.value().to_owned());
        }
    }
    forms
}

fn flatten_and<'e>(expression: &'e Expression, out: &mut Vec<&'e Expression>) {
    match expression {
        Expression::And(a, b) => {
            flatten_and(a, out);
            flatten_and(b, out);
        }
        other => out.push(other),
    }
}

/// `?v < c`, `c <= ?v`, `?v = c`…: the variable and what it bounds.
fn comparison(expression: &Expression) -> Option<(Variable, Bounds)> {
    let (operator, a, b) = match expression {
        Expression::Greater(a, b) => (Operator::Greater, a, b),
        Expression::GreaterOrEqual(a, b) => (Operator::Greater, a, b),
        Expression::Less(a, b) => (Operator::Less, a, b),
        Expression::LessOrEqual(a, b) => (Operator::Less, a, b),
        Expression::Equal(a, b) => (Operator::Equal, a, b),
        _ => return None,
    };
    let (variable, literal, operator) = match (a.as_ref(), b.as_ref()) {
        (Expression::Variable(v), Expression::Literal(l)) => (v, l, operator),
        (Expression::Literal(l), Expression::Variable(v)) => (v, l, operator.flipped()),
        _ => return None,
    };
    let (kind, key) = term::value_key(literal.as_ref())?;
    let key = Key::of(&key)?;
    let (low, high) = match operator {
        Operator::Greater => (Some(key), None),
        Operator::Less => (None, Some(key)),
        Operator::Equal => (Some(key), Some(key)),
    };
    Some((variable.clone(), Bounds { kind, low, high }))
}

/// Strict and non-strict comparisons bound alike: ranges are inclusive.
#[derive(Clone, Copy)]
enum Operator {
    Greater,
    Less,
    Equal,
}

impl Operator {
    fn flipped(self) -> Self {
        match self {
            Self::Greater => Self::Less,
            Self::Less => Self::Greater,
            Self::Equal => Self::Equal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sparql::parse_query;

    fn ranges(query: &str) -> Vec<ObjectRange> {
        object_ranges(&mut parse_query(&format!("PREFIX : <http://a/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> {query}"), None).unwrap(), true)
    }

    fn between(range: &ObjectRange) -> (&[u8], &[u8]) {
        match &range.objects {
            Objects::Between { low, high } => (low, high),
            Objects::Lexical(_) => panic!("not a range: {range:?}"),
        }
    }

    #[test]
    fn a_date_range_bounds_its_pattern() {
        let found = ranges(r#"SELECT * { ?e :date ?d ; :name ?n FILTER(?d >= "1850-01-01"^^xsd:date && ?d < "1870-01-01"^^xsd:date) }"#);
        assert_eq!(found.len(), 1);
        let range = &found[0];
        assert_eq!(range.predicate.as_str(), "http://a/date");
        let inside = term::encode_term(&oxrdf::Literal::new_typed_literal("1869-12-31", oxrdf::vocab::xsd::DATE));
        let before = term::encode_term(&oxrdf::Literal::new_typed_literal("1849-12-30", oxrdf::vocab::xsd::DATE));
        // 14 hours of slack (a date without timezone against one with): a
        // day starting 13 hours before the bound's still falls in.
        let just_before = term::encode_term(&oxrdf::Literal::new_typed_literal("1850-01-01+13:00", oxrdf::vocab::xsd::DATE));
        let (low, high) = between(range);
        assert!(low <= &inside[..] && &inside[..] < high);
        assert!(&before[..] < low);
        assert!(low <= &just_before[..]);
    }

    #[test]
    fn a_lower_bound_runs_to_the_end_of_the_kind() {
        let found = ranges("SELECT * { ?c :population ?p FILTER(10000000 < ?p) }");
        assert_eq!(found.len(), 1);
        let (low, high) = between(&found[0]);
        assert_eq!(high, [term::NUMBER + 1]);
        let big = term::encode_term(&oxrdf::Literal::new_typed_literal("1e9", oxrdf::vocab::xsd::DOUBLE));
        let small = term::encode_term(&oxrdf::Literal::new_typed_literal("9999", oxrdf::vocab::xsd::INTEGER));
        assert!(low <= &big[..] && &small[..] < low);
    }

    #[test]
    fn no_range_where_another_pattern_could_read_the_predicate() {
        for query in [
            "SELECT * { ?c :population ?p . ?d :population ?q FILTER(?p > 5) }",
            "SELECT * { ?c :population ?p . ?d ?any ?q FILTER(?p > 5) }",
            "SELECT * { ?c :population ?p . ?d :knows+ ?q FILTER(?p > 5) }",
            "SELECT * { ?c :population ?p OPTIONAL { ?c :x ?y } FILTER(?p > 5 || ?p < 0) }",
            "SELECT * { ?c :population ?p FILTER(?p > 5 && ?p < \"2000-01-01\"^^xsd:date) }",
            "SELECT * { ?c :population ?p FILTER(?p > \"5\") }",
            "SELECT * { { ?c :population ?p } UNION { ?c :x ?p } FILTER(?p > 5) }",
            "SELECT * { ?u :code ?c . ?v :code ?d FILTER(STR(?c) = \"km\") }",
            "SELECT * { ?u :code ?c FILTER(STR(?c) = \"km\" || ?c = 1) }",
            "SELECT * { ?u :code ?c FILTER(STR(?c) = \"km\"@en) }",
            "SELECT * { ?u :code ?c FILTER(STR(?c) != \"km\") }",
            "SELECT * { ?u :code ?c FILTER(LCASE(?c) = \"km\") }",
            "SELECT * { ?u :code ?c OPTIONAL { ?c :x ?y } FILTER(STR(?y) = \"km\") }",
        ] {
            assert_eq!(ranges(query), [], "{query}");
        }
    }

    #[test]
    fn a_lexical_form_filter_names_its_objects() {
        for query in [
            "ASK { GRAPH ?g { ?u :code ?c FILTER(STR(?c) = \"km/h\") } }",
            "SELECT * { ?u :code ?c ; :name ?n FILTER(?n != \"x\" && \"km/h\" = STR(?c)) }",
            "SELECT * { ?u :code ?c FILTER(STR(?c) = \"km/h\"^^xsd:string) }",
        ] {
            assert_eq!(ranges(query), [ObjectRange { predicate: NamedNode::new_unchecked("http://a/code"), objects: Objects::Lexical("km/h".into()) }], "{query}");
        }
        // Without value order, only lexical forms.
        let mut query = parse_query("PREFIX : <http://a/> SELECT * { ?u :code ?c ; :n ?n FILTER(STR(?c) = \"x\" && ?n > 3) }", None).unwrap();
        assert_eq!(object_ranges(&mut query, false).len(), 1);
        assert_eq!(object_ranges(&mut query, true).len(), 2);
    }
}
