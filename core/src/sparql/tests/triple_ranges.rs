//! Patterns with free parts inside a triple term (`?r :q <<( :s :p ?o )>>`)
//! read the id range of the triple terms starting with the parts given
//! (dataset.rs, `internal_triple_terms`): their answers are those of an
//! in-memory evaluation (spareval over `oxrdf::Dataset`, which takes every
//! candidate apart) on every shape, and they read only that range's blocks.

use super::fixture;
use crate::read::{BlockCache, RoundOptions, RoundStats, open_in_rounds, run_in_rounds};
use crate::sparql::{Answer, QueryOptions, query};
use crate::{ByteRange, RangeSource, ReadError, Store};
use oxrdf::{Dataset, GraphName, Literal, NamedNode, Quad, Triple};
use spareval::{QueryEvaluator, QueryResults};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::OnceLock;

const PREFIX: &str = "PREFIX : <http://example.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> ";

/// Triple terms in the default graph and in named graphs, nested ones, parts
/// that are no term of the dictionary (`:inner`), numbers in a
/// non-canonical form, a blank node inside, and a subject also used outside.
const SHAPES: &str = r#"
VERSION "1.2"
PREFIX : <http://example.org/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
:s1 :name "S one" .
:r1 :q <<( :s1 :p :o1 )>> .
:r2 :q <<( :s1 :p :o2 )>> .
:r3 :q <<( :s1 :other "01"^^xsd:integer )>> .
:r4 :q <<( :s2 :p :o1 )>> .
:r5 :q <<( :s2 :p "1"^^xsd:integer )>> .
:r6 :q <<( :inner :p :o3 )>> .
:r7 :q <<( :s1 :says <<( :a :age "030"^^xsd:integer )>> )>> .
:r8 :q <<( :s1 :says <<( :b :age 40 )>> )>> .
:r9 :q <<( :s2 :says <<( :a :age "030"^^xsd:integer )>> )>> .
:r10 :q <<( :r10 :p :o1 )>> .
:s1 :q <<( :s1 :p :o1 )>> .
:o1 :q <<( :s1 :p :o1 )>> .
:r11 :q2 <<( :s1 :p :o2 )>> .
:r12 :q <<( _:b :p :o1 )>> .
:r13 :q :plain .
:g1 { :r20 :q <<( :s1 :p :o4 )>> . :r21 :q <<( :s3 :p :o1 )>> . }
:g2 { :r22 :q <<( :s1 :p :o5 )>> . :r1 :q <<( :s1 :p :o1 )>> . }
"#;

