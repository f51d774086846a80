//! SPARQL over in-memory `.rete` files: one test per operator family, each
//! run twice (unlimited, and with a budget so the step hooks are in the
//! plan), plus lexical forms, errors, missing ranges and budget bombs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub(crate) mod fixture;
mod computed_literals;
mod graphs;
mod json_rows;
mod lexical_filters;
mod lexical_forms;
mod order_by_ids;
mod planning;
mod rounds;
mod scoping;
mod term_functions;
mod top_k;
mod triple_ranges;
mod triple_terms;
mod value_ranges;
mod union;

use super::*;
use crate::results::{ResultFormat, write_answer};
use crate::{ByteRange, ReadError, encode_term};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

const DATA: &str = r#"
@prefix : <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:alice a :Person ; :name "Alice" ; :age "030"^^xsd:integer ; :knows :bob , :carol .
:bob a :Person ; :name "Bob" ; :age 25 ; :knows :carol .
:carol a :Person ; :name "Carol"@en ; :knows :alice .
:dave a :Robot ; :name "Dave" .
:n1 :value "01"^^xsd:integer .
:n2 :value "1.50"^^xsd:decimal .
:g1 { :alice :likes :pizza . :bob :likes :pasta . }
:g2 { :carol :likes :pizza . :pizza :label "Pizza" . }
"#;

const PREFIX: &str = "PREFIX : <http://example.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> ";

fn store() -> Store<Vec<u8>> {
    Store::open(fixture::from_trig(DATA), 1 << 20).unwrap()
}

/// A budget far above what the tests use: evaluation goes through the step hooks.
fn roomy() -> Budget {
    Budget { max_quads_scanned: 1 << 40, max_rows_produced: 1 << 40, max_steps: 1 << 40, max_computed_bytes: 1 << 40, should_stop: None }
}

