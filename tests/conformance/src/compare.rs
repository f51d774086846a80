//! Comparing an engine's answer with the expected results, by the W3C test-suite rules.
//!
//! * Terms are compared exactly: a literal's lexical form, datatype and language tag must all
//!   match (`"01"^^xsd:integer` is not `"1"^^xsd:integer`). The engine is a store that must
//!   give back the data it was given; nothing is normalised.
//! * Blank nodes match up to one bijection of labels over the whole answer, not row by row.
//!   Graphs are compared by isomorphism (both canonicalised by oxrdf).
//! * Solutions are a multiset; order is checked only when the query's outermost pattern has
//!   ORDER BY and the expected file records an order. Then the rows must follow the expected
//!   sequence of sort keys (the ORDER BY variables when they are all plain projected variables,
//!   else whole rows), so rows that tie on the keys may come in any order.
//! * `mf:LaxCardinality` (REDUCED): duplicates are ignored on both sides.
//! * One documented quirk of the suite: `csv-tsv-res/csvtsv03.tsv` writes the data's
//!   `"1.0E6"^^xsd:double` as `1.0e6`, so for TSV expectations the exponent letter of
//!   xsd:double literals is compared case-insensitively.

use crate::engine::{Answer, Solutions};
use crate::expected::Expected;
use oxrdf::dataset::CanonicalizationAlgorithm;
use oxrdf::vocab::xsd;
use oxrdf::{BlankNode, Graph, Literal, Term, Triple, Variable};
use spargebra::algebra::{Expression, GraphPattern, OrderExpression};
use spargebra::{Query, SparqlParser};
use std::collections::{BTreeSet, HashMap};

type Row = Vec<Option<Term>>;

/// How the query orders its solutions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// No ORDER BY at the top: any order is correct.
    Unordered,
    /// ORDER BY plain variables: these are the sort keys.
    ByVariables(Vec<Variable>),
    /// ORDER BY expressions: whole rows must come in the expected order.
    ByRow,
}

/// The query's top-level ordering (the harness parses the query only for this; a query the
/// parser rejects is treated as unordered).
pub fn query_order(query: &str, base: &str) -> Order {
    let Ok(parser) = SparqlParser::new().with_base_iri(base) else {
        return Order::Unordered;
    };
    let Ok(Query::Select { pattern, .. }) = parser.parse_query(query) else {
        return Order::Unordered;
    };
    let mut pattern = &pattern;
    loop {
        match pattern {
            GraphPattern::Slice { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Project { inner, .. } => pattern = inner,
            GraphPattern::OrderBy { expression, .. } => {
                let variables: Option<Vec<Variable>> = expression
                    .iter()
                    .map(|condition| match condition {
                        OrderExpression::Asc(Expression::Variable(v))
                        | OrderExpression::Desc(Expression::Variable(v)) => Some(v.clone()),
                        _ => None,
                    })
                    .collect();
                return variables.map_or(Order::ByRow, Order::ByVariables);
            }
            _ => return Order::Unordered,
        }
    }
}

/// Compares `actual` with `expected`; `Err` holds a short description of the first difference.
pub fn compare(
    expected: &Expected,
    actual: &Answer,
    order: &Order,
    lax_cardinality: bool,
) -> Result<(), String> {
    let (expected_answer, actual) = if expected.tsv {
        (
            fold_double_exponent(&expected.answer),
            fold_double_exponent(actual),
        )
    } else {
        (expected.answer.clone(), actual.clone())
    };
    match (&expected_answer, &actual) {
        (Answer::Boolean(e), Answer::Boolean(a)) => {
            if e == a {
                Ok(())
            } else {
                Err(format!("expected {e}, got {a}"))
            }
        }
        (Answer::Solutions(e), Answer::Solutions(a)) => {
            let order = if expected.ordered && !lax_cardinality {
                order
            } else {
                &Order::Unordered
            };
            compare_solutions(e, a, expected.variables_declared, order, lax_cardinality)
        }
        (Answer::Graph(e), Answer::Graph(a)) => compare_graphs(e, a),
        (e, a) => Err(format!("expected {}, got {}", kind(e), kind(a))),
    }
}

fn kind(answer: &Answer) -> &'static str {
    match answer {
        Answer::Solutions(_) => "solutions",
        Answer::Boolean(_) => "a boolean",
        Answer::Graph(_) => "a graph",
    }
}