/// Queries of every shape: the triple term in object and subject position,
/// constants in some parts only, nested, variables shared with the outside
/// (bound before or after), graphs, FROM, and parts from VALUES and BIND.
const QUERIES: &[&str] = &[
    "SELECT ?r ?o WHERE { ?r :q <<( :s1 :p ?o )>> }",
    "SELECT ?r ?p ?o WHERE { ?r :q <<( :s1 ?p ?o )>> }",
    "SELECT ?r ?s WHERE { ?r :q <<( ?s :p :o1 )>> }",
    "SELECT ?r ?s ?o WHERE { ?r :q <<( ?s :p ?o )>> }",
    "SELECT ?r ?q ?o WHERE { ?r ?q <<( :s1 :p ?o )>> }",
    "SELECT ?q ?o WHERE { :r2 ?q <<( :s1 :p ?o )>> }",
    "SELECT ?r ?o WHERE { ?r :q <<( :s2 :p ?o )>> FILTER(isLITERAL(?o)) }",
    "SELECT ?r ?o WHERE { ?r :q <<( :inner :p ?o )>> }",
    "SELECT ?r ?o WHERE { ?r :q <<( :nobody :p ?o )>> }",
    "SELECT ?r ?v WHERE { ?r :q <<( :s1 :says <<( :a :age ?v )>> )>> }",
    "SELECT ?r ?x ?v WHERE { ?r :q <<( :s1 :says <<( ?x :age ?v )>> )>> }",
    "SELECT ?r ?s ?v WHERE { ?r :q <<( ?s :says <<( :a :age ?v )>> )>> }",
    "SELECT ?r ?t WHERE { ?r :q <<( :s1 :says ?t )>> }",
    "SELECT ?r WHERE { ?r :q <<( :s2 :says <<( :a :age \"030\"^^xsd:integer )>> )>> }",
    "SELECT ?r WHERE { ?r :q <<( ?s :says <<( :a :age 30 )>> )>> }",
    "SELECT ?r WHERE { ?r :q <<( ?r :p ?o )>> }",
    "SELECT ?r ?o WHERE { ?r :q <<( ?r ?p ?o )>> }",
    "SELECT ?o WHERE { ?o :q <<( :s1 :p ?o )>> }",
    "SELECT ?s ?n ?r WHERE { ?s :name ?n . ?r :q <<( ?s :p ?o )>> }",
    "SELECT ?s ?r WHERE { ?r :q <<( ?s :p :o2 )>> . ?s :name ?n }",
    "SELECT ?r ?o WHERE { VALUES ?s { :s1 :s2 :s3 } ?r :q <<( ?s :p ?o )>> }",
    "SELECT ?r ?o WHERE { BIND(:s2 AS ?s) ?r :q <<( ?s :p ?o )>> }",
    "SELECT ?r ?s WHERE { VALUES ?o { \"1\"^^xsd:integer \"01\"^^xsd:integer } ?r :q <<( ?s ?p ?o )>> }",
    "SELECT ?x ?s ?o WHERE { ?x :name \"S one\" OPTIONAL { ?r :q <<( ?x :p ?o )>> BIND(?x AS ?s) } }",
    "SELECT ?r (isBLANK(?b) AS ?blank) WHERE { ?r :q <<( ?b :p :o1 )>> }",
    "SELECT ?g ?r ?o WHERE { GRAPH ?g { ?r :q <<( :s1 :p ?o )>> } }",
    "SELECT ?r ?s WHERE { GRAPH :g1 { ?r :q <<( ?s :p :o1 )>> } }",
    "SELECT ?r ?o FROM :g1 FROM :g2 WHERE { ?r :q <<( :s1 :p ?o )>> }",
    "SELECT ?x ?y WHERE { <<( :s1 :p ?o )>> ?x ?y }",
    "SELECT (COUNT(*) AS ?n) WHERE { ?r ?q <<( ?s ?p ?o )>> }",
    "ASK { :r7 :q <<( :s1 :says <<( :a ?p ?v )>> )>> }",
    "ASK { ?r :q <<( :s1 :p :nothing )>> }",
];

/// The answer as sorted lines, blank nodes written as `_:`.
fn lines(answer: QueryResults<'_>) -> BTreeSet<String> {
    let blank = |text: String| if text.starts_with("_:") { "_:".to_owned() } else { text };
    match answer {
        QueryResults::Solutions(solutions) => solutions.map(|s| s.unwrap().iter().map(|(v, t)| format!("{v}={}", blank(t.to_string()))).collect::<Vec<_>>().join(" ")).collect(),
        QueryResults::Boolean(value) => [value.to_string()].into(),
        QueryResults::Graph(_) => panic!("not a SELECT or ASK"),
    }
}

fn rete_lines<S: RangeSource>(store: &Store<S>, text: &str) -> Result<BTreeSet<String>, crate::sparql::QueryError> {
    let blank = |text: String| if text.starts_with("_:") { "_:".to_owned() } else { text };
    Ok(match query(store, &format!("{PREFIX}{text}"), None, &QueryOptions::default())? {
        Answer::Solutions(solutions) => solutions.map(|s| s.map(|s| s.iter().map(|(v, t)| format!("{v}={}", blank(t.to_string()))).collect::<Vec<_>>().join(" "))).collect::<Result<_, _>>()?,
        Answer::Boolean(value) => [value.to_string()].into(),
        Answer::Graph(_) => panic!("not a SELECT or ASK"),
    })
}

