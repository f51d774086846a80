//! What SPARQL defines where spareval alone answers otherwise: GRAPH ?g
//! scoping (`graph_scope.rs`) and unknown extension functions
//! (`extensions.rs`). Each case is the shape of a W3C test rete used to fail.

use super::*;

#[test]
fn graph_variable_is_not_bound_inside_its_graph() {
    // sparql10/graph-variable-scope: inside GRAPH ?g, ?g is another variable.
    assert_eq!(rows("SELECT * WHERE { GRAPH ?g { FILTER(BOUND(?g)) } }"), BTreeSet::new());
    // An inner ?g must agree with the graph's name: :pizza is no graph name.
    assert_eq!(rows("SELECT ?g ?s WHERE { GRAPH ?g { ?s :likes ?g } }"), BTreeSet::new());
    // sparql10/graph-optional: an OPTIONAL binding ?g to another term drops the row.
    assert_eq!(rows("SELECT ?g ?s WHERE { GRAPH ?g { ?s :likes :pizza OPTIONAL { ?s :likes ?g } } }"), BTreeSet::new());
}

#[test]
fn values_and_empty_groups_inside_graph_bind_the_graph() {
    // sparql11/bindings/graph: VALUES inside GRAPH ?g, an UNDEF ?g row in every graph.
    assert_eq!(
        rows("SELECT ?g ?t WHERE { GRAPH ?g { VALUES (?g ?t) { (UNDEF \"foo\") (:g1 \"bar\") } } }"),
        set(&[&["<:g1>", "\"foo\""], &["<:g2>", "\"foo\""], &["<:g1>", "\"bar\""]])
    );
    assert_eq!(rows("SELECT ?g ?x WHERE { GRAPH ?g { BIND(1 AS ?x) } }"), set(&[&["<:g1>", "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>"], &["<:g2>", "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>"]]));
}

#[test]
fn subselect_inside_graph_is_evaluated_per_graph() {
    // sparql11/agg-empty-group-count-graph: one count per graph, 0 included.
    assert_eq!(
        rows("SELECT ?g ?c WHERE { GRAPH ?g { SELECT (COUNT(*) AS ?c) WHERE { ?s :likes :pasta } } }"),
        set(&[&["<:g1>", "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>"], &["<:g2>", "\"0\"^^<http://www.w3.org/2001/XMLSchema#integer>"]])
    );
}

#[test]
fn graph_variable_does_not_join_the_sides_of_minus() {
    // sparql11/negation/graph-minus: the sides share no variable, nothing is removed.
    assert_eq!(rows("SELECT ?s WHERE { GRAPH ?g { ?s :likes :pasta MINUS { ?x :likes :pizza } } }"), set(&[&["<:bob>"]]));
    // They share ?s: alice likes pizza in g1 and is removed there only.
    assert_eq!(rows("SELECT ?g ?s WHERE { GRAPH ?g { ?s :likes ?o MINUS { ?s :likes :pizza } } }"), set(&[&["<:g1>", "<:bob>"]]));
}

#[test]
fn unknown_function_is_an_expression_error_with_one_warning() {
    let query = "SELECT ?s ?x WHERE { ?s :name ?n BIND(<http://example.org/f>(?n) AS ?x) } ORDER BY ?s";
    assert_eq!(ordered(query).len(), 4, "BIND leaves ?x unbound, the rows stay");
    assert!(ordered(query).iter().all(|row| row[1].is_empty()));
    assert_eq!(rows("SELECT ?s WHERE { ?s :name ?n FILTER(<http://example.org/f>(?n)) }"), BTreeSet::new());
    let parsed = parse_query(&format!("{PREFIX}SELECT * {{ ?s ?p ?o FILTER(<http://example.org/f>(?o) || <http://example.org/g>(?o) || xsd:integer(?o) = 1) }}"), None).unwrap();
    let warnings = warnings(&parsed);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("unknown functions <http://example.org/f>, <http://example.org/g>: every call is an expression error"), "{warnings:?}");
    assert!(super::warnings(&parse_query("SELECT * { ?s ?p ?o FILTER(<http://www.w3.org/2001/XMLSchema#integer>(?o) = 1) }", None).unwrap()).is_empty(), "the XSD casts are known");
}
