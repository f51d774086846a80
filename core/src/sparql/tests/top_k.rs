//! Top-k sorts on numbers and dates read only the POS blocks of their top k
//! (`top_k.rs`, FORMAT.md §5.1.1): their answers are those of an in-memory
//! evaluation (spareval over `oxrdf::Dataset`), in order, on ties across
//! blocks, ASC and DESC, OFFSET, joins and FILTERs that drop rows, graphs,
//! mixed kinds and timezones, read at once or in rounds; and they read a
//! fraction of what the same sort reads when it is not recognised.

use super::fixture;
use crate::read::{BlockCache, RoundOptions, run_in_rounds};
use crate::sparql::{Answer, QueryOptions, query};
use crate::{RangeSource, Store};
use oxrdf::vocab::xsd;
use oxrdf::{Dataset, GraphName, Literal, NamedNode, Quad, Term};
use spareval::{QueryEvaluator, QueryResults};

const PREFIX: &str = "PREFIX : <http://example.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> ";

fn iri(name: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("http://example.org/{name}"))
}

/// 300 subjects: `:n` numbers of mixed types with many ties (`i % 37`, as
/// an integer, `"0…"` integer, decimal or float), a `:tag` on every fifth,
/// a `:rare` on two, dates three days apart with and without timezone,
/// dateTimes, `:m` numbers and one string, `:pick` a few numbers, and a
/// named graph with some `:n` of its own.
fn data() -> Vec<Quad> {
    let mut quads = Vec::new();
    let mut add = |s: &str, p: &str, o: Term, graph: GraphName| quads.push(Quad::new(iri(s), iri(p), o, graph));
    for i in 0..300u32 {
        let s = format!("s{i:03}");
        let value = i % 37;
        let number = match i % 4 {
            0 => Literal::new_typed_literal(value.to_string(), xsd::INTEGER),
            1 => Literal::new_typed_literal(format!("0{value}"), xsd::INTEGER),
            2 => Literal::new_typed_literal(format!("{value}.0"), xsd::DECIMAL),
            _ => Literal::new_typed_literal(format!("{value}"), xsd::FLOAT),
        };
        add(&s, "n", number.into(), GraphName::DefaultGraph);
        if i % 5 == 0 {
            add(&s, "tag", Literal::new_simple_literal("x").into(), GraphName::DefaultGraph);
        }
        if i == 7 || i == 250 {
            add(&s, "rare", Literal::new_simple_literal("y").into(), GraphName::DefaultGraph);
        }
        let day = 1700 + i * 3;
        let zone = ["", "Z", "+05:00"][i as usize % 3];
        let date = format!("{:04}-{:02}-{:02}{zone}", 1700 + day / 360, 1 + day % 360 / 30, 1 + day % 30);
        add(&s, "d", Literal::new_typed_literal(date, xsd::DATE).into(), GraphName::DefaultGraph);
        let time = format!("2000-01-01T{:02}:{:02}:00Z", i / 60 % 24, i % 60);
        add(&s, "t", Literal::new_typed_literal(time, xsd::DATE_TIME).into(), GraphName::DefaultGraph);
        add(&s, "m", Literal::new_typed_literal(i.to_string(), xsd::INTEGER).into(), GraphName::DefaultGraph);
        if i % 50 == 0 {
            add("x", "pick", Literal::new_typed_literal(value.to_string(), xsd::INTEGER).into(), GraphName::DefaultGraph);
            add(&s, "n", Literal::new_typed_literal((1000 + i).to_string(), xsd::INTEGER).into(), GraphName::NamedNode(iri("g1")));
        }
    }
    // Equal values in other forms: ties with the top value, across graphs.
    add("t1", "n", Literal::new_typed_literal("36", xsd::DOUBLE).into(), GraphName::DefaultGraph);
    add("t2", "n", Literal::new_typed_literal("36.00", xsd::DECIMAL).into(), GraphName::DefaultGraph);
    add("t3", "d", Literal::new_typed_literal("2000-01-01Z", xsd::DATE).into(), GraphName::DefaultGraph);
    add("t4", "d", Literal::new_typed_literal("2000-01-01+00:00", xsd::DATE).into(), GraphName::DefaultGraph);
    add("z", "m", Literal::new_simple_literal("five").into(), GraphName::DefaultGraph);
    quads
}