fn run<'a, S: RangeSource + 'a>(store: &'a Store<S>, query: &str, options: &QueryOptions) -> Result<Answer<'a>, QueryError> {
    super::query(store, &format!("{PREFIX}{query}"), None, options)
}

/// Rows as N-Triples-like strings ("" for unbound), in output order.
fn rows_with(store: &Store<Vec<u8>>, query: &str, options: &QueryOptions) -> Vec<Vec<String>> {
    let Answer::Solutions(solutions) = run(store, query, options).unwrap() else { panic!("not a SELECT: {query}") };
    let variables = solutions.variables().to_vec();
    solutions.map(|s| row(&variables, &s.unwrap())).collect()
}

/// A SELECT's rows (as `row` gives them) from spareval over `trig` in an in-memory
/// `oxrdf::Dataset`, which builds every value: the reference rete's answers are held to.
fn spareval_rows(trig: &str, query: &str) -> BTreeSet<Vec<String>> {
    let quads = oxrdfio::RdfParser::from_format(oxrdfio::RdfFormat::TriG).for_slice(trig.as_bytes()).collect::<Result<Vec<_>, _>>().unwrap();
    let dataset: oxrdf::Dataset = quads.into_iter().collect();
    let query = SparqlParser::new().parse_query(&format!("{PREFIX}{query}")).unwrap();
    let spareval::QueryResults::Solutions(solutions) = spareval::QueryEvaluator::new().prepare(&query).execute(&dataset).unwrap() else { panic!("not a SELECT") };
    let variables = solutions.variables().to_vec();
    solutions.map(|s| row(&variables, &s.unwrap())).collect()
}

/// One solution as N-Triples-like strings ("" for unbound), `:` for the example namespace.
fn row(variables: &[Variable], solution: &QuerySolution) -> Vec<String> {
    variables.iter().map(|v| solution.get(v).map(|t| t.to_string().replace("http://example.org/", ":")).unwrap_or_default()).collect()
}

/// Rows in output order, checked to be the same with and without step hooks.
fn ordered(query: &str) -> Vec<Vec<String>> {
    let store = store();
    let plain = rows_with(&store, query, &QueryOptions::default());
    let hooked = rows_with(&store, query, &QueryOptions { budget: roomy(), ..QueryOptions::default() });
    assert_eq!(plain, hooked, "step hooks changed the answer of {query}");
    plain
}

/// Rows as a sorted set, for queries without ORDER BY.
fn rows(query: &str) -> BTreeSet<Vec<String>> {
    ordered(query).into_iter().collect()
}

fn set(rows: &[&[&str]]) -> BTreeSet<Vec<String>> {
    rows.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect()
}

fn ask(query: &str) -> bool {
    let store = store();
    let answers: Vec<bool> = [QueryOptions::default(), QueryOptions { budget: roomy(), ..QueryOptions::default() }]
        .iter()
        .map(|options| match run(&store, query, options).unwrap() {
            Answer::Boolean(value) => value,
            _ => panic!("not an ASK"),
        })
        .collect();
    assert_eq!(answers[0], answers[1]);
    answers[0]
}

fn graph(query: &str) -> BTreeSet<String> {
    let store = store();
    let mut results = Vec::new();
    for options in [QueryOptions::default(), QueryOptions { budget: roomy(), ..QueryOptions::default() }] {
        let Answer::Graph(triples) = run(&store, query, &options).unwrap() else { panic!("not a graph") };
        results.push(triples.map(|t| t.unwrap().to_string().replace("http://example.org/", ":")).collect::<BTreeSet<_>>());
    }
    assert_eq!(results[0], results[1]);
    results.pop().unwrap()
}

#[test]
fn basic_graph_pattern() {
    assert_eq!(rows("SELECT ?n WHERE { ?p a :Person ; :name ?n }"), set(&[&["\"Alice\""], &["\"Bob\""], &["\"Carol\"@en"]]));
    assert_eq!(rows("SELECT * WHERE { ?s :likes ?o }"), BTreeSet::new(), "named graphs are not in the default graph");
}

#[test]
fn optional() {
    assert_eq!(
        rows("SELECT ?p ?a WHERE { ?p a :Person OPTIONAL { ?p :age ?a } }"),
        set(&[&["<:alice>", "\"030\"^^<http://www.w3.org/2001/XMLSchema#integer>"], &["<:bob>", "\"25\"^^<http://www.w3.org/2001/XMLSchema#integer>"], &["<:carol>", ""]])
    );
    assert_eq!(rows("SELECT ?p ?f WHERE { ?p a :Person OPTIONAL { ?p :knows ?f FILTER(?f = :alice) } }"), set(&[&["<:alice>", ""], &["<:bob>", ""], &["<:carol>", "<:alice>"]]));
}

#[test]
fn union_and_minus() {
    assert_eq!(rows("SELECT ?x WHERE { { ?x a :Robot } UNION { ?x :value ?v } }"), set(&[&["<:dave>"], &["<:n1>"], &["<:n2>"]]));
    assert_eq!(rows("SELECT ?p WHERE { ?p a :Person MINUS { ?p :knows :carol } }"), set(&[&["<:carol>"]]));
}

#[test]
fn filter_and_exists() {
    assert_eq!(rows("SELECT ?p WHERE { ?p :age ?a FILTER(?a > 26) }"), set(&[&["<:alice>"]]), "030 compares as 30");
    assert_eq!(rows("SELECT ?p WHERE { ?p :name ?n FILTER(LANG(?n) = 'en') }"), set(&[&["<:carol>"]]));
    assert_eq!(rows("SELECT ?p WHERE { ?p a :Person FILTER EXISTS { ?p :age ?a } }"), set(&[&["<:alice>"], &["<:bob>"]]));
    assert_eq!(rows("SELECT ?p WHERE { ?p a :Person FILTER NOT EXISTS { ?x :knows ?p . ?x :age 25 } }"), set(&[&["<:alice>"], &["<:bob>"]]));
}

#[test]
fn bind_and_values_join_with_stored_terms() {
    assert_eq!(rows("SELECT ?n WHERE { BIND(:bob AS ?p) ?p :name ?n }"), set(&[&["\"Bob\""]]));
    // A computed string equal to a stored one is the stored term.
    assert_eq!(rows("SELECT ?p WHERE { BIND(CONCAT('Al', 'ice') AS ?n) ?p :name ?n }"), set(&[&["<:alice>"]]));
    assert_eq!(rows("SELECT ?p WHERE { ?p :name ?n . BIND(STR(?n) AS ?s) FILTER(?s = 'Carol') }"), set(&[&["<:carol>"]]));
    assert_eq!(rows("SELECT ?p ?n WHERE { VALUES ?n { 'Bob' 'Nobody' \"Carol\"@en } ?p :name ?n }"), set(&[&["<:bob>", "\"Bob\""], &["<:carol>", "\"Carol\"@en"]]));
    assert_eq!(rows("SELECT ?x WHERE { VALUES ?x { :zed } }"), set(&[&["<:zed>"]]), "a constant absent from the data");
}

#[test]
fn subquery_group_by_having() {
    assert_eq!(
        rows("SELECT ?p ?c WHERE { ?p a :Person { SELECT ?p (COUNT(?f) AS ?c) WHERE { ?p :knows ?f } GROUP BY ?p } }"),
        set(&[
            &["<:alice>", "\"2\"^^<http://www.w3.org/2001/XMLSchema#integer>"],
            &["<:bob>", "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>"],
            &["<:carol>", "\"1\"^^<http://www.w3.org/2001/XMLSchema#integer>"]
        ])
    );
    assert_eq!(rows("SELECT ?p WHERE { ?p :knows ?f } GROUP BY ?p HAVING (COUNT(?f) > 1)"), set(&[&["<:alice>"]]));
    assert_eq!(
        rows("SELECT (SUM(?a) AS ?s) (MIN(?a) AS ?lo) (MAX(?a) AS ?hi) (AVG(?a) AS ?m) (COUNT(DISTINCT ?p) AS ?c) WHERE { ?p :age ?a }"),
        set(&[&[
            "\"55\"^^<http://www.w3.org/2001/XMLSchema#integer>",
            "\"25\"^^<http://www.w3.org/2001/XMLSchema#integer>",
            // MAX returns one of the group's terms, in its stored form.
            "\"030\"^^<http://www.w3.org/2001/XMLSchema#integer>",
            "\"27.5\"^^<http://www.w3.org/2001/XMLSchema#decimal>",
            "\"2\"^^<http://www.w3.org/2001/XMLSchema#integer>"
        ]])
    );
    assert_eq!(rows("SELECT (GROUP_CONCAT(?n; SEPARATOR='|') AS ?all) WHERE { SELECT ?n WHERE { ?p a :Person ; :name ?n } ORDER BY ?n }"), set(&[&["\"Alice|Bob|Carol\""]]));
}

#[test]
fn order_distinct_slice() {
    assert_eq!(ordered("SELECT ?n WHERE { ?p :name ?n } ORDER BY DESC(STR(?n))"), [["\"Dave\""], ["\"Carol\"@en"], ["\"Bob\""], ["\"Alice\""]]);
    assert_eq!(ordered("SELECT ?n WHERE { ?p :name ?n } ORDER BY STR(?n) LIMIT 2 OFFSET 1"), [["\"Bob\""], ["\"Carol\"@en"]]);
    assert_eq!(ordered("SELECT DISTINCT ?t WHERE { ?s a ?t } ORDER BY ?t"), [["<:Person>"], ["<:Robot>"]]);
    assert_eq!(ordered("SELECT REDUCED ?t WHERE { ?s a :Robot . ?s a ?t }"), [["<:Robot>"]]);
}

#[test]
fn property_paths() {
    assert_eq!(rows("SELECT ?x WHERE { :bob :knows+ ?x }"), set(&[&["<:alice>"], &["<:bob>"], &["<:carol>"]]));
    assert_eq!(rows("SELECT ?x WHERE { :dave :knows* ?x }"), set(&[&["<:dave>"]]));
    assert_eq!(rows("SELECT ?x WHERE { :carol ^:knows ?x }"), set(&[&["<:alice>"], &["<:bob>"]]));
    assert_eq!(rows("SELECT ?n WHERE { :bob :knows/:name ?n }"), set(&[&["\"Carol\"@en"]]));
    assert_eq!(rows("SELECT ?x WHERE { :dave :knows? ?x }"), set(&[&["<:dave>"]]));
    assert_eq!(rows("SELECT ?o WHERE { :dave !(:name) ?o }"), set(&[&["<:Robot>"]]));
    assert_eq!(rows("SELECT ?x WHERE { :alice (:knows|:likes) ?x }"), set(&[&["<:bob>"], &["<:carol>"]]));
}

#[test]
fn graphs() {
    assert_eq!(rows("SELECT ?g ?s WHERE { GRAPH ?g { ?s :likes :pizza } }"), set(&[&["<:g1>", "<:alice>"], &["<:g2>", "<:carol>"]]));
    assert_eq!(rows("SELECT ?s WHERE { GRAPH :g1 { ?s :likes ?o } }"), set(&[&["<:alice>"], &["<:bob>"]]));
    assert_eq!(rows("SELECT ?g WHERE { GRAPH ?g { } }"), set(&[&["<:g1>"], &["<:g2>"]]));
    assert_eq!(rows("SELECT ?s WHERE { GRAPH :nope { ?s ?p ?o } }"), BTreeSet::new());
}

#[test]
fn from_and_from_named() {
    assert_eq!(rows("SELECT ?s ?o FROM :g1 WHERE { ?s :likes ?o }"), set(&[&["<:alice>", "<:pizza>"], &["<:bob>", "<:pasta>"]]));
    assert_eq!(rows("SELECT ?s FROM :g1 FROM :g2 WHERE { ?s :likes :pizza }"), set(&[&["<:alice>"], &["<:carol>"]]));
    assert_eq!(rows("SELECT ?g ?s FROM NAMED :g2 WHERE { GRAPH ?g { ?s :likes ?o } }"), set(&[&["<:g2>", "<:carol>"]]));
    assert_eq!(rows("SELECT ?s FROM NAMED :g2 WHERE { ?s a :Robot }"), BTreeSet::new(), "FROM NAMED alone leaves the default graph empty");
}

#[test]
fn protocol_dataset_replaces_the_query_dataset() {
    let store = store();
    let g2 = NamedNode::new("http://example.org/g2").unwrap();
    let options = QueryOptions { default_graphs: vec![g2.clone()], ..QueryOptions::default() };
    assert_eq!(rows_with(&store, "SELECT ?s FROM :g1 WHERE { ?s :likes ?o }", &options), [["<:carol>"]]);
    let options = QueryOptions { named_graphs: vec![g2], ..QueryOptions::default() };
    assert_eq!(rows_with(&store, "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g", &options), [["<:g2>"]]);
}

#[test]
fn ask_construct_describe() {
    assert!(ask("ASK { :alice :knows :bob }"));
    assert!(!ask("ASK { :bob :knows :alice }"));
    assert_eq!(graph("CONSTRUCT { ?b :knownBy ?a } WHERE { ?a :knows ?b FILTER(?a = :bob) }"), ["<:carol> <:knownBy> <:bob>".to_owned()].into());
    assert_eq!(graph("CONSTRUCT WHERE { :n1 ?p ?o }"), ["<:n1> <:value> \"01\"^^<http://www.w3.org/2001/XMLSchema#integer>".to_owned()].into());
    assert_eq!(graph("DESCRIBE :dave"), ["<:dave> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <:Robot>".to_owned(), "<:dave> <:name> \"Dave\"".to_owned()].into());
}

#[test]
fn lexical_forms_are_kept() {
    assert_eq!(rows("SELECT ?v WHERE { :n1 :value ?v }"), set(&[&["\"01\"^^<http://www.w3.org/2001/XMLSchema#integer>"]]));
    assert_eq!(rows("SELECT ?x WHERE { ?x :value \"01\"^^xsd:integer }"), set(&[&["<:n1>"]]));
    assert_eq!(rows("SELECT ?x WHERE { ?x :value 1 }"), BTreeSet::new(), "1 and 01 are different terms");
    assert_eq!(rows("SELECT ?x WHERE { ?x :value ?v FILTER(?v = 1) }"), set(&[&["<:n1>"]]), "but equal values");
    assert_eq!(rows("SELECT ?w WHERE { :n2 :value ?v BIND(?v AS ?w) }"), set(&[&["\"1.50\"^^<http://www.w3.org/2001/XMLSchema#decimal>"]]));
    let store = store();
    let answer = run(&store, "SELECT ?v WHERE { :n1 :value ?v }", &QueryOptions::default()).unwrap();
    let json = String::from_utf8(write_answer(answer, ResultFormat::Json, Vec::new()).unwrap()).unwrap();
    assert!(json.contains(r#""value":"01""#), "{json}");
}

/// Numbers read as values and handed back (SAMPLE, MIN, MAX) keep the
/// form stored, canonical or not; filters on them answer as spareval does.
#[test]
fn numbers_keep_their_stored_form_through_aggregates() {
    let trig = r#"PREFIX : <http://example.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
        :a :n "030"^^xsd:integer , "+7"^^xsd:integer , "-0"^^xsd:integer , "25"^^xsd:integer , "-3"^^xsd:integer ,
              "-"^^xsd:integer , "99999999999999999999999"^^xsd:integer , "4.50"^^xsd:decimal , "12"^^xsd:int ."#;
    let store = Store::open(fixture::from_trig(trig), 1 << 20).unwrap();
    let samples = rows_with(&store, "SELECT ?n (SAMPLE(?n) AS ?s) (MIN(?n) AS ?min) WHERE { :a :n ?n } GROUP BY ?n", &QueryOptions::default());
    assert_eq!(samples.len(), 9);
    for row in &samples {
        assert!(row[1] == row[0] && row[2] == row[0], "{row:?}");
    }
    let max = rows_with(&store, "SELECT (MAX(?n) AS ?m) WHERE { :a :n ?n FILTER(DATATYPE(?n) = xsd:integer && ?n < 30) }", &QueryOptions::default());
    assert_eq!(max, [["\"25\"^^<http://www.w3.org/2001/XMLSchema#integer>"]]);
    for query in ["SELECT ?n WHERE { :a :n ?n FILTER(?n > 0) }", "SELECT ?n WHERE { :a :n ?n FILTER(?n <= -0) }", "SELECT ?n WHERE { :a :n ?n FILTER(?n = 7) }"] {
        let expected = spareval_rows(trig, query);
        assert!(!expected.is_empty(), "{query}");
        assert_eq!(rows_with(&store, query, &QueryOptions::default()).into_iter().collect::<BTreeSet<_>>(), expected, "{query}");
    }
}

#[test]
fn syntax_errors_have_a_position() {
    let error = parse_query("SELECT ?x\n\tWHRE { ?x ?y ?z }", None).unwrap_err();
    let QueryError::Syntax(syntax) = &error else { panic!("{error:?}") };
    let location = syntax.location().unwrap();
    assert_eq!((location.line, location.column, location.offset), (1, 6, 16));
    assert!(error.to_string().starts_with("invalid query at line 2 column 7: expected"), "{error}");
    assert_eq!(syntax.pointer().unwrap(), "\tWHRE { ?x ?y ?z }\n\t     ^", "the caret lines up under a tab");
    assert!(matches!(parse_query("SELECT * WHERE { ?s ?p ?o }", Some("not an iri")), Err(QueryError::Syntax(_))));
    // An error at the end, after blank lines, points past the last text.
    let QueryError::Syntax(at_end) = parse_query("SELECT * WHERE { ?s ?p ?o \n\n", None).unwrap_err() else { panic!() };
    assert_eq!(at_end.pointer().unwrap(), "SELECT * WHERE { ?s ?p ?o \n                         ^");
}

#[test]
fn unsupported_service() {
    let store = store();
    let error = run(&store, "SELECT * WHERE { SERVICE <http://example.com/sparql> { ?s ?p ?o } }", &QueryOptions::default()).and_then(|answer| match answer {
        Answer::Solutions(mut s) => s.next().unwrap().map(|_| ()),
        _ => Ok(()),
    });
    assert!(matches!(error, Err(QueryError::Unsupported { .. })), "{error:?}");
}

/// A source that answers [`ReadError::Missing`] for ranges not yet loaded,
/// as an asynchronous host's recorder would.
struct LazySource {
    file: Vec<u8>,
    loaded: RefCell<Vec<ByteRange>>,
}

impl RangeSource for LazySource {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        let loaded = self.loaded.borrow();
        let missing: Vec<ByteRange> = ranges.iter().copied().filter(|r| r.offset != 0 && !loaded.contains(r)).collect();
        if !missing.is_empty() {
            return Err(ReadError::Missing(missing));
        }
        self.file.read_ranges(ranges)
    }
}

fn names(answer: Answer<'_>) -> Result<BTreeSet<String>, QueryError> {
    let Answer::Solutions(solutions) = answer else { panic!() };
    solutions.map(|s| s.map(|s| s.get("n").unwrap().to_string())).collect()
}

#[test]
fn missing_ranges_stop_evaluation_and_a_rerun_completes_it() {
    let source = LazySource { file: fixture::from_trig(DATA), loaded: RefCell::new(Vec::new()) };
    let store = Store::open(&source, 1 << 20).unwrap();
    // The FILTER decodes names: spareval drops errors raised there, the meter must not.
    let query = "SELECT ?n WHERE { ?p a :Person ; :name ?n FILTER(STRSTARTS(STR(?n), 'C') || ?p = :alice) }";
    let mut rounds = 0;
    let result = loop {
        rounds += 1;
        assert!(rounds < 50, "no progress");
        match run(&store, query, &QueryOptions::default()).and_then(names) {
            Err(error) => {
                let ranges = error.missing_ranges().unwrap_or_else(|| panic!("{error}"));
                source.loaded.borrow_mut().extend_from_slice(ranges);
            }
            Ok(names) => break names,
        }
    };
    assert!(rounds > 2, "{rounds} rounds");
    assert_eq!(result, ["\"Alice\"".to_owned(), "\"Carol\"@en".to_owned()].into());
}

#[test]
fn missing_dictionary_blocks_inside_filter_are_not_swallowed() {
    let file = fixture::from_trig(DATA);
    let store_all = Store::open(file.clone(), 1 << 20).unwrap();
    let dictionary = store_all.index().dictionary.entries.iter().map(|e| e.range).collect::<Vec<_>>();
    let everything_but_dictionary: Vec<ByteRange> = (0..6).flat_map(|p| store_all.index().permutations[p].entries.iter().map(|e| e.range)).collect();
    let source = LazySource { file, loaded: RefCell::new(everything_but_dictionary) };
    let store = Store::open(&source, 1 << 20).unwrap();
    // Warm the ids of the query's constants so the scan itself succeeds.
    for term in ["http://example.org/name", "http://example.org/Person", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"] {
        let encoded = encode_term(oxrdf::NamedNodeRef::new_unchecked(term));
        let block = store_all.dictionary_for_term(&encoded).unwrap().unwrap();
        source.loaded.borrow_mut().push(dictionary[block.number]);
    }
    for budget in [Budget::unlimited(), roomy()] {
        let error = run(&store, "SELECT ?n WHERE { ?p :name ?n FILTER(STRSTARTS(STR(?n), 'Q')) }", &QueryOptions { budget, ..QueryOptions::default() }).and_then(names).unwrap_err();
        assert!(error.missing_ranges().is_some(), "{error}");
    }
}

/// 30 nodes, each with `:a` and `:b` edges to the next 10 (cyclically).
fn dense_store() -> Store<Vec<u8>> {
    let mut trig = String::from("@prefix : <http://example.org/> .\n");
    for i in 0..30 {
        for j in 1..=10 {
            trig.push_str(&format!(":n{i} :a :n{} ; :b :n{} .\n", (i + j) % 30, (i + 2 * j) % 30));
        }
        trig.push_str(&format!(":n{i} :label \"{}\" .\n", "a".repeat(20 + i)));
    }
    Store::open(fixture::from_trig(&trig), 1 << 24).unwrap()
}

fn budget_error(store: &Store<Vec<u8>>, query: &str, budget: Budget) -> QueryError {
    let result = run(store, query, &QueryOptions { budget, ..QueryOptions::default() }).and_then(|answer| {
        match answer {
            Answer::Solutions(solutions) => {
                for solution in solutions {
                    solution?;
                }
            }
            Answer::Graph(triples) => {
                for triple in triples {
                    triple?;
                }
            }
            Answer::Boolean(_) => {}
        }
        Ok(())
    });
    result.unwrap_err()
}

fn steps(max_steps: u64) -> Budget {
    Budget { max_steps, ..Budget::unlimited() }
}

#[test]
fn cartesian_product_bomb_stops_on_steps() {
    let store = dense_store();
    // 630³ = 250 million rows, counted by an aggregate that never outputs them.
    let error = budget_error(&store, "SELECT (COUNT(*) AS ?c) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", steps(200_000));
    assert!(matches!(error, QueryError::Budget { limit: Limit::Steps, max: 200_000 }), "{error}");
    assert_eq!(error.to_string(), "query exceeded the limit of 200000 evaluation steps");
    let error = budget_error(&store, "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }", Budget { max_rows_produced: 1000, ..Budget::unlimited() });
    assert_eq!(error.to_string(), "query exceeded the limit of 1000 result rows");
    let error = budget_error(&store, "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a", steps(100_000));
    assert!(matches!(error, QueryError::Budget { limit: Limit::Steps, .. }), "{error}");
}

#[test]
fn transitive_path_on_a_dense_cyclic_graph_stops() {
    let store = dense_store();
    let error = budget_error(&store, "SELECT (COUNT(*) AS ?c) WHERE { ?x (:a|:b)* ?y . ?y (:a|:b)* ?z . ?z (:a|:b)* ?w }", steps(100_000));
    assert!(matches!(error, QueryError::Budget { limit: Limit::Steps, .. }), "{error}");
    let error = budget_error(&store, "SELECT * WHERE { ?x (:a|:b)* ?y }", Budget { max_quads_scanned: 5_000, ..Budget::unlimited() });
    assert_eq!(error.to_string(), "query exceeded the limit of 5000 quads scanned");
}

#[test]
fn huge_group_by_stops() {
    let store = dense_store();
    let error = budget_error(&store, "SELECT ?a ?d ?g (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } GROUP BY ?a ?d ?g", steps(100_000));
    assert!(matches!(error, QueryError::Budget { limit: Limit::Steps, .. }), "{error}");
    let error = budget_error(&store, "SELECT (GROUP_CONCAT(?l) AS ?all) WHERE { ?a :label ?l . ?b :label ?m }", Budget { max_computed_bytes: 10_000, ..Budget::unlimited() });
    assert!(matches!(error, QueryError::Budget { limit: Limit::ComputedBytes, .. }), "{error}");
}

/// `max_computed_bytes` bounds the values a query builds and holds: the same
/// value computed on every row (CLDR's `GROUP BY (LANG(?l))` over a million
/// labels) is built once and shared, so it counts once; distinct values
/// still count each.
#[test]
fn a_value_computed_on_every_row_counts_once() {
    let mut trig = String::from("@prefix : <http://example.org/> .\n");
    for i in 0..3000 {
        let language = ["en", "de", "fr"][i % 3];
        trig.push_str(&format!(":c{i} :label \"label {i}\"@{language} .\n"));
    }
    let store = Store::open(fixture::from_trig(&trig), 1 << 24).unwrap();
    // "en" as a simple literal counts 2 + 39 bytes (its datatype's IRI): 123,000 over 3,000 rows.
    let small = || QueryOptions { budget: Budget { max_computed_bytes: 1_000, ..Budget::unlimited() }, ..QueryOptions::default() };
    let query = "SELECT ?language (COUNT(*) AS ?n) WHERE { ?c :label ?l } GROUP BY (LANG(?l) AS ?language) ORDER BY ?language";
    let rows = rows_with(&store, query, &small());
    let count = "\"1000\"^^<http://www.w3.org/2001/XMLSchema#integer>";
    assert_eq!(rows, [["\"de\"", count], ["\"en\"", count], ["\"fr\"", count]].map(|r| r.map(str::to_owned).to_vec()));
    let query = "SELECT ?language (COUNT(*) AS ?n) WHERE { ?c :label ?l BIND(LANG(?l) AS ?language) } GROUP BY ?language";
    assert_eq!(rows_with(&store, query, &small()).len(), 3);
    // A new value per row: 3,000 of them, each counted.
    let error = budget_error(&store, "SELECT (COUNT(?v) AS ?n) WHERE { ?c :label ?l BIND(CONCAT(?l, \"!\") AS ?v) }", small().budget);
    assert!(matches!(error, QueryError::Budget { limit: Limit::ComputedBytes, max: 1_000 }), "{error}");
}

#[test]
fn catastrophic_regex_stops() {
    let store = dense_store();
    // Nested quantifiers over long runs of 'a', with the pattern rebuilt per row.
    let query = "SELECT (COUNT(*) AS ?c) WHERE { ?x :label ?l . ?y :label ?m . ?z ?p ?o FILTER(REGEX(CONCAT(?l, ?m, 'b'), CONCAT('^(a+', STR(?p), '?)+$'))) }";
    let error = budget_error(&store, query, steps(50_000));
    assert!(matches!(error, QueryError::Budget { limit: Limit::Steps, .. }), "{error}");
}

#[test]
fn deadline_callback_stops_evaluation() {
    let store = dense_store();
    let polls = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&polls);
    let budget = Budget { should_stop: Some(Arc::new(move || (counter.fetch_add(1, Ordering::Relaxed) >= 10).then_some(Limit::Deadline))), ..Budget::unlimited() };
    let error = budget_error(&store, "SELECT (COUNT(*) AS ?c) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", budget);
    assert_eq!(error.to_string(), "query exceeded its time limit");
    assert_eq!(polls.load(Ordering::Relaxed), 11);
}

#[test]
fn cpu_callback_names_the_cpu_limit() {
    let store = dense_store();
    let polls = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&polls);
    let budget = Budget { should_stop: Some(Arc::new(move || (counter.fetch_add(1, Ordering::Relaxed) >= 3).then_some(Limit::Cpu))), ..Budget::unlimited() };
    let error = budget_error(&store, "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }", budget);
    assert!(matches!(error, QueryError::Budget { limit: Limit::Cpu, max: 0 }), "{error}");
    assert_eq!(error.to_string(), "query stopped near the CPU time limit of a request");
    assert_eq!(polls.load(Ordering::Relaxed), 4);
}

