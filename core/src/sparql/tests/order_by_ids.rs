//! ORDER BY of stored IRIs, blank nodes and simple literals by id
//! (vendor/README.md change 17): the order spareval gives over an in-memory
//! `oxrdf::Dataset`, which sorts the values, ties included; keys of other
//! kinds, of several kinds and expressions sorted by values as before.

use super::*;
use oxrdf::Quad;

/// IRIs whose byte order is not their order of appearance (`é` after `z`,
/// `B` before `a`), blank nodes, simple literals (one subject without),
/// tagged and typed literals, and two names of one subject (ties under
/// `ORDER BY ?s`, broken by `?n`: the engines meet them in other orders).
/// No xsd:integer literal.
const DATA: &str = r#"
PREFIX : <http://example.org/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
:z a :T ; :label "zed" ; :o :o1 .
:a a :T ; :label "ant" ; :name "n2" , "n1" ; :o "o" .
:é a :T ; :label "écu" ; :o "o"@en .
:B a :T ; :label "Bee" ; :o _:x .
:m a :T ; :o "1.5"^^xsd:decimal .
_:y a :T ; :label "Ypsilon" .
_:x a :T ; :label "x" .
"#;

const ORDERED: &[&str] = &[
    "SELECT ?s WHERE { ?s a :T FILTER(isIRI(?s)) } ORDER BY ?s",
    "SELECT ?s WHERE { ?s a :T FILTER(isIRI(?s)) } ORDER BY DESC(?s)",
    "SELECT ?s WHERE { ?s a :T FILTER(isBlank(?s)) } ORDER BY DESC(?s)",
    "SELECT ?s ?l WHERE { ?s a :T FILTER(isIRI(?s)) OPTIONAL { ?s :label ?l } } ORDER BY ?l",
    "SELECT ?s ?l WHERE { ?s a :T FILTER(isIRI(?s)) OPTIONAL { ?s :label ?l } } ORDER BY DESC(?l) ?s",
    "SELECT ?s ?n WHERE { ?s a :T FILTER(isIRI(?s)) OPTIONAL { ?s :name ?n } } ORDER BY ?s ?n",
    "SELECT ?s ?n WHERE { ?s a :T FILTER(isIRI(?s)) OPTIONAL { ?s :name ?n } } ORDER BY DESC(?s) ?n",
    // Several kinds: IRIs and blank nodes, then every kind of object.
    "SELECT ?s WHERE { ?s a :T } ORDER BY ?s",
    "SELECT ?s ?o WHERE { ?s :o ?o } ORDER BY ?o",
    "SELECT ?s ?o WHERE { ?s :o ?o } ORDER BY DESC(?o)",
    // An expression key beside a ranked one; one solution; none.
    "SELECT ?s WHERE { ?s a :T FILTER(isIRI(?s)) } ORDER BY STRLEN(STR(?s)) DESC(?s)",
    "SELECT ?s WHERE { ?s :label \"zed\" } ORDER BY ?s",
    "SELECT ?s WHERE { ?s :label \"none\" } ORDER BY ?s",
    // Computed keys: an integer (the file has none), a string joined to a stored one.
    "SELECT ?s ?i WHERE { ?s :label ?l BIND(STRLEN(?l) AS ?i) } ORDER BY ?i ?s",
    "SELECT ?s WHERE { ?s :label ?l BIND(CONCAT(SUBSTR(?l, 2, 0), \"n1\") AS ?k) ?s :name ?k } ORDER BY ?s",
];

fn spareval_ordered(quads: &[Quad], query: &str) -> Vec<Vec<String>> {
    let dataset: oxrdf::Dataset = quads.iter().cloned().collect();
    let query = SparqlParser::new().parse_query(&format!("{PREFIX}{query}")).unwrap();
    let spareval::QueryResults::Solutions(solutions) = spareval::QueryEvaluator::new().prepare(&query).execute(&dataset).unwrap() else { panic!("not a SELECT") };
    let variables = solutions.variables().to_vec();
    solutions.map(|s| row(&variables, &s.unwrap())).collect()
}

/// rete's rows in output order, the same with and without step hooks, with a
/// cache smaller than a block, and over a file of one term per dictionary
/// block (the kinds' bounds in other blocks than the terms). One parse of
/// the data for both engines: blank nodes keep their labels.
fn rete_ordered(quads: &[Quad], query: &str) -> Vec<Vec<String>> {
    let mut answers = Vec::new();
    for (file, cache_bytes, budget) in [
        (fixture::build(quads, 64), 1 << 20, Budget::default()),
        (fixture::build(quads, 64), 1 << 20, roomy()),
        (fixture::build(quads, 64), 64, Budget::default()),
        (fixture::build_with(quads, 2, 1), 1 << 20, Budget::default()),
    ] {
        let store = Store::open(file, cache_bytes).unwrap();
        answers.push(rows_with(&store, query, &QueryOptions { budget, ..QueryOptions::default() }));
    }
    assert!(answers.windows(2).all(|pair| pair[0] == pair[1]), "{query}: {answers:?}");
    answers.pop().unwrap()
}

#[test]
fn order_by_stored_terms_is_spareval_s_order() {
    let quads = fixture::quads_of(DATA);
    let mut wrong = Vec::new();
    for query in ORDERED {
        let (expected, found) = (spareval_ordered(&quads, query), rete_ordered(&quads, query));
        if found != expected {
            wrong.push(format!("{query}\n  rete:     {found:?}\n  spareval: {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let iris = rete_ordered(&quads, ORDERED[0]).concat();
    assert_eq!(iris, ["<:B>", "<:a>", "<:m>", "<:z>", "<:é>"], "by bytes, as SPARQL's ORDER BY of IRIs");
    let joined = rete_ordered(&quads, ORDERED[ORDERED.len() - 1]);
    assert_eq!(joined, [["<:a>"]], "a computed string joins the stored one");
}
