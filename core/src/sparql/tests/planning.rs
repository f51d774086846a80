//! A query with more triple patterns than `MAX_PLANNED_PATTERNS` runs in the
//! order written (issue 18: spareval's optimizer grows with the cube of a
//! pattern's size, and no budget stops it; the `request` fuzz target found a
//! 170-byte query that planned for 1.3 s). Its answers stay those of
//! spareval's planned run over an in-memory `oxrdf::Dataset`.

use super::*;
use crate::sparql::algebra::triple_pattern_count;
use spargebra::SparqlParser;

/// A chain of 60 nodes, each with a label.
fn chain() -> String {
    let mut trig = String::from("PREFIX : <http://example.org/>\n");
    for i in 0..60 {
        trig.push_str(&format!(":n{i} :next :n{} ; :label \"node {i}\" .\n", i + 1));
    }
    trig
}

/// `?x0 :next ?x1 . … ?x{hops-1} :next ?x{hops}` and the first and last labels.
fn walk(hops: usize) -> String {
    let steps: String = (0..hops).map(|i| format!("?x{i} :next ?x{} . ", i + 1)).collect();
    format!("SELECT ?first ?last {{ {steps} ?x0 :label ?first . ?x{hops} :label ?last }}")
}

#[test]
fn a_query_past_the_planning_bound_answers_as_a_planned_one() {
    let trig = chain();
    let store = Store::open(fixture::from_trig(&trig), 1 << 20).unwrap();
    for hops in [10, 55] {
        let query = walk(hops);
        let mut parsed = SparqlParser::new().parse_query(&format!("{PREFIX}{query}")).unwrap();
        assert_eq!(triple_pattern_count(&mut parsed) > MAX_PLANNED_PATTERNS, hops == 55);
        let expected = spareval_rows(&trig, &query);
        assert_eq!(expected.len(), 60 - hops);
        for options in [QueryOptions::default(), QueryOptions { budget: roomy(), ..QueryOptions::default() }] {
            let got: BTreeSet<_> = rows_with(&store, &query, &options).into_iter().collect();
            assert_eq!(got, expected, "{hops} hops");
        }
    }
}

#[test]
fn reifiers_and_exists_patterns_are_counted() {
    let count = |query: &str| triple_pattern_count(&mut SparqlParser::new().parse_query(&format!("{PREFIX}{query}")).unwrap());
    // The fuzz finding's shape: each `~` reifies the triple once more.
    let tildes = "~".repeat(120);
    assert!(count(&format!("SELECT * {{ ?s :p 'x' {tildes} }}")) > MAX_PLANNED_PATTERNS);
    assert_eq!(count("SELECT * { ?s :p ?o . ?o :q+ ?z FILTER EXISTS { ?z :r ?w . ?w :s ?v } }"), 4);
}

/// The step hooks of a budgeted run plan the query too: past the bound they
/// keep the written order (the `request` fuzz target's MINUS of 117
/// reifiers spent 0.9 s in the optimizer there, after the evaluator's own
/// planning was bounded).
#[test]
fn step_hooks_past_the_planning_bound_keep_the_written_order() {
    let parsed = SparqlParser::new().parse_query(&format!("{PREFIX}{}", walk(55))).unwrap();
    let Query::Select { pattern, .. } = parsed else { panic!("a SELECT") };
    let hooked = crate::sparql::budget::with_step_hooks(&pattern, false).to_string();
    let at: Vec<usize> = (0..55).map(|i| hooked.find(&format!("?x{i} <http://example.org/next> ?x{}", i + 1)).unwrap_or_else(|| panic!("step {i} in {hooked}"))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{hooked}");
}

/// vendor/sparopt/PATCH.md change 2: the joins inside an `EXISTS` are ordered for the rows it
/// is checked against, a for-loop join from the row's `?x` (upstream kept the written order
/// and read every `?y :age ?a` again for each row), and `FILTER EXISTS`, `FILTER NOT EXISTS`
/// `BIND(EXISTS …)` and an `EXISTS` in an `OPTIONAL`'s filter answer as before.
#[test]
fn an_exists_pattern_joins_from_the_variables_of_its_row() {
    let exists = "?x a :Person FILTER EXISTS { ?y :age ?a . ?x :knows ?y }";
    let parsed = SparqlParser::new().parse_query(&format!("{PREFIX}SELECT ?x {{ {exists} }}")).unwrap();
    let Query::Select { pattern, .. } = parsed else { panic!("a SELECT") };
    let planned = format!("{:?}", sparopt::Optimizer::optimize_graph_pattern((&pattern).into()));
    assert!(planned.contains("Lateral"), "{planned}");
    assert_eq!(rows(&format!("SELECT ?x {{ {exists} }}")), set(&[&["<:alice>"], &["<:carol>"]]));
    assert_eq!(rows("SELECT ?x { ?x a :Person FILTER NOT EXISTS { ?y :age ?a . ?x :knows ?y } }"), set(&[&["<:bob>"]]));
    let bound = rows("SELECT ?x ?e { ?x a :Person BIND(EXISTS { ?y :age ?a . ?x :knows ?y } AS ?e) }");
    let boolean = |b: &str| format!("\"{b}\"^^<http://www.w3.org/2001/XMLSchema#boolean>");
    let expected: BTreeSet<Vec<String>> =
        [("<:alice>", "true"), ("<:bob>", "false"), ("<:carol>", "true")].iter().map(|(x, e)| vec![x.to_string(), boolean(e)]).collect();
    assert_eq!(bound, expected);
    let optional = "SELECT ?x ?y { ?x a :Person OPTIONAL { ?x :knows ?y FILTER EXISTS { ?z :age ?a . ?y :knows ?z } } }";
    assert_eq!(rows(optional), set(&[&["<:alice>", "<:carol>"], &["<:bob>", "<:carol>"], &["<:carol>", "<:alice>"]]));
}
