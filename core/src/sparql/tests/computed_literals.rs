//! A computed literal of a datatype no literal of the file has cannot be a
//! stored term: with the card in memory, it is not looked up in the
//! dictionary (`dataset.rs`, `Store::literal_kinds_in_memory`; issue 14,
//! schema-org 05's `xsd:integer(…)` per row). The card is in memory when the
//! first read held it (`Store::open` keeps it, a host keeps the whole first
//! read); knowing the datatypes never costs a read of its own.

use super::fixture;
use crate::read::{BlockCache, ByteRange};
use crate::sparql::{Answer, QueryOptions, query};
use crate::{RangeSource, ReadError, Store};
use oxrdf::Dataset;
use spareval::{QueryEvaluator, QueryResults};
use std::cell::Cell;
use std::collections::BTreeSet;

const DATA: &str = r#"
PREFIX : <http://example.org/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
:a :n 7 ; :s "7" ; :t "7"@en .
:b :d "2020-01-01"^^xsd:date .
"#;

const PREFIX: &str = "PREFIX : <http://example.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> ";

/// Reads of an in-memory file, counted.
struct Counting {
    file: Vec<u8>,
    reads: Cell<usize>,
}

impl RangeSource for Counting {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        self.reads.set(self.reads.get() + ranges.len());
        self.file.read_ranges(ranges)
    }
}

fn rete_lines<S: RangeSource>(store: &Store<S>, text: &str) -> BTreeSet<String> {
    let Answer::Solutions(solutions) = query(store, &format!("{PREFIX}{text}"), None, &QueryOptions::default()).unwrap() else { panic!("not a SELECT") };
    solutions.map(|s| s.unwrap().iter().map(|(v, t)| format!("{v}={t}")).collect::<Vec<_>>().join(" ")).collect()
}

fn spareval_lines(text: &str) -> BTreeSet<String> {
    let memory: Dataset = fixture::quads_of(DATA).into_iter().collect();
    let parsed = spargebra::SparqlParser::new().parse_query(&format!("{PREFIX}{text}")).unwrap();
    let QueryResults::Solutions(solutions) = QueryEvaluator::new().prepare(&parsed).execute(&memory).unwrap() else { panic!("not a SELECT") };
    solutions.map(|s| s.unwrap().iter().map(|(v, t)| format!("{v}={t}")).collect::<Vec<_>>().join(" ")).collect()
}

#[test]
fn a_card_in_the_first_read_is_known_without_a_read() {
    let source = Counting { file: fixture::from_trig(DATA), reads: Cell::new(0) };
    let store = Store::open(&source, 1 << 20).unwrap();
    assert_eq!(source.reads.get(), 1, "the first read holds INDEX");
    let kinds = store.literal_kinds_in_memory().expect("the card lies in the first read");
    assert!(kinds.datatypes.iter().any(|d| d.ends_with("#date")), "{kinds:?}");
    assert_eq!(source.reads.get(), 1);
    // A store that holds no card does not read it for this.
    let bare = Store::from_parts(&source, store.header().clone(), store.index().clone(), BlockCache::new(1 << 20));
    assert!(bare.literal_kinds_in_memory().is_none());
    assert_eq!(source.reads.get(), 1);
}

#[test]
fn literal_kinds_pass_to_the_next_store_of_the_file() {
    let source = Counting { file: fixture::from_trig(DATA), reads: Cell::new(0) };
    let first = Store::open(&source, 1 << 20).unwrap();
    let fresh = || Store::from_parts(&source, first.header().clone(), first.index().clone(), BlockCache::new(1 << 20));
    assert_eq!(fresh().known_literal_kinds(), None, "a new store knows nothing until it reads the card");
    let kinds = first.literal_kinds().unwrap().expect("the card lists them");
    assert_eq!(first.known_literal_kinds(), Some(Some(kinds.clone())));
    // A host gives what the first store learnt to the next, which holds no card and reads nothing for it.
    let next = fresh();
    next.know_literal_kinds(Some(kinds.clone()));
    let reads = source.reads.get();
    assert_eq!(next.literal_kinds_in_memory(), Some(kinds.clone()));
    assert_eq!(next.literal_kinds().unwrap(), Some(kinds));
    assert_eq!(source.reads.get(), reads);
    // "The card does not list them all" passes on too.
    let unlisted = fresh();
    unlisted.know_literal_kinds(None);
    assert_eq!(unlisted.literal_kinds().unwrap(), None);
    assert_eq!(source.reads.get(), reads);
}

#[test]
fn computed_literals_of_absent_datatypes_are_not_looked_up() {
    // A datatype the file has: its dictionary block is read to find the term.
    let reads = |text: &str| {
        let source = Counting { file: fixture::from_trig(DATA), reads: Cell::new(0) };
        let store = Store::open(&source, 1 << 20).unwrap();
        let before = source.reads.get();
        let found = rete_lines(&store, text);
        (found, source.reads.get() - before)
    };
    let (found, present) = reads(r#"SELECT ?o WHERE { BIND(xsd:integer("7") AS ?o) }"#);
    assert_eq!(found, ["?o=\"7\"^^<http://www.w3.org/2001/XMLSchema#integer>".to_owned()].into());
    assert!(present > 0, "an integer is looked up");
    let (found, absent) = reads(r#"SELECT ?o WHERE { BIND(xsd:decimal("7") AS ?o) }"#);
    assert_eq!(found, ["?o=\"7\"^^<http://www.w3.org/2001/XMLSchema#decimal>".to_owned()].into());
    assert_eq!(absent, 0, "no decimal in the file: nothing read");
}

#[test]
fn computed_literals_join_as_an_in_memory_evaluation() {
    let store = Store::open(fixture::from_trig(DATA), 1 << 20).unwrap();
    for text in [
        r#"SELECT ?s ?p WHERE { BIND(xsd:integer("7") AS ?o) ?s ?p ?o }"#,
        r#"SELECT ?s ?p WHERE { BIND(xsd:decimal("7") AS ?o) ?s ?p ?o }"#,
        r#"SELECT ?s ?p WHERE { BIND(STR(7) AS ?o) ?s ?p ?o }"#,
        r#"SELECT ?s ?p WHERE { BIND(STRLANG("7", "en") AS ?o) ?s ?p ?o }"#,
        r#"SELECT ?s ?p WHERE { BIND(STRDT("2020-01-01", xsd:date) AS ?o) ?s ?p ?o }"#,
        r#"SELECT ?s ?p WHERE { BIND(STRDT("7", xsd:double) AS ?o) ?s ?p ?o }"#,
        r#"SELECT ?s ?i WHERE { ?s :s ?v BIND(xsd:integer(?v) AS ?i) ?s :n ?i }"#,
        r#"SELECT ?s ?i WHERE { ?s :s ?v BIND(xsd:boolean("true") AS ?i) OPTIONAL { ?s :n ?i } }"#,
    ] {
        let expected = spareval_lines(text);
        assert_eq!(rete_lines(&store, text), expected, "{text}");
    }
    assert!(!spareval_lines(r#"SELECT ?s WHERE { BIND(xsd:integer("7") AS ?o) ?s :n ?o }"#).is_empty());
}
