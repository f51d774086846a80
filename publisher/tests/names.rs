//! Names for IRIs (issue 16, core `search::names`) on files `rete build`
//! wrote: the label predicates' order and languages, prefixed names from the
//! card, the rounds a lookup costs, its bounds on a file with many labels,
//! and search hits' types (`rete search --types`).

use rete_core::read::{BlockCache, RoundOptions, open_in_rounds, run_in_rounds};
use rete_core::search::names::{self, MAX_PSO_BLOCKS, MAX_TERM_BLOCKS, Names, NamesOutput};
use rete_core::{RangeSource, Store};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn build(dir: &Path, ttl: &str) -> Vec<u8> {
    std::fs::write(dir.join("data.ttl"), ttl).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rete")).args(["build", "data.ttl", "-o", "data.rete", "--quiet"]).current_dir(dir).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    std::fs::read(dir.join("data.rete")).unwrap()
}

fn people() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/worker/fixtures/names.ttl")).unwrap()
}

const P: &str = "http://example.org/people/";

/// Names `iris` as a remote host would, in rounds; returns the names and the rounds after the open.
fn name(file: &[u8], iris: &[&str], lang: Option<&str>) -> (Names, u64) {
    let iris: Vec<String> = iris.iter().map(|s| (*s).to_owned()).collect();
    let fetch = |ranges: &[rete_core::ByteRange]| file.read_ranges(ranges);
    let (store, _) = open_in_rounds(fetch, BlockCache::new(64 << 20)).unwrap();
    let (names, stats) = run_in_rounds(&store, &RoundOptions::default(), fetch, |store| names::name_iris(store, &iris, lang)).unwrap();
    (names.unwrap(), stats.rounds)
}

#[test]
fn labels_by_predicate_order_and_language() {
    let dir = tempfile::tempdir().unwrap();
    let file = build(dir.path(), &people());
    let (names, _) = name(&file, &[&format!("{P}ada"), &format!("{P}charles"), &format!("{P}london"), &format!("{P}unnamed"), "http://xmlns.com/foaf/0.1/knows"], None);
    let label = |iri: &str| names.label(iri).map(|l| (l.text.as_str(), l.lang.as_str()));
    assert_eq!(label(&format!("{P}ada")), Some(("Ada Lovelace", "en")));
    // skos:prefLabel before rdfs:label.
    assert_eq!(label(&format!("{P}charles")), Some(("Charles Babbage", "en")));
    // English before French, whatever the order in the data.
    assert_eq!(label(&format!("{P}london")), Some(("London", "en")));
    assert_eq!(label(&format!("{P}unnamed")), None);
    // Predicates: their prefixed name first, from the card's namespaces.
    assert_eq!(names.predicate("http://xmlns.com/foaf/0.1/knows").as_deref(), Some("foaf:knows"));
    assert_eq!(names.resource("http://xmlns.com/foaf/0.1/knows").as_deref(), Some("knows"));
    assert!(!names.cut);

    // A language asked for wins; one nobody wrote falls back to English.
    let (german, _) = name(&file, &[&format!("{P}ada"), &format!("{P}london")], Some("de"));
    assert_eq!(german.label(&format!("{P}ada")).map(|l| l.text.as_str()), Some("Ada Lovelace, Mathematikerin"));
    assert_eq!(german.label(&format!("{P}london")).map(|l| l.lang.as_str()), Some("de"));
    let (other, _) = name(&file, &[&format!("{P}london")], Some("ja"));
    assert_eq!(other.label(&format!("{P}london")).map(|l| l.text.as_str()), Some("London"));
}