#[test]
fn patterns_inside_triple_terms_answer_as_an_in_memory_evaluation() {
    let quads = fixture::quads_of(SHAPES);
    let memory: Dataset = quads.iter().cloned().collect();
    // Tiny blocks: ranges cross dictionary and permutation blocks.
    let store = Store::open(fixture::build(&quads, 3), 1 << 20).unwrap();
    let mut nonempty = 0;
    for text in QUERIES {
        let parsed = spargebra::SparqlParser::new().parse_query(&format!("{PREFIX}{text}")).unwrap();
        let expected = lines(QueryEvaluator::new().prepare(&parsed).execute(&memory).unwrap());
        let found = rete_lines(&store, text).unwrap();
        assert_eq!(found, expected, "{text}");
        nonempty += usize::from(!expected.is_empty() && expected != BTreeSet::from(["false".to_owned()]));
    }
    assert!(nonempty >= QUERIES.len() - 6, "most queries find something: {nonempty} of {}", QUERIES.len());
}

#[test]
fn missing_blocks_of_a_triple_term_range_are_fetched_and_the_answer_completes() {
    // Every block fetched only when asked for: the ranges' ends and the quads
    // of the range come in later rounds, and the answer is the synchronous one.
    let file = fixture::build(&fixture::quads_of(SHAPES), 3);
    let full = Store::open(file.clone(), 1 << 20).unwrap();
    let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), BlockCache::new(1 << 20));
    for text in QUERIES {
        let (answer, _) = run_in_rounds(&store, &RoundOptions::default(), |ranges| file.as_slice().read_ranges(ranges), |s| rete_lines(s, text)).unwrap();
        assert_eq!(answer.unwrap(), rete_lines(&full, text).unwrap(), "{text}");
    }
}

const STATEMENTS: usize = 40_000;
const SUBJECTS: usize = 800;

/// 40,000 reifiers `:r{i} rdf:reifies <<( :s{i % 800} :p{i % 5} "…" )>>`
/// (a value that compresses like real text, not a counter) and a label each:
/// 80,000 quads in blocks of 1,024 quads, 40,000 triple terms in dictionary
/// blocks of ~8 KiB, as the reference writer's files are laid out (many
/// blocks, small ones).
fn statements() -> &'static [u8] {
    static FILE: OnceLock<Vec<u8>> = OnceLock::new();
    FILE.get_or_init(|| {
        let iri = |name: String| NamedNode::new_unchecked(format!("http://example.org/{name}"));
        let mut quads = Vec::new();
        for i in 0..STATEMENTS {
            let value = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes()));
            let triple = Triple::new(iri(format!("s{}", i % SUBJECTS)), iri(format!("p{}", i % 5)), Literal::new_simple_literal(value));
            quads.push(Quad::new(iri(format!("r{i}")), oxrdf::vocab::rdf::REIFIES.into_owned(), triple, GraphName::DefaultGraph));
            quads.push(Quad::new(iri(format!("r{i}")), iri("label".into()), Literal::new_simple_literal(format!("statement {i}")), GraphName::DefaultGraph));
        }
        fixture::build_with(&quads, 1024, 8192)
    })
}

/// Reads ranges of the in-memory file, recording each batch.
struct Counter {
    batches: RefCell<Vec<Vec<ByteRange>>>,
}

impl Counter {
    fn fetch(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        self.batches.borrow_mut().push(ranges.to_vec());
        statements().read_ranges(ranges)
    }
}

/// Rounds, requests and bytes of a query from a cold start (open included),
/// and its answer, checked against a synchronous evaluation.
fn cold(text: &str) -> (BTreeSet<String>, RoundStats) {
    let counter = Counter { batches: RefCell::default() };
    let (store, opened) = open_in_rounds(|r| counter.fetch(r), BlockCache::new(64 << 20)).unwrap();
    let (answer, stats) = run_in_rounds(&store, &RoundOptions::default(), |r| counter.fetch(r), |s| rete_lines(s, text)).unwrap();
    let answer = answer.unwrap();
    assert_eq!(answer, rete_lines(&Store::open(statements(), 64 << 20).unwrap(), text).unwrap(), "{text}");
    (answer, opened + stats)
}

