//! `FILTER(STR(?v) = "c")` over `?s <p> ?v` reads only the stored terms
//! whose lexical form or IRI is `c`, one lookup per datatype and language
//! tag the card lists (`value_ranges.rs`, `dataset.rs`; issue 14, qudt 07):
//! the answers are spareval's over an in-memory `oxrdf::Dataset`, in one run
//! and in rounds, and the pattern reads a handful of quads, not every object
//! of `p`; with more tags than lookups allowed it reads them all, as before.

use super::fixture;
use crate::read::{BlockCache, RoundOptions, run_in_rounds};
use crate::sparql::{Answer, Budget, QueryError, QueryOptions, query};
use crate::{RangeSource, Store};
use oxrdf::Dataset;
use spareval::{QueryEvaluator, QueryResults};
use std::collections::BTreeSet;

const PREFIX: &str = "PREFIX : <http://example.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> ";

/// Terms of one lexical form in every kind a term can be, and look-alikes.
const FORMS: &str = r#"
PREFIX : <http://example.org/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
:a :code "km/h", "km/h"@en, "km/h"@en-us, "km/h"^^:UCUM, "km/h"^^xsd:integer, "KM/H", "km/h "@de, "km/h"@ar--rtl, "x" ; :n 1 .
:b :code "3", 3, "03"^^xsd:integer, "3.0"^^xsd:decimal, "3"^^xsd:decimal, "3"^^xsd:double, "3"@fr, "3"^^:UCUM ; :n 2 .
:c :code "http://example.org/x", :x, "http://example.org/x"^^xsd:anyURI, :km ; :n 3 .
:d :label "km/h" ; :n 4 .
:g1 { :e :code "km/h"^^:UCUM , "3" . }
:g2 { :f :code "km/h"@en . :f :n 5 . }
"#;

const QUERIES: &[&str] = &[
    "SELECT ?s ?c WHERE { ?s :code ?c FILTER(STR(?c) = \"km/h\") }",
    "SELECT ?s ?c WHERE { ?s :code ?c FILTER(\"3\" = STR(?c)) }",
    "SELECT ?s ?c WHERE { ?s :code ?c FILTER(STR(?c) = \"03\") }",
    "SELECT ?s ?c WHERE { ?s :code ?c FILTER(STR(?c) = \"http://example.org/x\") }",
    "SELECT ?s ?c WHERE { ?s :code ?c FILTER(STR(?c) = \"nothing\") }",
    "SELECT ?s ?c WHERE { ?s :code ?c FILTER(STR(?c) = \"km/h\"^^xsd:string && LANG(?c) = \"\") }",
    "SELECT ?s ?c ?n WHERE { ?s :code ?c ; :n ?n FILTER(STR(?c) = \"3\" && ?n > 1) }",
    "SELECT ?g ?s WHERE { GRAPH ?g { ?s :code ?c FILTER(STR(?c) = \"km/h\") } }",
    "ASK { GRAPH ?g { ?s :code ?c FILTER(STR(?c) = \"km/h\") } }",
    "ASK { ?s :code ?c FILTER(STR(?c) = \"km/s\") }",
    "SELECT (COUNT(*) AS ?k) WHERE { ?s :code ?c FILTER(STR(?c) = \"km/h\") }",
    "SELECT ?s WHERE { ?s :n ?n FILTER EXISTS { ?s :code ?c FILTER(STR(?c) = \"3\") } }",
    // Not recognised (two patterns with the predicate): every object read, same answer.
    "SELECT ?s ?t WHERE { ?s :code ?c . ?t :code ?d FILTER(STR(?c) = \"3\" && STR(?d) = \"km/h\" && LANG(?d) = \"fr\") }",
];

fn lines(answer: QueryResults<'_>) -> BTreeSet<String> {
    match answer {
        QueryResults::Solutions(solutions) => solutions.map(|s| s.unwrap().iter().map(|(v, t)| format!("{v}={t}")).collect::<Vec<_>>().join(" ")).collect(),
        QueryResults::Boolean(value) => [value.to_string()].into(),
        QueryResults::Graph(_) => panic!("not a SELECT or ASK"),
    }
}

fn rete_lines<S: RangeSource>(store: &Store<S>, text: &str, budget: Budget) -> Result<BTreeSet<String>, QueryError> {
    Ok(match query(store, &format!("{PREFIX}{text}"), None, &QueryOptions { budget, ..QueryOptions::default() })? {
        Answer::Solutions(solutions) => solutions.map(|s| s.map(|s| s.iter().map(|(v, t)| format!("{v}={t}")).collect::<Vec<_>>().join(" "))).collect::<Result<_, _>>()?,
        Answer::Boolean(value) => [value.to_string()].into(),
        Answer::Graph(_) => panic!("not a SELECT or ASK"),
    })
}