fn compare_solutions(
    expected: &Solutions,
    actual: &Solutions,
    variables_declared: bool,
    order: &Order,
    lax_cardinality: bool,
) -> Result<(), String> {
    let columns = if variables_declared {
        let names = |s: &Solutions| {
            s.variables
                .iter()
                .map(|v| v.as_str().to_owned())
                .collect::<BTreeSet<_>>()
        };
        if names(expected) != names(actual) {
            return Err(format!(
                "variables differ: expected {}, got {}",
                list(&expected.variables),
                list(&actual.variables)
            ));
        }
        expected.variables.clone()
    } else {
        // No declared variables: compare the values bound on either side.
        let mut columns = expected.variables.clone();
        for (i, v) in actual.variables.iter().enumerate() {
            if !columns.contains(v)
                && actual
                    .rows
                    .iter()
                    .any(|row| row.get(i).is_some_and(Option::is_some))
            {
                columns.push(v.clone());
            }
        }
        columns
    };
    let mut expected_rows = align(expected, &columns);
    let mut actual_rows = align(actual, &columns);
    if lax_cardinality {
        dedup(&mut expected_rows);
        dedup(&mut actual_rows);
    }
    match_multisets(&expected_rows, &actual_rows, &columns)?;

    let keys: Option<Vec<usize>> = match order {
        Order::Unordered => return Ok(()),
        Order::ByRow => None,
        Order::ByVariables(variables) => variables
            .iter()
            .map(|v| columns.iter().position(|c| c == v))
            .collect(),
    };
    let key = |row: &Row| -> Vec<Option<Term>> {
        let erase = |cell: &Option<Term>| match cell {
            Some(Term::BlankNode(_)) => Some(Term::BlankNode(BlankNode::new_unchecked("b"))),
            other => other.clone(),
        };
        match &keys {
            Some(keys) => keys.iter().map(|&k| erase(&row[k])).collect(),
            None => row.iter().map(erase).collect(),
        }
    };
    for (i, (e, a)) in expected_rows.iter().zip(&actual_rows).enumerate() {
        if key(e) != key(a) {
            return Err(format!(
                "order differs at row {}: expected {}, got {}",
                i + 1,
                show_row(e, &columns),
                show_row(a, &columns)
            ));
        }
    }
    Ok(())
}

/// Rows with their values in the order of `columns` (absent variables are unbound).
fn align(solutions: &Solutions, columns: &[Variable]) -> Vec<Row> {
    let positions: Vec<Option<usize>> = columns
        .iter()
        .map(|c| solutions.variables.iter().position(|v| v == c))
        .collect();
    solutions
        .rows
        .iter()
        .map(|row| {
            positions
                .iter()
                .map(|p| p.and_then(|p| row.get(p).cloned().flatten()))
                .collect()
        })
        .collect()
}

fn dedup(rows: &mut Vec<Row>) {
    let mut seen = BTreeSet::new();
    rows.retain(|row| seen.insert(format!("{row:?}")));
}

/// A row with its blank nodes blurred: rows can only match if their shapes are equal.
fn shape(row: &Row) -> Vec<Option<String>> {
    row.iter()
        .map(|cell| {
            cell.as_ref().map(|term| match term {
                Term::BlankNode(_) => "_:".to_owned(),
                other => other.to_string(),
            })
        })
        .collect()
}

fn has_blank(row: &Row) -> bool {
    row.iter()
        .any(|cell| matches!(cell, Some(Term::BlankNode(_))))
}

/// Multiset equality of rows up to one blank-node bijection.
fn match_multisets(expected: &[Row], actual: &[Row], columns: &[Variable]) -> Result<(), String> {
    // 1. Shapes must match as multisets; this also settles every row without blank nodes.
    let mut balance: HashMap<Vec<Option<String>>, (i64, usize, usize)> = HashMap::new();
    for (i, row) in expected.iter().enumerate() {
        let entry = balance.entry(shape(row)).or_insert((0, i, usize::MAX));
        entry.0 += 1;
    }
    for (i, row) in actual.iter().enumerate() {
        let entry = balance.entry(shape(row)).or_insert((0, usize::MAX, i));
        entry.0 -= 1;
        if entry.2 == usize::MAX {
            entry.2 = i;
        }
    }
    // Examples are picked by their text so that reports do not depend on the engine's order.
    let describe = |rows: &[Row], indexes: Vec<usize>| {
        let mut shown: Vec<String> = indexes
            .into_iter()
            .map(|i| show_row(&rows[i], columns))
            .collect();
        shown.sort_unstable();
        shown
    };
    let missing = describe(
        expected,
        balance.values().filter(|b| b.0 > 0).map(|b| b.1).collect(),
    );
    let unexpected = describe(
        actual,
        balance.values().filter(|b| b.0 < 0).map(|b| b.2).collect(),
    );
    if !missing.is_empty() || !unexpected.is_empty() {
        let mut message = format!("expected {} rows, got {}", expected.len(), actual.len());
        for (label, rows) in [("missing", &missing), ("unexpected", &unexpected)] {
            if let Some(first) = rows.first() {
                message.push_str(&format!("; {label} {first}"));
                if rows.len() > 1 {
                    message.push_str(&format!(" (+{} more)", rows.len() - 1));
                }
            }
        }
        return Err(message);
    }

    // 2. Rows with blank nodes: search for one bijection of labels.
    let expected: Vec<&Row> = expected.iter().filter(|r| has_blank(r)).collect();
    let actual: Vec<&Row> = actual.iter().filter(|r| has_blank(r)).collect();
    if expected.is_empty() {
        return Ok(());
    }
    let mut matcher = Matcher::new(&expected, &actual);
    match matcher.search(0) {
        Some(true) => Ok(()),
        Some(false) => {
            Err("no single blank-node mapping relates the expected rows to the actual ones".into())
        }
        None => Err("blank-node matching gave up (too many candidate mappings)".into()),
    }
}