/// Every ORDER BY is total (ties broken by the subject and the exact term),
/// so the answers must match in order.
const QUERIES: &[&str] = &[
    "SELECT ?s ?v WHERE { ?s :n ?v } ORDER BY DESC(?v) ?s STR(?v) STR(DATATYPE(?v)) LIMIT 10",
    "SELECT ?s ?v WHERE { ?s :n ?v } ORDER BY ?v ?s STR(?v) STR(DATATYPE(?v)) LIMIT 10 OFFSET 25",
    "SELECT ?s ?v WHERE { ?s :n ?v } ORDER BY DESC(?v) ?s STR(?v) STR(DATATYPE(?v)) LIMIT 1",
    "SELECT * WHERE { ?s :n ?v } ORDER BY DESC(?v) ?s STR(?v) STR(DATATYPE(?v)) OFFSET 40 LIMIT 3",
    "SELECT ?s ?v WHERE { ?s :n ?v ; :tag ?t } ORDER BY DESC(?v) ?s STR(?v) STR(DATATYPE(?v)) LIMIT 7",
    "SELECT ?s ?v WHERE { ?s :n ?v ; :rare ?r } ORDER BY DESC(?v) ?s STR(?v) LIMIT 5",
    "SELECT ?s ?v WHERE { ?s :n ?v FILTER(?s != :s036 && ?s != :s073) } ORDER BY DESC(?v) ?s STR(?v) STR(DATATYPE(?v)) LIMIT 4",
    "SELECT ?s ?v WHERE { ?s :n ?v FILTER(isLiteral(?v) && STRLEN(STR(?s)) > 100) } ORDER BY DESC(?v) LIMIT 4",
    "SELECT ?s ?v WHERE { ?s :n ?v } ORDER BY DESC(?v) ?s STR(?v) STR(DATATYPE(?v)) LIMIT 1000",
    "SELECT ?s ?v WHERE { ?s :n ?v } ORDER BY ?v ?s LIMIT 3 OFFSET 5000",
    "SELECT ?s ?v FROM :g1 WHERE { ?s :n ?v } ORDER BY DESC(?v) ?s LIMIT 3",
    "SELECT ?s ?v WHERE { :x :pick ?v . ?s :n ?v } ORDER BY DESC(?v) ?s STR(?v) STR(DATATYPE(?v)) LIMIT 3",
    "SELECT ?s ?d WHERE { ?s :d ?d } ORDER BY DESC(?d) ?s STR(?d) LIMIT 6",
    "SELECT ?s ?d WHERE { ?s :d ?d } ORDER BY ?d ?s LIMIT 6",
    "SELECT ?s ?t WHERE { ?s :t ?t ; :tag ?x } ORDER BY ?t ?s LIMIT 4 OFFSET 2",
    "SELECT ?s ?v WHERE { ?s :m ?v } ORDER BY DESC(?v) ?s LIMIT 5",
    "SELECT ?s ?v WHERE { ?s :m ?v } ORDER BY ?v ?s LIMIT 5",
    "SELECT ?s ?v WHERE { ?s :n ?v . ?s :n ?w } ORDER BY DESC(?v) ?s ?w LIMIT 3",
    "SELECT ?s ?v ?d WHERE { ?s :n ?v ; :d ?d } ORDER BY DESC(?v) DESC(?d) ?s LIMIT 5",
];

fn rows(answer: QueryResults<'_>) -> Vec<String> {
    let QueryResults::Solutions(solutions) = answer else { panic!("not a SELECT") };
    solutions.map(|s| s.unwrap().iter().map(|(v, t)| format!("{v}={t}")).collect::<Vec<_>>().join(" ")).collect()
}

fn rete_rows<S: RangeSource>(store: &Store<S>, text: &str) -> Result<Vec<String>, crate::sparql::QueryError> {
    let Answer::Solutions(solutions) = query(store, &format!("{PREFIX}{text}"), None, &QueryOptions::default())? else { panic!("not a SELECT") };
    solutions.map(|s| s.map(|s| s.iter().map(|(v, t)| format!("{v}={t}")).collect::<Vec<_>>().join(" "))).collect()
}

#[test]
fn top_k_sorts_answer_as_an_in_memory_evaluation() {
    let quads = data();
    let memory: Dataset = quads.iter().cloned().collect();
    // Blocks of 16 quads: a predicate's values and their ties span blocks.
    let file = fixture::build(&quads, 16);
    let store = Store::open(file.clone(), 1 << 20).unwrap();
    assert_eq!(store.header().literal_order(), crate::format::term::LiteralOrder::Value);
    let unfetched = || Store::from_parts(crate::read::Unfetched, store.header().clone(), store.index().clone(), BlockCache::new(1 << 20));
    for text in QUERIES {
        let parsed = spargebra::SparqlParser::new().parse_query(&format!("{PREFIX}{text}")).unwrap();
        let expected = rows(QueryEvaluator::new().prepare(&parsed).execute(&memory).unwrap());
        assert_eq!(rete_rows(&store, text).unwrap(), expected, "{text}");
        let (answer, _) = run_in_rounds(&unfetched(), &RoundOptions::default(), |ranges| file.as_slice().read_ranges(ranges), |s| rete_rows(s, text)).unwrap();
        assert_eq!(answer.unwrap(), expected, "{text} in rounds");
    }
}

