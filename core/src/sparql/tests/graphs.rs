//! CONSTRUCT and DESCRIBE give the triples spareval gives over an in-memory
//! `oxrdf::Dataset`, duplicates counted (issue 14): CONSTRUCT's duplicate
//! check runs on the dataset's terms (vendor/README.md change 13), templates
//! alone or overlapping, with stored and computed values and blank nodes;
//! DESCRIBE reads terms spread over many dictionary blocks through the store's
//! placed blocks, also when a small cache has let them go.

use super::*;

/// `:thing` with labels in 150 languages (one dictionary block or so each),
/// a few typed nodes and stored blank nodes.
fn data() -> String {
    let mut trig = String::from("PREFIX : <http://example.org/>\n");
    for i in 0..150u8 {
        let tag = format!("{}{}", char::from(b'a' + i / 26), char::from(b'a' + i % 26));
        trig.push_str(&format!(":thing :label \"name {i} of the thing\"@{tag} .\n"));
    }
    trig.push_str(
        r#":thing a :Thing ; :size 3 ; :part _:p1 , _:p2 .
_:p1 :label "part one" ; a :Part .
_:p2 :label "part two" ; a :Part .
:other a :Thing ; :label "other"@en ; :size "03"^^<http://www.w3.org/2001/XMLSchema#integer> .
:third a :Part ; :label "third"@en .
"#,
    );
    trig
}

/// The triples of a graph answer, blank nodes all written `_:` (their labels
/// differ between the two engines), sorted with duplicates kept.
fn counted(triples: impl Iterator<Item = oxrdf::Triple>) -> Vec<String> {
    let blank = |term: String| if term.starts_with("_:") { "_:".to_owned() } else { term };
    let mut lines: Vec<String> = triples
        .map(|t| format!("{} {} {}", blank(t.subject.to_string()), t.predicate, blank(t.object.to_string())).replace("http://example.org/", ":"))
        .collect();
    lines.sort();
    lines
}

fn spareval_graph(trig: &str, query: &str) -> Vec<String> {
    let dataset: oxrdf::Dataset = fixture::quads_of(trig).into_iter().collect();
    let query = SparqlParser::new().parse_query(&format!("{PREFIX}{query}")).unwrap();
    let spareval::QueryResults::Graph(triples) = spareval::QueryEvaluator::new().prepare(&query).execute(&dataset).unwrap() else { panic!("not a graph") };
    counted(triples.map(Result::unwrap))
}

fn rete_graph(store: &Store<Vec<u8>>, query: &str, options: &QueryOptions) -> Vec<String> {
    let Answer::Graph(triples) = run(store, query, options).unwrap() else { panic!("not a graph: {query}") };
    counted(triples.map(Result::unwrap))
}

const QUERIES: &[&str] = &[
    "DESCRIBE :thing",
    "DESCRIBE ?t WHERE { ?t a :Thing }",
    // Three templates, each alone (different constant predicates), one constant absent from the data.
    "PREFIX skos: <http://www.w3.org/2004/02/skos/core#> CONSTRUCT { ?t a skos:Concept ; skos:prefLabel ?l ; skos:broader ?c } WHERE { ?t a ?c ; :label ?l }",
    // Overlapping templates: `?t a :Thing` also comes out of `?t ?p ?o`, and `?t a ?c` with ?c bound to :Thing.
    "CONSTRUCT { ?t a :Thing . ?t ?p ?o . ?t a ?c } WHERE { ?t a :Thing ; ?p ?o BIND(:Thing AS ?c) }",
    // Computed values equal to stored terms (?k) and to each other (?m, ?n).
    "CONSTRUCT { ?t a ?c . ?t a ?k . ?t :tag ?m . ?t :tag ?n } WHERE { ?t a ?c BIND(IRI(STR(?c)) AS ?k) BIND(CONCAT(\"kind \", STR(?c)) AS ?m) BIND(CONCAT(\"kind \", STR(?c)) AS ?n) }",
    "CONSTRUCT { ?t :kind ?k } WHERE { ?t a ?c ; :label ?l BIND(IF(?c = :Part, \"part\", \"thing\") AS ?k) }",
    // Stored blank nodes in subject and object: every copy is kept, as upstream keeps them.
    "CONSTRUCT { ?b :in ?t . ?t :has ?b } WHERE { ?t :part ?b . ?x ?p ?o }",
    // Template blank nodes: fresh per solution, never duplicates.
    "CONSTRUCT { _:n :names ?t } WHERE { ?t :label ?l }",
    "CONSTRUCT { ?t :label ?l } WHERE { ?t :label ?l . ?u a ?c }",
];

#[test]
fn construct_and_describe_give_spareval_triples_with_duplicates_counted() {
    let trig = data();
    // Small dictionary blocks: the labels of `:thing` spread over many of them.
    let file = fixture::build_with(&fixture::quads_of(&trig), 16, 64);
    let blocks = Store::open(file.clone(), 1 << 20).unwrap().block_count(crate::read::Directory::Dictionary);
    assert!(blocks > 32, "more dictionary blocks than a term reader keeps: {blocks}");
    // A roomy cache, and one smaller than a block: every dictionary block
    // read is let go at once, so placed blocks must be read again.
    for cache_bytes in [1 << 20, 64] {
        let store = Store::open(file.clone(), cache_bytes).unwrap();
        for query in QUERIES {
            let expected = spareval_graph(&trig, query);
            assert!(!expected.is_empty(), "{query}");
            for options in [QueryOptions::default(), QueryOptions { budget: roomy(), ..QueryOptions::default() }] {
                // Twice: the second run finds the blocks the first placed.
                for _ in 0..2 {
                    assert_eq!(rete_graph(&store, query, &options), expected, "{query} (cache {cache_bytes} bytes)");
                }
            }
        }
    }
    // Spelled out: duplicates of blank-node triples are kept, others are not.
    let blanks = spareval_graph(&trig, QUERIES[6]);
    let triples = fixture::quads_of(&trig).len();
    assert_eq!(blanks.iter().filter(|t| t.starts_with("_: <:in> <:thing>")).count(), 2 * triples, "one per solution");
    let overlapping = spareval_graph(&trig, QUERIES[3]);
    assert_eq!(overlapping.iter().filter(|t| t.ends_with("<http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <:Thing>")).count(), 2);
}
