//! The read bounds of `docs/READ-PATH.md`, asserted with a counting source
//! over a file built here: the open is one read of 16 KiB; a single triple
//! pattern, an ASK of one triple and a DESCRIBE of one IRI take at most 3
//! sequential rounds cold and 2 with the header cached; a BGP of k patterns
//! at most k + 2. Every answer is also checked against a plain synchronous
//! evaluation, and the block cache's budget is checked to hold.

use super::fixture;
use crate::read::{BlockCache, RoundOptions, RoundStats, open_in_rounds, run_in_rounds};
use crate::sparql::{Answer, QueryError, QueryOptions, query};
use crate::{ByteRange, RangeSource, ReadError, ReadLimit, Store};
use oxrdf::{GraphName, Literal, NamedNode, Quad, vocab::rdf};
use std::cell::RefCell;
use std::sync::OnceLock;

const PREFIX: &str = "PREFIX : <http://example.org/> ";
const PEOPLE: usize = 4000;
const ORGS: usize = 100;

/// 4,000 people (type, name, age, two `:knows`, one `:memberOf`) in 100
/// organisations: 24,200 quads in blocks of 1,024 quads, dictionary blocks of
/// ~1 KiB of front-coded terms, so that a dictionary block's id
/// range spans a few quad blocks, as in the reference writer's files.
fn people() -> &'static [u8] {
    static FILE: OnceLock<Vec<u8>> = OnceLock::new();
    FILE.get_or_init(|| {
        let iri = |name: String| NamedNode::new_unchecked(format!("http://example.org/{name}"));
        let mut quads = Vec::new();
        let mut add = |s: NamedNode, p: NamedNode, o: oxrdf::Term| quads.push(Quad::new(s, p, o, GraphName::DefaultGraph));
        for i in 0..PEOPLE {
            let person = iri(format!("p{i}"));
            add(person.clone(), rdf::TYPE.into_owned(), iri("Person".into()).into());
            add(person.clone(), iri("name".into()), Literal::new_simple_literal(format!("Person {i}")).into());
            add(person.clone(), iri("age".into()), Literal::from((20 + i % 50) as i64).into());
            add(person.clone(), iri("knows".into()), iri(format!("p{}", (i * 7 + 1) % PEOPLE)).into());
            add(person.clone(), iri("knows".into()), iri(format!("p{}", (i * 13 + 5) % PEOPLE)).into());
            add(person, iri("memberOf".into()), iri(format!("org{}", i % ORGS)).into());
        }
        for j in 0..ORGS {
            add(iri(format!("org{j}")), rdf::TYPE.into_owned(), iri("Org".into()).into());
            add(iri(format!("org{j}")), iri("label".into()), Literal::new_simple_literal(format!("Org {j}")).into());
        }
        fixture::build_with(&quads, 1024, 1024)
    })
}

/// The answer as sorted lines, or the error.
fn answer<S: RangeSource>(store: &Store<S>, text: &str) -> Result<Vec<String>, QueryError> {
    let mut lines = match query(store, &format!("{PREFIX}{text}"), None, &QueryOptions::default())? {
        Answer::Solutions(solutions) => solutions.map(|s| s.map(|s| s.iter().map(|(v, t)| format!("{v}={t}")).collect::<Vec<_>>().join(" "))).collect::<Result<Vec<_>, _>>()?,
        Answer::Boolean(value) => vec![value.to_string()],
        Answer::Graph(triples) => triples.map(|t| t.map(|t| t.to_string())).collect::<Result<Vec<_>, _>>()?,
    };
    lines.sort();
    Ok(lines)
}

/// Reads ranges of the in-memory file, recording each batch.
struct Counter {
    file: &'static [u8],
    batches: RefCell<Vec<Vec<ByteRange>>>,
}

impl Counter {
    fn new() -> Self {
        Self { file: people(), batches: RefCell::default() }
    }

    fn fetch(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        self.batches.borrow_mut().push(ranges.to_vec());
        self.file.read_ranges(ranges)
    }
}

/// Evaluates through rounds from a cold start (open included) and checks the
/// answer against a synchronous evaluation.
fn cold(text: &str) -> (Vec<String>, RoundStats) {
    let counter = Counter::new();
    let (store, opened) = open_in_rounds(|r| counter.fetch(r), BlockCache::new(64 << 20)).unwrap();
    let (result, stats) = run_in_rounds(&store, &RoundOptions::default(), |r| counter.fetch(r), |s| answer(s, text)).unwrap();
    let expected = answer(&Store::open(people(), 64 << 20).unwrap(), text).unwrap();
    assert_eq!(result.as_ref().unwrap(), &expected, "{text}");
    assert!(!expected.is_empty() || text.starts_with("ASK"), "{text} answers nothing: a weak test");
    (expected, opened + stats)
}

