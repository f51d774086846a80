//! Range FILTERs on numbers and dates read only the object ids of their
//! range (`value_ranges.rs`, FORMAT.md §5.1.1): their answers are those of
//! an in-memory evaluation (spareval over `oxrdf::Dataset`) on every shape,
//! mixed types, ill-typed values, NaN and timezones included, and they read
//! fewer blocks than the same FILTER written so that it is not recognised.

use super::fixture;
use crate::read::{BlockCache, RoundOptions, run_in_rounds};
use crate::sparql::{Answer, QueryOptions, query};
use crate::{RangeSource, Store};
use oxrdf::Dataset;
use spareval::{QueryEvaluator, QueryResults};
use std::collections::BTreeSet;

const PREFIX: &str = "PREFIX : <http://example.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> ";

/// One predicate with values of every kind a range can meet.
const SHAPES: &str = r#"
PREFIX : <http://example.org/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
:a :v 5, "05"^^xsd:integer, 5.0, "5"^^xsd:float, 1e300, "-INF"^^xsd:double, "NaN"^^xsd:double, "abc"^^xsd:integer, "7"^^xsd:byte, "0.1"^^xsd:float, 0.1, "99999999999999999999"^^xsd:integer .
:b :v "five", "5"@en, :five, -3, 10, 9.99999, "10.000001"^^xsd:decimal .
:c :v "1850-01-01"^^xsd:date, "1850-01-01+13:00"^^xsd:date, "1849-12-31Z"^^xsd:date, "1869-12-31"^^xsd:date, "1870-01-01-14:00"^^xsd:date, "2000-13-01"^^xsd:date .
:d :v "1999-12-31T23:00:00"^^xsd:dateTime, "2000-01-01T00:00:00Z"^^xsd:dateTime, "2000-01-01T09:00:00+10:00"^^xsd:dateTime, "2000-01-01T12:00:00.5"^^xsd:dateTimeStamp, "24:00:00"^^xsd:time .
:a :w 1, 2, 3 .
:b :w 4 .
:g1 { :e :v 6 . }
"#;

const QUERIES: &[&str] = &[
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v >= 5 && ?v < 10) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v > 5) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(5 >= ?v) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v = 5) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v = 0.1) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v <= \"0.1\"^^xsd:float && ?v > 0) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v > 9.99999 && ?v <= 10.000001) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v < \"-1e308\"^^xsd:double) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v > 1e299 && ?v < \"INF\"^^xsd:double) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v >= \"1850-01-01\"^^xsd:date && ?v < \"1870-01-01\"^^xsd:date) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v >= \"1850-01-01Z\"^^xsd:date) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v < \"2000-01-01T00:00:00Z\"^^xsd:dateTime) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v >= \"2000-01-01T00:00:00\"^^xsd:dateTime && ?v <= \"2000-01-01T12:00:00.5Z\"^^xsd:dateTime) }",
    "SELECT ?s ?v ?w WHERE { ?s :v ?v ; :w ?w FILTER(?v > 4 && ?w > 1) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v > 4 && ?v < \"2000-01-01\"^^xsd:date) }",
    "SELECT ?s ?v WHERE { ?s :v ?v FILTER(?v > 4) FILTER(?v < 6) }",
    "SELECT ?s ?v WHERE { GRAPH ?g { ?s :v ?v } FILTER(?v > 4) }",
    "SELECT ?s ?v FROM :g1 WHERE { ?s :v ?v FILTER(?v > 4) }",
    "SELECT (COUNT(*) AS ?n) WHERE { ?s :v ?v FILTER(?v > 4 && ?v < 100) }",
    "SELECT ?s WHERE { ?s :w ?w FILTER EXISTS { ?s :v ?v FILTER(?v >= 10) } }",
    "SELECT ?s ?v WHERE { ?s :v ?v OPTIONAL { ?s :w ?w } FILTER(?v > 4) }",
    "ASK { ?s :v ?v FILTER(?v > 1e301) }",
];