fn spareval_lines(trig: &str, text: &str) -> BTreeSet<String> {
    let memory: Dataset = fixture::quads_of(trig).into_iter().collect();
    let parsed = spargebra::SparqlParser::new().parse_query(&format!("{PREFIX}{text}")).unwrap();
    lines(QueryEvaluator::new().prepare(&parsed).execute(&memory).unwrap())
}

/// A budget that lets a pattern read at most `quads` quads.
fn scanning(quads: u64) -> Budget {
    Budget { max_quads_scanned: quads, max_rows_produced: 1 << 40, max_steps: 1 << 40, max_computed_bytes: 1 << 40, should_stop: None }
}

#[test]
fn lexical_filters_answer_as_an_in_memory_evaluation() {
    let file = fixture::build(&fixture::quads_of(FORMS), 3);
    let store = Store::open(file.clone(), 1 << 20).unwrap();
    let kinds = store.literal_kinds().unwrap().expect("the fixture's card lists them");
    assert!(kinds.languages.contains(&"ar--rtl".to_owned()), "{kinds:?}");
    let unfetched = Store::from_parts(crate::read::Unfetched, store.header().clone(), store.index().clone(), BlockCache::new(1 << 20));
    let mut nonempty = 0;
    for text in QUERIES {
        let expected = spareval_lines(FORMS, text);
        assert_eq!(rete_lines(&store, text, Budget::default()).unwrap(), expected, "{text}");
        let (answer, _) = run_in_rounds(&unfetched, &RoundOptions::default(), |ranges| file.as_slice().read_ranges(ranges), |s| rete_lines(s, text, Budget::default())).unwrap();
        assert_eq!(answer.unwrap(), expected, "{text} in rounds");
        nonempty += usize::from(!expected.is_empty() && expected != BTreeSet::from(["false".to_owned()]));
    }
    assert!(nonempty >= QUERIES.len() - 3, "most queries find something: {nonempty} of {}", QUERIES.len());
    let km = spareval_lines(FORMS, QUERIES[0]);
    assert_eq!(km.len(), 6, "the simple literal, three tags, two datatypes (one ill-typed): {km:?}");
    // The union default graph (FORMAT.md §2) reads every graph's terms.
    let union = fixture::from_trig_with_flags(FORMS, 3, 1);
    let store = Store::open(union, 1 << 20).unwrap();
    let found = rete_lines(&store, "SELECT ?s WHERE { ?s :code ?c FILTER(STR(?c) = \"km/h\") }", Budget::default()).unwrap();
    assert_eq!(found, ["?s=<http://example.org/a>", "?s=<http://example.org/e>", "?s=<http://example.org/f>"].map(String::from).into());
}

#[test]
fn a_lexical_filter_reads_its_terms_not_every_object() {
    // 3,000 codes of one datatype, and 40 in as many languages.
    let mut trig = String::from("PREFIX : <http://example.org/>\n");
    for i in 0..3000 {
        trig.push_str(&format!(":u{i} :code \"c{i}\"^^:UCUM .\n"));
    }
    for i in 0..40u8 {
        trig.push_str(&format!(":v{i} :code \"c{i}\"@{}{} .\n", char::from(b'a' + i / 26), char::from(b'a' + i % 26)));
    }
    let store = Store::open(fixture::build_with(&fixture::quads_of(&trig), 64, 512), 1 << 20).unwrap();
    let query = "SELECT ?u WHERE { ?u :code ?c FILTER(STR(?c) = \"c17\") }";
    assert_eq!(rete_lines(&store, query, scanning(8)).unwrap(), spareval_lines(&trig, query));
    assert_eq!(rete_lines(&store, query, scanning(8)).unwrap().len(), 2);
    // Written so that it is not recognised, the same FILTER reads every code.
    let unrecognised = "SELECT ?u WHERE { ?u :code ?c FILTER(STR(?c) = \"c17\" || false) }";
    assert!(matches!(rete_lines(&store, unrecognised, scanning(8)), Err(QueryError::Budget { .. })));
    assert_eq!(rete_lines(&store, unrecognised, Budget::default()).unwrap(), spareval_lines(&trig, query));
}

#[test]
fn more_tags_than_lookups_read_every_object() {
    // 70 language tags: past the lookups a filter may take, the pattern reads every object.
    let mut trig = String::from("PREFIX : <http://example.org/>\n");
    for i in 0..70u8 {
        trig.push_str(&format!(":v{i} :code \"c{}\"@{}{} .\n", i % 3, char::from(b'a' + i / 26), char::from(b'a' + i % 26)));
    }
    let store = Store::open(fixture::build(&fixture::quads_of(&trig), 8), 1 << 20).unwrap();
    let query = "SELECT ?v ?c WHERE { ?v :code ?c FILTER(STR(?c) = \"c1\") }";
    let expected = spareval_lines(&trig, query);
    assert_eq!(expected.len(), 23);
    assert_eq!(rete_lines(&store, query, Budget::default()).unwrap(), expected);
    assert!(matches!(rete_lines(&store, query, scanning(30)), Err(QueryError::Budget { .. })), "every object read");
}