/// The same with header and INDEX already in memory (an isolate that has
/// seen the file) and an empty block cache.
fn warm(text: &str) -> RoundStats {
    let counter = Counter::new();
    let full = Store::open(people(), 1 << 20).unwrap();
    let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), BlockCache::new(64 << 20));
    let (result, stats) = run_in_rounds(&store, &RoundOptions::default(), |r| counter.fetch(r), |s| answer(s, text)).unwrap();
    assert_eq!(result.unwrap(), answer(&full, text).unwrap(), "{text}");
    stats
}

fn assert_rounds(text: &str, cold_max: u64, warm_max: u64) {
    let (_, cold_stats) = cold(text);
    let warm_stats = warm(text);
    assert!(cold_stats.rounds <= cold_max, "{text}: {cold_stats:?} cold, more than {cold_max} rounds");
    assert!(warm_stats.rounds <= warm_max, "{text}: {warm_stats:?} with the header cached, more than {warm_max} rounds");
}

#[test]
fn open_is_one_read_of_the_first_16_kib() {
    let counter = Counter::new();
    let (store, stats) = open_in_rounds(|r| counter.fetch(r), BlockCache::new(1 << 20)).unwrap();
    assert_eq!(*counter.batches.borrow(), [vec![ByteRange { offset: 0, length: 16384 }]]);
    assert_eq!((stats.rounds, stats.requests), (1, 1));
    assert!(store.header().file_length > 100_000, "the file is larger than the first read");
}

#[test]
fn single_triple_pattern_takes_at_most_3_rounds_cold_and_2_warm() {
    for text in [
        "SELECT ?o WHERE { :p42 :knows ?o }",
        "SELECT ?s WHERE { ?s :memberOf :org7 }",
        "SELECT ?s WHERE { ?s :name \"Person 1234\" }",
        "SELECT ?p ?o WHERE { :p3999 ?p ?o }",
        "SELECT ?s ?p WHERE { ?s ?p :p2000 }",
    ] {
        assert_rounds(text, 3, 2);
    }
}

#[test]
fn ask_of_one_triple_takes_at_most_3_rounds_cold_and_2_warm() {
    let knows = (42 * 7 + 1) % PEOPLE;
    let (yes, _) = cold(&format!("ASK {{ :p42 :knows :p{knows} }}"));
    assert_eq!(yes, ["true"]);
    let (no, _) = cold("ASK { :p42 :knows :p43 }");
    assert_eq!(no, ["false"]);
    assert_rounds(&format!("ASK {{ :p42 :knows :p{knows} }}"), 3, 2);
    assert_rounds("ASK { :p42 :knows :p43 }", 3, 2);
    assert_rounds("ASK { :nobody :knows :p43 }", 3, 2);
}

#[test]
fn describe_of_one_iri_takes_at_most_3_rounds_cold_and_2_warm() {
    let (triples, _) = cold("DESCRIBE :p1500");
    assert_eq!(triples.len(), 6);
    assert_rounds("DESCRIBE :p1500", 3, 2);
    assert_rounds("DESCRIBE :org42", 3, 2);
}

#[test]
fn bgp_of_k_patterns_takes_at_most_k_plus_2_rounds() {
    assert_rounds("SELECT ?n WHERE { ?p :memberOf :org7 . ?p :name ?n }", 4, 3);
    assert_rounds("SELECT ?f ?l WHERE { :p42 :knows ?f . ?f :memberOf ?o . ?o :label ?l }", 5, 4);
    assert_rounds("SELECT ?n ?a WHERE { :p42 :knows ?f . ?f :knows ?g . ?g :name ?n . ?g :age ?a }", 6, 5);
}