/// Backtracking search for a bijection between expected and actual blank nodes under which
/// the blank-node rows correspond one to one.
struct Matcher<'a> {
    expected: Vec<&'a Row>,
    /// For each expected row (in search order), the actual rows of the same shape.
    candidates: Vec<Vec<usize>>,
    actual: &'a [&'a Row],
    used: Vec<bool>,
    forward: HashMap<&'a BlankNode, &'a BlankNode>,
    backward: HashMap<&'a BlankNode, &'a BlankNode>,
    budget: usize,
}

impl<'a> Matcher<'a> {
    fn new(expected: &[&'a Row], actual: &'a [&'a Row]) -> Self {
        let mut by_shape: HashMap<Vec<Option<String>>, Vec<usize>> = HashMap::new();
        for (i, row) in actual.iter().enumerate() {
            by_shape.entry(shape(row)).or_default().push(i);
        }
        let mut pairs: Vec<(&'a Row, Vec<usize>)> = expected
            .iter()
            .map(|row| (*row, by_shape.get(&shape(row)).cloned().unwrap_or_default()))
            .collect();
        // Most constrained rows first.
        pairs.sort_by_key(|(_, candidates)| candidates.len());
        let (expected, candidates) = pairs.into_iter().unzip();
        Self {
            expected,
            candidates,
            actual,
            used: vec![false; actual.len()],
            forward: HashMap::new(),
            backward: HashMap::new(),
            budget: 1_000_000,
        }
    }

    /// `Some(found)`, or `None` when the step budget ran out.
    fn search(&mut self, i: usize) -> Option<bool> {
        if i == self.expected.len() {
            return Some(true);
        }
        for k in 0..self.candidates[i].len() {
            let j = self.candidates[i][k];
            if self.used[j] {
                continue;
            }
            self.budget = self.budget.checked_sub(1)?;
            if let Some(added) = self.bind(self.expected[i], self.actual[j]) {
                self.used[j] = true;
                if self.search(i + 1)? {
                    return Some(true);
                }
                self.used[j] = false;
                for (e, a) in added {
                    self.forward.remove(e);
                    self.backward.remove(a);
                }
            }
        }
        Some(false)
    }

    /// Extends the mapping so that `expected` maps onto `actual`; returns the new pairs, or
    /// `None` (mapping unchanged) if they conflict. Rows have the same shape.
    fn bind(
        &mut self,
        expected: &'a Row,
        actual: &'a Row,
    ) -> Option<Vec<(&'a BlankNode, &'a BlankNode)>> {
        let mut added = Vec::new();
        for (e, a) in expected.iter().zip(actual) {
            if let (Some(Term::BlankNode(e)), Some(Term::BlankNode(a))) = (e, a) {
                match (self.forward.get(e), self.backward.get(a)) {
                    (Some(&mapped), _) if mapped == a => {}
                    (None, None) => {
                        self.forward.insert(e, a);
                        self.backward.insert(a, e);
                        added.push((e, a));
                    }
                    _ => {
                        for (e, a) in added {
                            self.forward.remove(e);
                            self.backward.remove(a);
                        }
                        return None;
                    }
                }
            }
        }
        Some(added)
    }
}

/// Graph isomorphism: both graphs canonicalised, then compared as sets.
fn compare_graphs(expected: &[Triple], actual: &[Triple]) -> Result<(), String> {
    let mut expected: Graph = expected.iter().collect();
    let mut actual: Graph = actual.iter().collect();
    expected.canonicalize(CanonicalizationAlgorithm::Unstable);
    actual.canonicalize(CanonicalizationAlgorithm::Unstable);
    if expected == actual {
        return Ok(());
    }
    let difference = |a: &Graph, b: &Graph| {
        let mut triples: Vec<String> = a
            .iter()
            .filter(|t| !b.contains(*t))
            .map(|t| t.to_string())
            .collect();
        triples.sort_unstable();
        triples
    };
    let missing = difference(&expected, &actual);
    let unexpected = difference(&actual, &expected);
    let mut message = format!(
        "graphs differ: expected {} triples, got {}",
        expected.len(),
        actual.len()
    );
    if let Some(t) = missing.first() {
        message.push_str(&format!("; missing {t}"));
    }
    if let Some(t) = unexpected.first() {
        message.push_str(&format!("; unexpected {t}"));
    }
    if missing.is_empty() && unexpected.is_empty() {
        message.push_str(" (blank nodes not isomorphic)");
    }
    Err(message)
}

/// Writes xsd:double exponents with `E` (see the module doc on `csvtsv03.tsv`).
fn fold_double_exponent(answer: &Answer) -> Answer {
    let fold = |term: &Option<Term>| match term {
        Some(Term::Literal(l)) if l.datatype() == xsd::DOUBLE => Some(Term::Literal(
            Literal::new_typed_literal(l.value().replace('e', "E"), xsd::DOUBLE),
        )),
        other => other.clone(),
    };
    match answer {
        Answer::Solutions(s) => Answer::Solutions(Solutions {
            variables: s.variables.clone(),
            rows: s
                .rows
                .iter()
                .map(|row| row.iter().map(fold).collect())
                .collect(),
        }),
        other => other.clone(),
    }
}

fn list(variables: &[Variable]) -> String {
    let names: Vec<String> = variables.iter().map(ToString::to_string).collect();
    format!("[{}]", names.join(" "))
}

fn show_row(row: &Row, columns: &[Variable]) -> String {
    let cells: Vec<String> = columns
        .iter()
        .zip(row)
        .filter_map(|(v, cell)| cell.as_ref().map(|t| format!("{v}={t}")))
        .collect();
    format!("{{{}}}", cells.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::NamedNode;

    fn iri(s: &str) -> Option<Term> {
        Some(NamedNode::new_unchecked(format!("http://e/{s}")).into())
    }
    fn bn(s: &str) -> Option<Term> {
        Some(BlankNode::new_unchecked(s).into())
    }
    fn solutions(rows: Vec<Row>) -> Solutions {
        Solutions {
            variables: vec![Variable::new_unchecked("x"), Variable::new_unchecked("y")],
            rows,
        }
    }
    fn check(e: Vec<Row>, a: Vec<Row>) -> Result<(), String> {
        compare_solutions(&solutions(e), &solutions(a), true, &Order::Unordered, false)
    }

    #[test]
    fn blank_nodes_map_across_rows() {
        assert!(
            check(
                vec![vec![bn("a"), iri("1")], vec![bn("a"), iri("2")]],
                vec![vec![bn("z"), iri("2")], vec![bn("z"), iri("1")]]
            )
            .is_ok()
        );
        // Same labels per row but not one consistent mapping.
        assert!(
            check(
                vec![vec![bn("a"), iri("1")], vec![bn("a"), iri("2")]],
                vec![vec![bn("z"), iri("1")], vec![bn("w"), iri("2")]]
            )
            .is_err()
        );
        assert!(check(vec![vec![bn("a"), bn("b")]], vec![vec![bn("c"), bn("c")]]).is_err());
    }

    #[test]
    fn multiset_counts_matter() {
        assert!(
            check(
                vec![vec![iri("1"), None]],
                vec![vec![iri("1"), None], vec![iri("1"), None]]
            )
            .is_err()
        );
    }

    #[test]
    fn lexical_forms_matter() {
        let lit = |s: &str| Some(Literal::new_typed_literal(s, xsd::INTEGER).into());
        assert!(check(vec![vec![lit("01"), None]], vec![vec![lit("1"), None]]).is_err());
    }

    #[test]
    fn order_by_allows_ties() {
        let order = Order::ByVariables(vec![Variable::new_unchecked("x")]);
        let e = solutions(vec![
            vec![iri("1"), iri("a")],
            vec![iri("1"), iri("b")],
            vec![iri("2"), iri("c")],
        ]);
        let tie = solutions(vec![
            vec![iri("1"), iri("b")],
            vec![iri("1"), iri("a")],
            vec![iri("2"), iri("c")],
        ]);
        let wrong = solutions(vec![
            vec![iri("2"), iri("c")],
            vec![iri("1"), iri("b")],
            vec![iri("1"), iri("a")],
        ]);
        assert!(compare_solutions(&e, &tie, true, &order, false).is_ok());
        assert!(compare_solutions(&e, &wrong, true, &order, false).is_err());
    }

    #[test]
    fn detects_order_by() {
        let base = "http://e/";
        assert_eq!(query_order("SELECT * { ?s ?p ?o }", base), Order::Unordered);
        assert_eq!(
            query_order(
                "SELECT DISTINCT ?s { ?s ?p ?o } ORDER BY DESC(?s) LIMIT 2",
                base
            ),
            Order::ByVariables(vec![Variable::new_unchecked("s")])
        );
        assert_eq!(
            query_order("SELECT ?s { ?s ?p ?o } ORDER BY str(?o)", base),
            Order::ByRow
        );
    }
}
