//! `rete search` against files `rete build` wrote (issue 16): the JSON
//! contract, ranking, languages, several words, prefix lists on a file large
//! enough to need them, the rounds a search costs, and the flags that shape
//! the index (`--no-search`, `--label-predicate`, `card.toml`).

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn rete(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rete")).args(args).current_dir(dir).output().unwrap()
}

fn json(output: &Output) -> Value {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn search(dir: &Path, file: &str, query: &str, extra: &[&str]) -> Value {
    let mut args = vec!["search", file, query, "--json"];
    args.extend_from_slice(extra);
    json(&rete(&args, dir))
}

fn iris(answer: &Value) -> Vec<String> {
    answer["results"].as_array().unwrap().iter().map(|r| r["iri"].as_str().unwrap().to_owned()).collect()
}

/// People, places and works; Lincoln the person is linked to most.
const PEOPLE: &str = r#"@prefix : <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
:lincoln rdfs:label "Abraham Lincoln"@en , "Abraham Lincoln"@fr ; skos:altLabel "Honest Abe"@en .
:lincolnshire rdfs:label "Lincolnshire"@en .
:lincoln-ne skos:prefLabel "Lincoln, Nebraska"@en .
:melisande foaf:name "Mélisande" .
:linc-bank rdfs:label "LINC Bank" .
:w1 :about :lincoln . :w2 :about :lincoln . :w3 :about :lincoln . :w4 :about :lincoln .
:w5 :about :lincoln-ne .
_:b rdfs:label "Lincoln blank node" .
:lincoln :code "lincoln-code" .
"#;

fn people(dir: &Path) {
    std::fs::write(dir.join("people.ttl"), PEOPLE).unwrap();
    let output = rete(&["build", "people.ttl", "-o", "people.rete", "--quiet"], dir);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn prefix_search_answers_the_json_contract_best_first() {
    let dir = tempfile::tempdir().unwrap();
    people(dir.path());
    let answer = search(dir.path(), "people.rete", "linc", &[]);
    assert_eq!(answer["query"], "linc");
    let found = iris(&answer);
    // The person (4 links in) first; every IRI subject whose label has a word starting with "linc", once;
    // the blank node and the non-label :code are not indexed.
    assert_eq!(found[0], "http://example.org/lincoln");
    let mut sorted = found.clone();
    sorted.sort();
    assert_eq!(sorted, ["http://example.org/linc-bank", "http://example.org/lincoln", "http://example.org/lincoln-ne", "http://example.org/lincolnshire"]);
    let first = &answer["results"][0];
    assert_eq!(first["label"], "Abraham Lincoln");
    assert!(first["lang"] == "en" || first["lang"] == "fr", "{first}");
    assert!(first["score"].as_u64().unwrap() > answer["results"][1]["score"].as_u64().unwrap());
    assert_eq!(answer["cut"], false);
    for member in ["rounds", "requests", "bytes"] {
        assert!(answer[member].as_u64().unwrap() >= 1, "{member}: {answer}");
    }
    // A small file lies in the first read: one round in all.
    assert_eq!(answer["rounds"], 1, "{answer}");
}

#[test]
fn words_languages_diacritics_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    people(dir.path());
    let d = dir.path();
    assert_eq!(iris(&search(d, "people.rete", "abr LINC", &[])), ["http://example.org/lincoln"], "every word must match, as a prefix, any case");
    assert_eq!(iris(&search(d, "people.rete", "lincoln nebr", &[])), ["http://example.org/lincoln-ne"]);
    assert!(iris(&search(d, "people.rete", "abraham nebraska", &[])).is_empty(), "words of two different labels do not match together");
    assert_eq!(iris(&search(d, "people.rete", "melisande", &[])), ["http://example.org/melisande"], "diacritics are ignored");
    assert_eq!(iris(&search(d, "people.rete", "Mélis", &[])), ["http://example.org/melisande"]);
    assert_eq!(iris(&search(d, "people.rete", "honest", &[])), ["http://example.org/lincoln"], "skos:altLabel is a label");
    let french = search(d, "people.rete", "linc", &["--lang", "fr"]);
    assert_eq!(iris(&french), ["http://example.org/lincoln"]);
    assert_eq!(french["results"][0]["lang"], "fr");
    let untagged = search(d, "people.rete", "linc", &["--lang", ""]);
    assert_eq!(iris(&untagged), ["http://example.org/linc-bank"]);
    assert_eq!(untagged["results"][0]["lang"], "");
    assert!(iris(&search(d, "people.rete", "linc", &["--lang", "de"])).is_empty());
    assert_eq!(iris(&search(d, "people.rete", "linc", &["--limit", "2"])).len(), 2);
    assert!(iris(&search(d, "people.rete", "zebra", &[])).is_empty());
    assert!(iris(&search(d, "people.rete", "  …  ", &[])).is_empty(), "no word, no hit");
    let usage = rete(&["search", "people.rete", "linc", "--limit", "0"], d);
    assert_eq!(usage.status.code(), Some(2), "{}", String::from_utf8_lossy(&usage.stderr));
    let text = rete(&["search", "people.rete", "lincolnshire"], d);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("Lincolnshire@en  <http://example.org/lincolnshire>"), "{text}");
    assert!(text.contains("1 results; 1 rounds"), "{text}");
}

