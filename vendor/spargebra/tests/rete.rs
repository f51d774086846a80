//! Tests of rete's changes to spargebra (vendor/README.md lists them); each fails upstream.

use spargebra::SparqlParser;

fn parses(query: &str) -> bool {
    SparqlParser::new().parse_query(query).is_ok()
}

#[test]
fn nested_aggregates_are_refused() {
    assert!(!parses("SELECT (COUNT(COUNT(*)) AS ?c) WHERE {}"));
    assert!(!parses("SELECT (SUM(MAX(?x)) AS ?c) WHERE { ?s ?p ?x }"));
    assert!(parses("SELECT (SUM(?x) + MAX(?x) AS ?c) WHERE { ?s ?p ?x }"));
    assert!(parses("SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?x } HAVING (SUM(?x) > 1)"));
}

#[test]
fn a_select_expression_may_use_an_earlier_one() {
    assert!(parses("SELECT (COUNT(?v) AS ?count) (?count + 1 AS ?countPlusOne) WHERE { VALUES ?v { 0 1 } }"));
    assert!(!parses("SELECT (COUNT(?v) AS ?count) (?other + 1 AS ?x) WHERE { VALUES ?v { 0 1 } }"));
    assert!(!parses("SELECT (1 AS ?a) (2 AS ?a) WHERE {}"));
}

#[cfg(feature = "sparql-12")]
#[test]
fn an_expression_triple_term_has_an_iri_or_variable_subject() {
    assert!(parses("SELECT * { BIND(<<( <http://e/s> <http://e/p> <http://e/o> )>> AS ?t) }"));
    assert!(parses("SELECT * { ?s ?p ?o BIND(<<( ?s ?p ?o )>> AS ?t) }"));
    assert!(!parses("SELECT * { BIND(<<( <<( <http://e/s> <http://e/p> <http://e/o> )>> <http://e/q> <http://e/z> )>> AS ?t) }"));
    assert!(!parses(r#"SELECT * { BIND(<<( "literal" <http://e/q> <http://e/z> )>> AS ?t) }"#));
    // TRIPLE() takes any expression; a wrong subject is an error when evaluated, not a syntax error.
    assert!(parses(r#"SELECT * { BIND(TRIPLE("literal", <http://e/q>, <http://e/z>) AS ?t) }"#));
}