#[test]
fn a_discovery_run_answers_only_missing() {
    let full = Store::open(people(), 1 << 20).unwrap();
    let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), BlockCache::new(1 << 20));
    let Answer::Solutions(mut solutions) = query(&store, &format!("{PREFIX}SELECT ?s WHERE {{ ?s :memberOf :org7 }}"), None, &QueryOptions::default()).unwrap() else { panic!() };
    let error = solutions.next().unwrap().unwrap_err();
    assert!(error.missing_ranges().is_some_and(|r| !r.is_empty()), "{error}");
    assert!(solutions.next().is_none());
    let error = query(&store, &format!("{PREFIX}ASK {{ FILTER NOT EXISTS {{ :p1 :knows ?x }} }}"), None, &QueryOptions::default()).err().unwrap();
    assert!(error.missing_ranges().is_some(), "an ASK that would be true on missing data is not an answer: {error}");
    // What the runs asked for: dictionary blocks, and the quad blocks speculated for them.
    let missing = store.take_missing();
    assert!(missing.iter().any(|k| matches!(k, crate::read::BlockKey::Permutation(..))), "{missing:?}");
}

#[test]
fn fed_blocks_count_against_the_cache_budget() {
    let counter = Counter::new();
    let full = Store::open(people(), 1 << 20).unwrap();
    let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), BlockCache::new(40 << 10));
    let error = run_in_rounds(&store, &RoundOptions::default(), |r| counter.fetch(r), |s| answer(s, "SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?o }")).unwrap_err();
    assert!(matches!(error, ReadError::Budget { limit: ReadLimit::CacheBytes, max } if max == 40 << 10), "{error}");
    assert!(error.to_string().starts_with("query needs more than the block cache's 40960 bytes"), "{error}");
    let (pinned, used) = store.cache_bytes();
    assert!(pinned <= 40 << 10 && used <= 40 << 10);
}

/// What a host keeps of the sealed blocks it fetched (the Worker's
/// compressed blocks): the store's source, which gives them again.
#[derive(Default)]
struct Kept(RefCell<std::collections::HashMap<ByteRange, Vec<u8>>>);

impl RangeSource for Kept {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        let kept = self.0.borrow();
        ranges.iter().map(|range| kept.get(range).cloned()).collect::<Option<Vec<_>>>().ok_or_else(|| ReadError::Missing(ranges.to_vec()))
    }
}

/// Blocks fed with [`Store::feed_evictable`] over a source that keeps them:
/// a scan whose decoded blocks exceed the cache (the budget error above)
/// answers, the cache stays within its budget, and the next query over the
/// same cache and source reads nothing.
#[test]
fn evictable_blocks_let_a_scan_exceed_the_cache() {
    let counter = Counter::new();
    let full = Store::open(people(), 1 << 20).unwrap();
    let text = "SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?o FILTER(isLiteral(?o)) }";
    let expected = answer(&full, text).unwrap();
    let kept = Kept::default();
    let mut cache = BlockCache::new(40 << 10);
    for (run, expected_rounds) in [(0, None), (1, Some(0))] {
        let store = Store::from_parts(&kept, full.header().clone(), full.index().clone(), cache);
        let mut rounds = crate::read::Rounds::new(RoundOptions::default());
        let result = loop {
            let mark = store.mark();
            let result = answer(&store, text);
            match rounds.step(&store, mark).unwrap() {
                crate::read::Step::Done => break result,
                crate::read::Step::Fetch(plan) => {
                    let bodies = counter.fetch(&plan.ranges).unwrap();
                    for &(key, range) in &plan.blocks {
                        let bytes = plan.bytes_of(&bodies, range).unwrap();
                        store.feed_evictable(key, bytes).unwrap();
                        kept.0.borrow_mut().insert(range, bytes.to_vec());
                    }
                    for &range in &plan.pieces {
                        store.hold(range, plan.bytes_of(&bodies, range).unwrap().into());
                    }
                }
            }
        };
        assert_eq!(result.unwrap(), expected, "run {run}");
        if let Some(expected) = expected_rounds {
            assert_eq!(rounds.count(), expected, "run {run}: every block is kept");
        }
        let (pinned, used) = store.cache_bytes();
        assert!(pinned == 0 && used <= 40 << 10, "{pinned} pinned, {used} used");
        cache = store.into_cache();
    }
    let sealed: usize = kept.0.borrow().values().map(Vec::len).sum();
    let decoded = Store::open(people(), 64 << 20).map(|s| { let _ = answer(&s, text); s.cache_bytes().1 }).unwrap();
    assert!(decoded > 40 << 10, "the scan decodes {decoded} bytes ({sealed} sealed): more than the cache, or the test proves nothing");
}