fn lines(answer: QueryResults<'_>) -> BTreeSet<String> {
    match answer {
        QueryResults::Solutions(solutions) => solutions.map(|s| s.unwrap().iter().map(|(v, t)| format!("{v}={t}")).collect::<Vec<_>>().join(" ")).collect(),
        QueryResults::Boolean(value) => [value.to_string()].into(),
        QueryResults::Graph(_) => panic!("not a SELECT or ASK"),
    }
}

fn rete_lines<S: RangeSource>(store: &Store<S>, text: &str) -> Result<BTreeSet<String>, crate::sparql::QueryError> {
    Ok(match query(store, &format!("{PREFIX}{text}"), None, &QueryOptions::default())? {
        Answer::Solutions(solutions) => solutions.map(|s| s.map(|s| s.iter().map(|(v, t)| format!("{v}={t}")).collect::<Vec<_>>().join(" "))).collect::<Result<_, _>>()?,
        Answer::Boolean(value) => [value.to_string()].into(),
        Answer::Graph(_) => panic!("not a SELECT or ASK"),
    })
}

#[test]
fn range_filters_answer_as_an_in_memory_evaluation() {
    let quads = fixture::quads_of(SHAPES);
    let memory: Dataset = quads.iter().cloned().collect();
    // Tiny blocks: ranges cross dictionary and permutation blocks.
    let file = fixture::build(&quads, 3);
    let store = Store::open(file.clone(), 1 << 20).unwrap();
    assert_eq!(store.header().literal_order(), crate::format::term::LiteralOrder::Value);
    let unfetched = Store::from_parts(crate::read::Unfetched, store.header().clone(), store.index().clone(), BlockCache::new(1 << 20));
    let mut nonempty = 0;
    for text in QUERIES {
        let parsed = spargebra::SparqlParser::new().parse_query(&format!("{PREFIX}{text}")).unwrap();
        let expected = lines(QueryEvaluator::new().prepare(&parsed).execute(&memory).unwrap());
        assert_eq!(rete_lines(&store, text).unwrap(), expected, "{text}");
        // Every block fetched only when asked for: range ends in later rounds.
        let (answer, _) = run_in_rounds(&unfetched, &RoundOptions::default(), |ranges| file.as_slice().read_ranges(ranges), |s| rete_lines(s, text)).unwrap();
        assert_eq!(answer.unwrap(), expected, "{text} in rounds");
        nonempty += usize::from(!expected.is_empty() && expected != BTreeSet::from(["false".to_owned()]));
    }
    // Empty by design: a number and a date bound (no value is both), ASK above 1e301, one more.
    assert!(nonempty >= QUERIES.len() - 3, "most queries find something: {nonempty} of {}", QUERIES.len());
}

#[test]
fn a_range_filter_reads_its_range_not_every_value() {
    // 20,000 subjects with a number and a date each, in blocks of 256 quads.
    let quads = fixture::numbers_and_dates(20_000);
    let file = fixture::build_with(&quads, 256, 4096);
    let full = Store::open(file.clone(), 64 << 20).unwrap();
    let bytes = |text: &str| {
        let (answer, bytes) = fixture::read_cold(&file, &full, |s| rete_lines(s, text));
        (answer.unwrap(), bytes)
    };
    for (range, unrecognised) in [
        ("?v >= 500000 && ?v < 510000", "!(?v < 500000) && !(?v >= 510000)"),
        ("?v >= \"1850-01-01\"^^xsd:date && ?v < \"1853-01-01\"^^xsd:date", "!(?v < \"1850-01-01\"^^xsd:date) && !(?v >= \"1853-01-01\"^^xsd:date)"),
    ] {
        let predicate = if range.contains("date") { ":d" } else { ":n" };
        let (found, narrowed) = bytes(&format!("SELECT ?s ?v WHERE {{ ?s {predicate} ?v FILTER({range}) }}"));
        let (expected, whole) = bytes(&format!("SELECT ?s ?v WHERE {{ ?s {predicate} ?v FILTER({unrecognised}) }}"));
        assert_eq!(found, expected, "{range}");
        assert!(found.len() > 50, "{range}: {} rows", found.len());
        assert!(narrowed * 4 < whole, "{range}: {narrowed} bytes with the range, {whole} without");
    }
}
