//! A file built with `--default-graph union` (FORMAT.md §2, `flags` bit 0):
//! a query that names no graph sees every graph's triples, each once.

use super::*;
use crate::format::header::FLAG_UNION_DEFAULT_GRAPH;

const GRAPHS: &str = r#"
@prefix : <http://example.org/> .
:alice :likes :tea .
:g1 { :alice :likes :pizza . :bob :likes :pasta . :alice :likes :tea . }
:g2 { :carol :likes :pizza . :alice :likes :pizza . }
"#;

fn union_store() -> Store<Vec<u8>> {
    // Two quads per block: copies of a triple in several graphs cross block boundaries.
    Store::open(fixture::from_trig_with_flags(GRAPHS, 2, FLAG_UNION_DEFAULT_GRAPH), 1 << 20).unwrap()
}

/// Rows as a set, the same with and without step hooks.
fn union_rows(store: &Store<Vec<u8>>, query: &str, options: &QueryOptions) -> BTreeSet<Vec<String>> {
    let plain: BTreeSet<_> = rows_with(store, query, options).into_iter().collect();
    let hooked: BTreeSet<_> = rows_with(store, query, &QueryOptions { budget: roomy(), ..options.clone() }).into_iter().collect();
    assert_eq!(plain, hooked, "{query}");
    plain
}

fn likes(pairs: &[(&str, &str)]) -> BTreeSet<Vec<String>> {
    pairs.iter().map(|(s, o)| vec![format!("<:{s}>"), format!("<:{o}>")]).collect()
}

#[test]
fn the_flag_is_read_from_the_header() {
    assert!(union_store().header().union_default_graph());
    assert!(!Store::open(fixture::from_trig(GRAPHS), 1 << 20).unwrap().header().union_default_graph());
}

#[test]
fn without_the_flag_the_default_graph_is_the_stored_one() {
    let store = Store::open(fixture::from_trig_with_flags(GRAPHS, 2, 0), 1 << 20).unwrap();
    assert_eq!(union_rows(&store, "SELECT ?s ?o WHERE { ?s :likes ?o }", &QueryOptions::default()), likes(&[("alice", "tea")]));
}

#[test]
fn a_query_without_from_sees_every_graph_each_triple_once() {
    let store = union_store();
    let all = likes(&[("alice", "tea"), ("alice", "pizza"), ("bob", "pasta"), ("carol", "pizza")]);
    assert_eq!(union_rows(&store, "SELECT ?s ?o WHERE { ?s :likes ?o }", &QueryOptions::default()), all);
    // Each triple once, whatever the pattern's index: (alice likes pizza) is in g1 and g2,
    // (alice likes tea) in the default graph and g1.
    for query in ["SELECT (COUNT(*) AS ?n) WHERE { ?s :likes ?o }", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "SELECT (COUNT(*) AS ?n) WHERE { :alice ?p ?o }", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p :pizza }"] {
        let expected = if query.contains(":alice") { 2 } else if query.contains(":pizza") { 2 } else { 4 };
        assert_eq!(union_rows(&store, query, &QueryOptions::default()), BTreeSet::from([vec![format!("\"{expected}\"^^<http://www.w3.org/2001/XMLSchema#integer>")]]), "{query}");
    }
    assert_eq!(union_rows(&store, "SELECT ?s WHERE { ?s :likes :pizza . ?s :likes :tea }", &QueryOptions::default()), BTreeSet::from([vec!["<:alice>".to_string()]]));
}

#[test]
fn graph_patterns_still_see_each_named_graph() {
    let rows = union_rows(&union_store(), "SELECT ?g ?s WHERE { GRAPH ?g { ?s :likes :pizza } }", &QueryOptions::default());
    assert_eq!(rows, BTreeSet::from([vec!["<:g1>".into(), "<:alice>".into()], vec!["<:g2>".into(), "<:carol>".into()], vec!["<:g2>".into(), "<:alice>".into()]]));
}

#[test]
fn an_explicit_dataset_wins() {
    let store = union_store();
    let query = "SELECT ?s ?o WHERE { ?s :likes ?o }";
    assert_eq!(union_rows(&store, "SELECT ?s ?o FROM :g2 WHERE { ?s :likes ?o }", &QueryOptions::default()), likes(&[("carol", "pizza"), ("alice", "pizza")]));
    // FROM NAMED alone: the default graph is empty (SPARQL 1.1 §13.2).
    assert_eq!(union_rows(&store, "SELECT ?s ?o FROM NAMED :g1 WHERE { ?s :likes ?o }", &QueryOptions::default()), BTreeSet::new());
    // The protocol's default-graph-uri.
    let options = QueryOptions { default_graphs: vec![NamedNode::new_unchecked("http://example.org/g1")], ..QueryOptions::default() };
    assert_eq!(union_rows(&store, query, &options), likes(&[("alice", "pizza"), ("bob", "pasta"), ("alice", "tea")]));
}