#[test]
fn step_hooks_keep_for_loop_joins() {
    let store = dense_store();
    for budget in [Budget::unlimited(), roomy()] {
        let Answer::Solutions(mut solutions) = run(&store, "SELECT ?y WHERE { :n0 :a ?x . ?x :a ?y }", &QueryOptions { budget, ..QueryOptions::default() }).unwrap() else { panic!() };
        let count = solutions.by_ref().filter(|s| s.is_ok()).count();
        assert_eq!(count, 100);
        // 10 edges, then 10 lookups of 10: a hash join would scan all 300 :a quads.
        assert!(solutions.usage().quads_scanned <= 110, "{:?}", solutions.usage());
        assert_eq!(solutions.usage().rows_produced, 100);
    }
}

#[test]
fn every_result_format_streams() {
    let store = store();
    let select = "SELECT ?p ?n WHERE { ?p :name ?n } ORDER BY ?p";
    for (format, needle) in [(ResultFormat::Json, "\"bindings\""), (ResultFormat::Xml, "<sparql"), (ResultFormat::Csv, "p,n\r\n"), (ResultFormat::Tsv, "?p\t?n\n")] {
        let answer = run(&store, select, &QueryOptions::default()).unwrap();
        let text = String::from_utf8(write_answer(answer, format, Vec::new()).unwrap()).unwrap();
        assert!(text.contains(needle), "{format}: {text}");
        assert!(text.contains("Carol"), "{format}: {text}");
    }
    let construct = "CONSTRUCT WHERE { :alice ?p ?o }";
    for (format, needle) in [
        (ResultFormat::NTriples, "<http://example.org/alice> <http://example.org/age> \"030\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"),
        (ResultFormat::Turtle, "<http://example.org/age> 030 ;"),
        (ResultFormat::NQuads, "<http://example.org/alice> <http://example.org/name> \"Alice\" .\n"),
        (ResultFormat::TriG, "<http://example.org/alice>"),
        (ResultFormat::JsonLd, "\"@id\""),
        (ResultFormat::RdfXml, "rdf:RDF"),
    ] {
        let answer = run(&store, construct, &QueryOptions::default()).unwrap();
        let text = String::from_utf8(write_answer(answer, format, Vec::new()).unwrap()).unwrap();
        assert!(text.contains(needle), "{format}: {text}");
    }
    let answer = run(&store, "ASK { :alice :knows :bob }", &QueryOptions::default()).unwrap();
    assert_eq!(String::from_utf8(write_answer(answer, ResultFormat::Json, Vec::new()).unwrap()).unwrap(), r#"{"head":{},"boolean":true}"#);
    let answer = run(&store, select, &QueryOptions::default()).unwrap();
    let error = write_answer(answer, ResultFormat::Turtle, Vec::new()).unwrap_err();
    assert_eq!(error.to_string(), "ttl cannot hold SELECT solutions; use json, xml, csv or tsv");
}