#[test]
fn the_json_of_labels_and_unknown_iris() {
    let dir = tempfile::tempdir().unwrap();
    let file = build(dir.path(), &people());
    let iris = [format!("{P}ada"), "http://nowhere.example/x".to_owned(), format!("{P}ada")];
    let refs: Vec<&str> = iris.iter().map(String::as_str).collect();
    let (names, _) = name(&file, &refs, None);
    let json: Value = serde_json::to_value(NamesOutput::new(&iris, &names)).unwrap();
    assert_eq!(json["names"].as_array().unwrap().len(), 2, "an IRI asked twice is named once: {json}");
    assert_eq!(json["names"][0]["label"], "Ada Lovelace");
    assert_eq!(json["names"][0]["lang"], "en");
    assert_eq!(json["names"][1], serde_json::json!({"iri": "http://nowhere.example/x"}));
    assert_eq!(json["cut"], false);
}

#[test]
fn a_lookup_costs_at_most_three_rounds_and_stays_within_its_bounds_on_many_labels() {
    // 24,000 labelled subjects: PSO blocks of 1,024 quads hold the rdfs:label run in about 24 blocks.
    let mut ttl = String::from("@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n");
    for i in 0..24_000 {
        ttl.push_str(&format!("<http://example.org/s{i:05}> rdfs:label \"subject number {i} with a longer label to spread the dictionary\"@en .\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = build(dir.path(), &ttl);
    let one = ["http://example.org/s00007"];
    let (names, rounds) = name(&file, &one, None);
    assert_eq!(names.label(one[0]).map(|l| l.text.as_str()), Some("subject number 7 with a longer label to spread the dictionary"));
    // At most: the IRIs' and label predicates' dictionary blocks, the PSO block, the label's
    // dictionary block (fewer when some lie in the first read, as the dictionary's first blocks do here).
    assert!((1..=3).contains(&rounds), "{rounds} rounds");

    // IRIs spread over the whole run: more PSO and dictionary blocks than a lookup reads.
    let spread: Vec<String> = (0..48).map(|i| format!("http://example.org/s{:05}", i * 500)).collect();
    let refs: Vec<&str> = spread.iter().map(String::as_str).collect();
    let fetch = |ranges: &[rete_core::ByteRange]| file.read_ranges(ranges);
    let (store, _) = open_in_rounds(fetch, BlockCache::new(256 << 20)).unwrap();
    let (names, stats) = run_in_rounds(&store, &RoundOptions::default(), fetch, |store: &Store<_>| names::name_iris(store, &spread, None)).unwrap();
    let names = names.unwrap();
    assert!(names.cut, "48 IRIs over ~24 PSO blocks must be cut");
    let named: Vec<&&str> = refs.iter().filter(|iri| names.label(iri).is_some()).collect();
    assert!(!named.is_empty() && named.len() < refs.len(), "{} named", named.len());
    // Earlier IRIs first, and every label found is the right one.
    assert!(names.label(refs[0]).is_some());
    for iri in named {
        let n: usize = iri.trim_start_matches("http://example.org/s").parse().unwrap();
        assert!(names.label(iri).unwrap().text.starts_with(&format!("subject number {n} ")));
    }
    let blocks = MAX_PSO_BLOCKS + MAX_TERM_BLOCKS + 48 + 8;
    assert!(stats.requests <= blocks as u64, "{} requests", stats.requests);
}

#[test]
fn search_lists_types_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), &people());
    let run = |extra: &[&str]| -> Value {
        let mut args = vec!["search", "data.rete", "babbage", "--json"];
        args.extend_from_slice(extra);
        let output = Command::new(env!("CARGO_BIN_EXE_rete")).args(&args).current_dir(dir.path()).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let plain = run(&[]);
    assert_eq!(plain["results"][0]["iri"], format!("{P}charles"));
    assert!(plain["results"][0].get("types").is_none(), "{plain}");
    let typed = run(&["--types"]);
    let mut types: Vec<String> = typed["results"][0]["types"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
    types.sort();
    assert_eq!(types, ["http://schema.org/Person", "http://xmlns.com/foaf/0.1/Person"]);
    // At most one more round than without types (the types' IRIs; this small file lies in the first read).
    assert!(typed["rounds"].as_u64().unwrap() <= plain["rounds"].as_u64().unwrap() + 1, "{plain} {typed}");
    assert!(typed.get("types_cut").is_none());
}