/// The same with header and INDEX in memory (an isolate that has seen the
/// file) and an empty block cache: the query's own reads.
fn warm(text: &str) -> RoundStats {
    let counter = Counter { batches: RefCell::default() };
    let full = Store::open(statements(), 64 << 20).unwrap();
    let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), BlockCache::new(64 << 20));
    let (answer, stats) = run_in_rounds(&store, &RoundOptions::default(), |r| counter.fetch(r), |s| rete_lines(s, text)).unwrap();
    assert_eq!(answer.unwrap(), rete_lines(&full, text).unwrap(), "{text}");
    stats
}

#[test]
fn a_triple_term_with_free_parts_reads_its_range_not_every_triple_term() {
    // :s7's statements: i ≡ 7 (mod 800), so i ≡ 2 (mod 5): 50 of 40,000, all with :p2.
    let narrowed = "SELECT ?r ?o WHERE { ?r rdf:reifies <<( :s7 :p2 ?o )>> }";
    // The same answer read the way the pattern was read before (the triple
    // term's position free: every rdf:reifies quad, each triple term decoded
    // and taken apart).
    let free = "SELECT ?r ?o WHERE { ?r rdf:reifies ?t FILTER(isTRIPLE(?t) && SUBJECT(?t) = :s7 && PREDICATE(?t) = :p2) BIND(OBJECT(?t) AS ?o) }";
    let (answer, after_cold) = cold(narrowed);
    let (same, before_cold) = cold(free);
    assert_eq!(answer.len(), 50);
    assert_eq!(answer, same);
    let (after, before) = (warm(narrowed), warm(free));
    eprintln!("file {} bytes; range: cold {after_cold:?} warm {after:?}; free position: cold {before_cold:?} warm {before:?}", statements().len());
    // The range: the dictionary blocks of the constants and of the range's
    // ends, then the POS block(s) of (rdf:reifies, range): bounded, whatever
    // the number of triple terms.
    assert!(after_cold.rounds <= 3 && after.rounds <= 2, "{after_cold:?} {after:?}");
    assert!(after.requests <= 6 && after.bytes <= 6 * 8192, "a few dictionary blocks and one or two quad blocks: {after:?}");
    assert!(after.bytes * 10 < before.bytes, "the range reads a tenth of what the free position reads: {after:?} vs {before:?}");
    // Counted, no term is decoded for the output: the pattern's reads alone.
    let counted = |text: &str| text.replace("SELECT ?r ?o", "SELECT (COUNT(*) AS ?n)");
    let (count, _) = cold(&counted(narrowed));
    assert_eq!(count, BTreeSet::from(["?n=\"50\"^^<http://www.w3.org/2001/XMLSchema#integer>".to_owned()]));
    let (after_count, before_count) = (warm(&counted(narrowed)), warm(&counted(free)));
    eprintln!("counted: range {after_count:?}; free position {before_count:?}");
    assert!(after_count.rounds <= 2 && after_count.requests <= 6 && after_count.bytes <= 48 << 10, "{after_count:?}");
    assert!(after_count.bytes * 10 < before_count.bytes, "{after_count:?} vs {before_count:?}");
    // With the subject only, the range is :s7's statements (all with :p2).
    let (answer, _) = cold("SELECT ?r ?p ?o WHERE { ?r rdf:reifies <<( :s7 ?p ?o )>> }");
    assert_eq!(answer.len(), 50);
    let subject_only = warm("SELECT ?r ?p ?o WHERE { ?r rdf:reifies <<( :s7 ?p ?o )>> }");
    assert!(subject_only.bytes * 10 < before.bytes, "{subject_only:?} vs {before:?}");
}