/// A scan somewhat larger than the cache, asked for again and again over the
/// same cache with a new store each time, as a Worker's requests ask: plain
/// LRU evicted each block just before the next run needed it and read every
/// block again on every run (51, 51, 51, 51 reads); now most stay
/// (`read/cache.rs`: 51, 16, 16, 16).
#[test]
fn a_scan_larger_than_the_cache_stays_mostly_cached() {
    struct Counting(std::cell::Cell<usize>);
    impl RangeSource for Counting {
        fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
            self.0.set(self.0.get() + ranges.len());
            people().read_ranges(ranges)
        }
    }
    let full = Store::open(people(), 64 << 20).unwrap();
    let text = "SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?o FILTER(isLiteral(?o)) }";
    let expected = answer(&full, text).unwrap();
    let decoded = full.cache_bytes().1;
    let source = Counting(std::cell::Cell::new(0));
    let mut cache = BlockCache::new(decoded * 4 / 5);
    let mut reads = Vec::new();
    for _run in 0..4 {
        let store = Store::from_parts(&source, full.header().clone(), full.index().clone(), cache);
        source.0.set(0);
        assert_eq!(answer(&store, text).unwrap(), expected);
        reads.push(source.0.get());
        cache = store.into_cache();
    }
    assert!(reads[1] > 0 && reads[3] * 2 < reads[0], "blocks read per run: {reads:?}");
}

#[test]
fn the_cache_serves_the_next_query_within_its_budget() {
    let counter = Counter::new();
    let full = Store::open(people(), 1 << 20).unwrap();
    let mut cache = BlockCache::new(4 << 20);
    let text = "SELECT ?n WHERE { ?p :memberOf :org7 . ?p :name ?n }";
    for (run, expected_rounds) in [(0, None), (1, Some(0))] {
        let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), cache);
        let (_, stats) = run_in_rounds(&store, &RoundOptions::default(), |r| counter.fetch(r), |s| answer(s, text)).unwrap();
        if let Some(expected) = expected_rounds {
            assert_eq!(stats.rounds, expected, "run {run}: the blocks are cached");
        }
        store.release_fed();
        cache = store.into_cache();
        assert!(cache.used_bytes() <= 4 << 20);
    }
    // Many different queries: memory stays within the budget.
    for i in (0..PEOPLE).step_by(97) {
        let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), cache);
        let (result, _) = run_in_rounds(&store, &RoundOptions::default(), |r| counter.fetch(r), |s| answer(s, &format!("DESCRIBE :p{i}"))).unwrap();
        assert_eq!(result.unwrap().len(), 6);
        store.release_fed();
        cache = store.into_cache();
        assert!(cache.used_bytes() <= 4 << 20, "{} bytes", cache.used_bytes());
    }
}

#[test]
fn too_many_rounds_is_a_budget_error() {
    let counter = Counter::new();
    let full = Store::open(people(), 1 << 20).unwrap();
    let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), BlockCache::new(64 << 20));
    let options = RoundOptions { max_rounds: 1, ..RoundOptions::default() };
    let error = run_in_rounds(&store, &options, |r| counter.fetch(r), |s| answer(s, "SELECT ?n WHERE { ?p :memberOf :org7 . ?p :name ?n }")).unwrap_err();
    assert!(matches!(error, ReadError::Budget { limit: ReadLimit::Rounds, max: 1 }), "{error}");
    assert_eq!(error.to_string(), "query needs more than 1 rounds of reads");
}


#[test]
fn the_first_run_asks_for_every_constant_dictionary_block() {
    let full = Store::open(people(), 1 << 20).unwrap();
    let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), BlockCache::new(1 << 20));
    let text = "SELECT * WHERE { ?s :knows ?o OPTIONAL { ?o :memberOf :org7 } FILTER NOT EXISTS { ?s :age 33 } { ?s :name \"Person 12\" } UNION { ?s :label ?l } }";
    assert!(answer(&store, text).unwrap_err().missing_ranges().is_some());
    let missing = store.take_missing();
    for constant in ["http://example.org/knows", "http://example.org/memberOf", "http://example.org/org7", "http://example.org/age", "http://example.org/name", "http://example.org/label"] {
        let encoded = crate::encode_term(oxrdf::NamedNodeRef::new_unchecked(constant));
        let block = full.dictionary_for_term(&encoded).unwrap().unwrap().number;
        assert!(missing.contains(&crate::read::BlockKey::Dictionary(block)), "{constant}: {missing:?}");
    }
    for literal in [Literal::new_simple_literal("Person 12"), Literal::from(33i64)] {
        let block = full.dictionary_for_term(&crate::encode_term(literal.as_ref())).unwrap().unwrap().number;
        assert!(missing.contains(&crate::read::BlockKey::Dictionary(block)), "{literal}: {missing:?}");
    }
}