#[test]
fn ties_at_the_kth_value_are_kept() {
    // 400 rows of one value and 5 above it, in blocks of 8: the 10th value
    // has ties in many blocks before the threshold's; which of them fill
    // the last places is the engine's tie order, the same as without pruning.
    let mut quads = Vec::new();
    for i in 0..400u32 {
        let form = if i % 2 == 0 { "7" } else { "07" };
        quads.push(Quad::new(iri(&format!("s{i:03}")), iri("n"), Literal::new_typed_literal(form, xsd::INTEGER), GraphName::DefaultGraph));
    }
    for i in 0..5u32 {
        quads.push(Quad::new(iri(&format!("top{i}")), iri("n"), Literal::new_typed_literal((100 + i).to_string(), xsd::INTEGER), GraphName::DefaultGraph));
    }
    let memory: Dataset = quads.iter().cloned().collect();
    let store = Store::open(fixture::build(&quads, 8), 1 << 20).unwrap();
    for text in ["SELECT ?s ?v WHERE { ?s :n ?v } ORDER BY DESC(?v) ?s STR(?v) LIMIT 10", "SELECT ?s ?v WHERE { ?s :n ?v } ORDER BY DESC(?v) STR(?v) DESC(?s) LIMIT 10"] {
        let parsed = spargebra::SparqlParser::new().parse_query(&format!("{PREFIX}{text}")).unwrap();
        let expected = rows(QueryEvaluator::new().prepare(&parsed).execute(&memory).unwrap());
        assert_eq!(rete_rows(&store, text).unwrap(), expected, "{text}");
    }
    // Without a tie-breaker: five rows above, then five of the 400 ties.
    let found = rete_rows(&store, "SELECT ?v WHERE { ?s :n ?v } ORDER BY DESC(?v) LIMIT 10").unwrap();
    assert_eq!(found.len(), 10);
    assert!(found[5..].iter().all(|row| row.contains("\"7\"") || row.contains("\"07\"")), "{found:?}");
}

#[test]
fn a_top_k_sort_reads_its_top_not_every_value() {
    // 20,000 subjects with a number, a date and a name each, in blocks of 256 quads.
    let mut quads = fixture::numbers_and_dates(20_000);
    for i in 0..20_000u64 {
        quads.push(Quad::new(iri(&format!("s{i}")), iri("name"), Literal::new_simple_literal(format!("subject {i}")), GraphName::DefaultGraph));
    }
    let file = fixture::build_with(&quads, 256, 4096);
    let full = Store::open(file.clone(), 64 << 20).unwrap();
    let read = |text: &str| {
        let (answer, bytes) = fixture::read_cold(&file, &full, |s| rete_rows(s, text));
        (answer.unwrap(), bytes)
    };
    // `?v + 0` and `STR("")` are not a variable: the same sort, not recognised.
    for (sorted, unrecognised, fewer) in [
        ("SELECT ?s ?v WHERE { ?s :n ?v } ORDER BY DESC(?v) ?s LIMIT 20", "SELECT ?s ?v WHERE { ?s :n ?v } ORDER BY DESC(?v + 0) ?s LIMIT 20", 4),
        ("SELECT ?s ?v WHERE { ?s :d ?v } ORDER BY ?v ?s LIMIT 10 OFFSET 10", "SELECT ?s ?v WHERE { ?s :d ?v } ORDER BY STR(\"\") ?v ?s LIMIT 10 OFFSET 10", 4),
        // The names of the top 20 are in up to 20 SPO blocks (of 235) and
        // 20 dictionary blocks, read either way.
        ("SELECT ?name ?v WHERE { ?s :n ?v ; :name ?name } ORDER BY DESC(?v) ?s LIMIT 20", "SELECT ?name ?v WHERE { ?s :n ?v ; :name ?name } ORDER BY DESC(?v + 0) ?s LIMIT 20", 2),
    ] {
        let (found, narrowed) = read(sorted);
        let (expected, whole) = read(unrecognised);
        assert_eq!(found, expected, "{sorted}");
        assert!(narrowed * fewer < whole, "{sorted}: {narrowed} bytes with the top k, {whole} without");
    }
}