#[test]
fn no_search_label_predicates_and_card_toml() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("people.ttl"), PEOPLE).unwrap();
    assert!(rete(&["build", "people.ttl", "--no-search", "-o", "none.rete", "--quiet"], d).status.success());
    let output = rete(&["search", "none.rete", "linc"], d);
    assert_eq!(output.status.code(), Some(3));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("has no search index") && message.contains("--no-search"), "{message}");
    assert!(rete(&["build", "people.ttl", "--label-predicate", "http://example.org/code", "-o", "code.rete", "--quiet"], d).status.success());
    assert_eq!(iris(&search(d, "code.rete", "code", &[])), ["http://example.org/lincoln"]);
    // card.toml: label_predicates adds, search = false leaves the index out.
    std::fs::write(d.join("card.toml"), "label_predicates = [\"http://example.org/code\"]\n").unwrap();
    assert!(rete(&["build", "people.ttl", "-o", "toml.rete", "--quiet"], d).status.success());
    assert_eq!(iris(&search(d, "toml.rete", "code", &[])), ["http://example.org/lincoln"]);
    let inspect = json(&rete(&["inspect", "toml.rete", "--json"], d));
    let card = inspect["card"]["search"].clone();
    assert_eq!(card["labels"], 8, "{inspect}");
    assert!(card["label_predicates"].as_array().unwrap().iter().any(|p| p == "http://example.org/code"), "{card}");
    std::fs::write(d.join("card.toml"), "search = false\n").unwrap();
    assert!(rete(&["build", "people.ttl", "-o", "off.rete", "--quiet"], d).status.success());
    assert_eq!(rete(&["search", "off.rete", "linc"], d).status.code(), Some(3));
}

/// 40,000 items whose names share words: large enough for many posting
/// blocks and prefix lists, and for blocks past the first read.
fn items(dir: &Path) {
    let colours = ["red", "green", "blue", "yellow", "violet", "orange", "black", "white"];
    let mut text = String::from("@prefix : <http://example.org/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n");
    for i in 0..40_000 {
        text.push_str(&format!(":item{i} rdfs:label \"Item {i} {} tile{}\" .\n", colours[i % 8], i % 97));
        if i % 1000 == 7 {
            // A few items many others point to.
            for j in 0..50 {
                text.push_str(&format!(":ref{i}x{j} :cites :item{i} .\n"));
            }
        }
    }
    std::fs::write(dir.join("items.ttl"), text).unwrap();
    let output = rete(&["build", "items.ttl", "-o", "items.rete", "--quiet"], dir);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn large_prefixes_read_their_prefix_list_and_searches_stay_within_three_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    items(d);
    let inspect = String::from_utf8(rete(&["inspect", "items.rete"], d).stdout).unwrap();
    let blocks: u64 = inspect.lines().find(|l| l.contains("SEARCH BLOCKS")).and_then(|l| l.split_whitespace().rev().nth(1)?.parse().ok()).unwrap();
    assert!(blocks > 10, "{inspect}");
    // "i" and "item" start 40,000 labels: their prefix list, one block; the most cited items first.
    for query in ["i", "item", "it"] {
        let answer = search(d, "items.rete", query, &["--limit", "10"]);
        assert_eq!(answer["cut"], true, "{query}: only the best postings are listed");
        let found = iris(&answer);
        assert_eq!(found.len(), 10);
        assert!(found.iter().all(|iri| iri.ends_with('7')), "{query}: the cited items (…007, …1007, …) first: {found:?}");
        assert!(answer["rounds"].as_u64().unwrap() <= 3, "{answer}");
        assert!(answer["requests"].as_u64().unwrap() <= 1 + 1 + 20, "{answer}");
    }
    // A rare word: every hit, exact.
    let answer = search(d, "items.rete", "12345", &[]);
    assert_eq!(iris(&answer), ["http://example.org/item12345"]);
    assert_eq!(answer["cut"], false);
    let rounds = answer["rounds"].as_u64().unwrap();
    assert!((2..=3).contains(&rounds), "open, posting block, names (some may lie in the first read): {answer}");
    // Two words, one of them too common to intersect: checked on the labels' text.
    let answer = search(d, "items.rete", "item 3999", &[]);
    let mut found = iris(&answer);
    found.sort();
    assert_eq!(found, ["http://example.org/item3999", "http://example.org/item39990", "http://example.org/item39991", "http://example.org/item39992", "http://example.org/item39993", "http://example.org/item39994", "http://example.org/item39995", "http://example.org/item39996", "http://example.org/item39997", "http://example.org/item39998", "http://example.org/item39999"]);
    assert!(answer["rounds"].as_u64().unwrap() <= 3, "{answer}");
    // Two rare-enough words intersect on their postings: the 40,000 / 8 / 97 items that are both.
    let answer = search(d, "items.rete", "violet tile5", &["--limit", "1000"]);
    let found = iris(&answer);
    assert!(!found.is_empty());
    for iri in &found {
        let i: usize = iri.trim_start_matches("http://example.org/item").parse().unwrap();
        assert!(i % 8 == 4 && (i % 97).to_string().starts_with('5'), "{iri}");
    }
}