#[test]
fn a_section_outside_the_held_pieces_takes_one_round_then_is_held() {
    let counter = Counter::new();
    let full = Store::open(people(), 1 << 20).unwrap();
    let store = Store::from_parts(crate::read::Unfetched, full.header().clone(), full.index().clone(), BlockCache::new(1 << 20));
    let (card, stats) = run_in_rounds(&store, &RoundOptions::default(), |r| counter.fetch(r), |s| s.card()).unwrap();
    assert_eq!(card.unwrap().quads, full.header().quad_count);
    assert_eq!(stats.rounds, 1);
    let card_range = full.header().section(crate::SectionKind::Card).unwrap().range();
    assert_eq!(*counter.batches.borrow(), [vec![card_range]]);
    assert!(store.held().iter().any(|(range, _)| *range == card_range));
    let (_, again) = run_in_rounds(&store, &RoundOptions::default(), |r| counter.fetch(r), |s| s.card()).unwrap();
    assert_eq!(again.rounds, 0, "held after the first round");
}

#[test]
fn terms_with_a_prefix_span_dictionary_blocks_in_order() {
    let full = Store::open(people(), 1 << 20).unwrap();
    let prefix = crate::encode_term(oxrdf::NamedNodeRef::new_unchecked("http://example.org/p1"));
    let expected: Vec<String> = {
        let mut all: Vec<String> = (0..PEOPLE).map(|i| format!("p{i}")).filter(|p| p.starts_with("p1")).collect();
        all.sort();
        all.iter().map(|p| format!("<http://example.org/{p}>")).collect()
    };
    assert!(expected.len() > 1000, "the prefix spans several dictionary blocks");
    let found: Vec<String> = full.terms_with_prefix(&prefix, usize::MAX).unwrap().iter().map(ToString::to_string).collect();
    assert_eq!(found, expected);
    assert_eq!(full.terms_with_prefix(&prefix, 3).unwrap().len(), 3);
    let nothing = crate::encode_term(oxrdf::NamedNodeRef::new_unchecked("http://example.org/q"));
    assert!(full.terms_with_prefix(&nothing, 10).unwrap().is_empty());
}

#[test]
fn one_term_reader_over_many_dictionary_blocks_reads_what_term_reads() {
    // Dictionary blocks of ~48 bytes: a few terms each.
    let full = Store::open(fixture::build(&fixture::numbers_and_dates(400), 64), 1 << 20).unwrap();
    let terms = full.header().term_count;
    let blocks = full.block_count(crate::read::Directory::Dictionary);
    assert!(blocks > 100, "more dictionary blocks than a reader keeps: {blocks}");
    let mut reader = crate::read::TermReader::default();
    // Scattered, repeated, then backwards: the reader keeps some blocks and replaces others.
    for id in (0..3 * terms).map(|i| 1 + (i * 7919) % terms).chain((1..=terms).rev()) {
        assert_eq!(full.term_in(id, &mut reader).unwrap(), full.term(id).unwrap(), "id {id}");
    }
    assert!(full.term_in(terms + 1, &mut reader).is_err(), "past the last id");
}

#[test]
fn the_checked_prefix_holds_the_header_and_whole_sections_only() {
    let file = people();
    let prefix = &file[..16384];
    let header = crate::Header::decode(prefix, None).unwrap();
    let card = header.section(crate::SectionKind::Card).unwrap().range();
    // Every section whole in the first read (INDEX, CARD, this small dictionary); none the read cuts.
    let whole = header.sections.iter().map(|s| s.range().end()).filter(|&end| end <= 16384).max().unwrap();
    assert!(whole >= card.end() && whole < 16384);
    assert_eq!(crate::read::checked_prefix_length(&header, prefix) as u64, whole);
    let mut corrupt = prefix.to_vec();
    corrupt[card.offset as usize] ^= 1;
    let index = header.section(crate::SectionKind::Index).unwrap().range();
    assert_eq!(crate::read::checked_prefix_length(&header, &corrupt) as u64, index.end(), "a section failing its checksum ends it");
    assert_eq!(crate::read::checked_prefix_length(&header, &prefix[..card.end() as usize - 1]) as u64, index.end());
}
