//! SPARQL JSON rows written from the store's ids (`Solutions::next_json`)
//! are the bytes sparesults writes for the solutions' terms, over every kind
//! of stored term (value-ordered numbers and dates included), computed and
//! unbound ones, with and without the step hooks, and the meter counts the
//! same work either way.

use super::*;
use oxrdf::{BaseDirection, BlankNode, GraphName, Literal, NamedNode, Quad};
use oxrdf::vocab::xsd;
use sparesults::{QueryResultsFormat, QueryResultsSerializer};

/// Objects of every kind, with strings that need every JSON escape.
fn quads() -> Vec<Quad> {
    let iri = |s: &str| NamedNode::new_unchecked(format!("http://example.org/{s}"));
    let strings = ["", "plain", "quote \" and \\ backslash", "lines\nand\ttabs\r\u{8}\u{c}", "\u{1}\u{1f}\u{7f}", "é ü 日本 🦀", "a long enough string to cross the eight-byte words\"at an odd place"];
    let mut objects: Vec<oxrdf::Term> = vec![iri("o").into(), NamedNode::new_unchecked("http://ex.org/a\"b\\c").into(), BlankNode::new_unchecked("b0").into()];
    for s in strings {
        objects.push(Literal::new_simple_literal(s).into());
        objects.push(Literal::new_language_tagged_literal_unchecked(s, "en-gb").into());
        objects.push(Literal::new_directional_language_tagged_literal_unchecked(s, "ar", BaseDirection::Rtl).into());
        objects.push(Literal::new_directional_language_tagged_literal_unchecked(s, "en", BaseDirection::Ltr).into());
        objects.push(Literal::new_typed_literal(s, NamedNode::new_unchecked("http://ex.org/type\"\n")).into());
    }
    for (value, datatype) in [("030", xsd::INTEGER), ("-1.50", xsd::DECIMAL), ("1e3", xsd::DOUBLE), ("1850-01-01", xsd::DATE), ("2020-10-10T10:10:10Z", xsd::DATE_TIME), ("true", xsd::BOOLEAN)] {
        objects.push(Literal::new_typed_literal(value, datatype).into());
    }
    let inner = oxrdf::Triple::new(iri("s"), iri("p"), Literal::new_language_tagged_literal_unchecked("x", "fr"));
    objects.push(oxrdf::Triple::new(BlankNode::new_unchecked("t"), iri("q"), inner).into());
    objects.into_iter().enumerate().map(|(i, object)| Quad::new(iri(&format!("s{}", i % 5)), iri(&format!("p{}", i % 3)), object, GraphName::DefaultGraph)).collect()
}

/// The answer written by `write_answer` (rows from ids) and by sparesults
/// from the solutions' terms, and the meter's usage after each.
fn both_ways(store: &Store<Vec<u8>>, query: &str, options: &QueryOptions) -> ((Vec<u8>, Usage), (Vec<u8>, Usage)) {
    let Answer::Solutions(mut solutions) = run(store, query, options).unwrap() else { panic!("not a SELECT: {query}") };
    let mut writer = crate::results::SolutionsWriter::start(Vec::new(), ResultFormat::Json, solutions.variables().to_vec()).unwrap();
    while let Some(written) = writer.serialize_next(&mut solutions) {
        written.unwrap();
    }
    let ours = (writer.finish().unwrap(), solutions.usage());
    let Answer::Solutions(solutions) = run(store, query, options).unwrap() else { panic!() };
    let mut writer = QueryResultsSerializer::from_format(QueryResultsFormat::Json).serialize_solutions_to_writer(Vec::new(), solutions.variables().to_vec()).unwrap();
    let meter = Arc::clone(&solutions.meter);
    for solution in solutions {
        writer.serialize(&solution.unwrap()).unwrap();
    }
    (ours, (writer.finish().unwrap(), meter.usage()))
}

#[test]
fn rows_from_ids_are_the_bytes_of_the_terms() {
    let quads = quads();
    // Tiny dictionary blocks: consecutive rows cross blocks.
    let store = Store::open(fixture::build(&quads, 4), 1 << 20).unwrap();
    assert_eq!(store.header().literal_order(), crate::format::term::LiteralOrder::Value);
    let queries = [
        "SELECT * WHERE { ?s ?p ?o }",
        "SELECT ?o ?s WHERE { ?s ?p ?o } ORDER BY DESC(?o)",
        "SELECT ?s ?x ?o WHERE { ?s ?p ?o OPTIONAL { ?s :p9 ?x } }",
        "SELECT ?s (CONCAT(STR(?o), \"!\") AS ?c) (STRLANG(\"x\", \"de\") AS ?l) (1 + 2 AS ?n) WHERE { ?s :p0 ?o FILTER(isLiteral(?o)) }",
        "SELECT ?o (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?o",
        "SELECT ?v WHERE { VALUES ?v { :absent \"not stored\" \"é\"@fr 42 } }",
        "SELECT * WHERE { ?s :nothing ?o }",
        "SELECT ?a ?a2 WHERE { ?a :p1 ?o BIND(?a AS ?a2) }",
    ];
    let mut rows = 0;
    for query in queries {
        for options in [QueryOptions::default(), QueryOptions { budget: roomy(), ..QueryOptions::default() }] {
            let ((ours, our_usage), (theirs, their_usage)) = both_ways(&store, query, &options);
            assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(theirs.clone()).unwrap(), "{query}");
            assert_eq!(our_usage, their_usage, "{query}");
            rows += serde_json::from_slice::<serde_json::Value>(&theirs).unwrap()["results"]["bindings"].as_array().unwrap().len();
        }
    }
    assert!(rows > 2 * quads.len(), "{rows} rows");
}