#[test]
fn sparql_text_query_is_answered_from_the_index() {
    let dir = tempfile::tempdir().unwrap();
    people(dir.path());
    let d = dir.path();
    let select = |query: &str| -> Vec<Vec<String>> {
        let answer = json(&rete(&["query", "people.rete", query], d));
        let vars: Vec<String> = answer["head"]["vars"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
        answer["results"]["bindings"].as_array().unwrap().iter().map(|row| vars.iter().map(|v| row[v]["value"].as_str().unwrap_or("").to_owned()).collect()).collect()
    };
    const PREFIXES: &str = "PREFIX text: <http://jena.apache.org/text#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> PREFIX skos: <http://www.w3.org/2004/02/skos/core#> PREFIX : <http://example.org/>\n";
    // Lucene's form: a word matches whole unless it ends with *.
    let rows = select(&format!("{PREFIXES}SELECT ?s WHERE {{ ?s text:query \"lincoln\" }} ORDER BY ?s"));
    assert_eq!(rows, [["http://example.org/lincoln"], ["http://example.org/lincoln-ne"]]);
    let rows = select(&format!("{PREFIXES}SELECT ?s WHERE {{ ?s text:query (\"linc*\" 10) }} ORDER BY ?s"));
    assert_eq!(rows.len(), 4);
    // A property keeps the hits whose label is a value of it; score and label come out; the rest of the pattern joins.
    let rows = select(&format!("{PREFIXES}SELECT ?s ?label ?n WHERE {{ (?s ?score ?label) text:query (skos:prefLabel \"linc*\") . {{ SELECT ?s (COUNT(?w) AS ?n) WHERE {{ ?w :about ?s }} GROUP BY ?s }} }}"));
    assert_eq!(rows, [["http://example.org/lincoln-ne", "Lincoln, Nebraska", "1"]]);
    let rows = select(&format!("{PREFIXES}SELECT ?s ?score WHERE {{ (?s ?score) text:query (rdfs:label \"linc*\" \"lang:fr\") }}"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], "http://example.org/lincoln");
    assert!(rows[0][1].parse::<f64>().unwrap() > 0.0);
    // Bad arguments are a clear error.
    let output = rete(&["query", "people.rete", &format!("{PREFIXES}SELECT ?s WHERE {{ ?s text:query (rdfs:label 10) }}")], d);
    assert_ne!(output.status.code(), Some(0));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("text:query needs the search text"), "{message}");
    // Over a file read in rounds (as the Worker and `rete query URL` do): the same rows.
    let cost = json(&rete(&["cost", "people.rete", &format!("{PREFIXES}SELECT ?s WHERE {{ ?s text:query \"abraham\" }}"), "--json"], d));
    assert!(cost["rounds"].as_u64().unwrap() <= 3, "{cost}");
}
