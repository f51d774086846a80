//! `rete reach`, `rete path` and `rete check` as a user runs them (issue 13):
//! on files `rete build` wrote from real vocabularies (examples/) and from
//! generated data, each answer compared with a plain computation over the
//! quads `rete dump` prints; the JSON members and exit codes of the CLI
//! contract; the coherence tiers on an ontology with planted faults, and
//! tier 0's reads at a million triples (ten million with `RETE_BIG=1`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use oxrdf::{Quad, Term};
use oxrdfio::{RdfFormat, RdfParser};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SUB_CLASS_OF: &str = "http://www.w3.org/2000/01/rdf-schema#subClassOf";

fn rete(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rete")).args(args).output().expect("rete runs")
}

fn json_of(output: &Output) -> Value {
    assert!(output.status.success(), "exit {:?}: {}", output.status.code(), String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

fn build(input: &Path, dir: &Path) -> PathBuf {
    let output = dir.join(format!("{}.rete", input.file_stem().unwrap().to_str().unwrap()));
    let built = rete(&["build", input.to_str().unwrap(), "-o", output.to_str().unwrap(), "-q", "--no-pyramid"]);
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    output
}

/// The quads of a file, through `rete dump` (the independent side).
fn dump(file: &Path) -> Vec<Quad> {
    let output = rete(&["dump", file.to_str().unwrap()]);
    assert!(output.status.success());
    RdfParser::from_format(RdfFormat::NQuads).for_slice(&output.stdout).collect::<Result<_, _>>().unwrap()
}

/// How a term prints in graph answers.
fn text(term: &Term) -> String {
    match term {
        Term::NamedNode(n) => n.as_str().to_owned(),
        other => other.to_string(),
    }
}

/// Plain adjacency: text of a node → (neighbour, the triple as stored).
fn adjacency(quads: &[Quad], predicate: Option<&str>, forward: bool, inverse: bool) -> HashMap<String, Vec<(String, [String; 3])>> {
    let mut next: HashMap<String, Vec<(String, [String; 3])>> = HashMap::new();
    for q in quads.iter().filter(|q| predicate.is_none_or(|p| q.predicate.as_str() == p)) {
        let (s, o) = (text(&q.subject.clone().into()), text(&q.object));
        let triple = [s.clone(), q.predicate.as_str().to_owned(), o.clone()];
        if forward {
            next.entry(s.clone()).or_default().push((o.clone(), triple.clone()));
        }
        if inverse {
            next.entry(o).or_default().push((s, triple));
        }
    }
    next
}

fn distances(next: &HashMap<String, Vec<(String, [String; 3])>>, seed: &str) -> HashMap<String, usize> {
    let mut seen = HashMap::from([(seed.to_owned(), 0)]);
    let mut queue = VecDeque::from([seed.to_owned()]);
    while let Some(current) = queue.pop_front() {
        let d = seen[&current];
        for (n, _) in next.get(&current).into_iter().flatten() {
            if !seen.contains_key(n) {
                seen.insert(n.clone(), d + 1);
                queue.push_back(n.clone());
            }
        }
    }
    seen
}

fn example(name: &str, file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(name).join(file)
}

#[test]
fn reach_on_real_vocabularies_equals_a_plain_bfs_and_parallel_equals_serial() {
    let dir = tempfile::tempdir().unwrap();
    for (name, input) in [("dbpedia-ontology", "dbpedia-ontology.ttl"), ("schema-org", "schema-org.nt")] {
        let file = build(&example(name, input), dir.path());
        let quads = dump(&file);
        // Every class with a superclass: hundreds of seeds.
        let mut seeds: Vec<String> = quads.iter().filter(|q| q.predicate.as_str() == SUB_CLASS_OF).map(|q| text(&q.subject.clone().into())).collect();
        seeds.sort();
        seeds.dedup();
        assert!(seeds.len() > 200, "{name}: {} seeds", seeds.len());
        let seeds_file = dir.path().join(format!("{name}.seeds"));
        std::fs::write(&seeds_file, format!("# classes\n{}\n\n", seeds.join("\n"))).unwrap();
        for (flag, forward, inverse) in [(None, true, false), (Some("--inverse"), false, true), (Some("--undirected"), true, true)] {
            let next = adjacency(&quads, Some(SUB_CLASS_OF), forward, inverse);
            let mut args = vec!["reach", file.to_str().unwrap(), "--from-file", seeds_file.to_str().unwrap(), "--via", SUB_CLASS_OF, "--json", "--members"];
            args.extend(flag);
            let serial = json_of(&rete(&args));
            args.push("--parallel");
            let parallel = json_of(&rete(&args));
            assert_eq!(serial, parallel, "{name} {flag:?}: --parallel gives the serial answer");
            let answers = serial["seeds"].as_array().unwrap();
            assert_eq!(answers.len(), seeds.len());
            let mut total = 0;
            for (seed, answer) in seeds.iter().zip(answers) {
                let expected: HashSet<String> = distances(&next, seed).into_keys().filter(|n| n != seed).collect();
                let members: HashSet<String> = answer["members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_owned()).collect();
                assert_eq!(answer["from"], json!(seed));
                assert_eq!(answer["reached"], json!(expected.len()), "{name} {flag:?} {seed}");
                assert_eq!(members, expected, "{name} {flag:?} {seed}");
                total += expected.len();
            }
            assert!(total > seeds.len(), "{name} {flag:?}: large reach sets ({total} in all)");
            for member in ["rounds", "requests", "bytes"] {
                assert!(serial[member].as_u64().unwrap() > 0, "{member}");
            }
        }
    }
}

#[test]
fn paths_on_a_real_vocabulary_are_shortest_and_made_of_stored_triples() {
    let dir = tempfile::tempdir().unwrap();
    let file = build(&example("dbpedia-ontology", "dbpedia-ontology.ttl"), dir.path());
    let quads = dump(&file);
    let stored: HashSet<[String; 3]> = quads.iter().map(|q| [text(&q.subject.clone().into()), q.predicate.as_str().to_owned(), text(&q.object)]).collect();
    let next = adjacency(&quads, None, true, true);
    let mut classes: Vec<String> = quads.iter().filter(|q| q.predicate.as_str() == SUB_CLASS_OF).map(|q| text(&q.subject.clone().into())).collect();
    classes.sort();
    classes.dedup();
    for k in 0..12 {
        let (from, to) = (&classes[k * 41 % classes.len()], &classes[(k * 97 + 13) % classes.len()]);
        let expected = distances(&next, from).get(to).copied();
        let answer = json_of(&rete(&["path", file.to_str().unwrap(), from, to, "--undirected", "--json"]));
        assert_eq!(answer["length"].as_u64().map(|l| l as usize), expected, "{from} → {to}");
        let mut at = from.clone();
        for step in answer["path"].as_array().unwrap() {
            let triple: [String; 3] = serde_json::from_value(step.clone()).unwrap();
            assert!(stored.contains(&triple), "{triple:?} is stored");
            at = if triple[0] == at { triple[2].clone() } else { assert_eq!(triple[2], at); triple[0].clone() };
        }
        assert_eq!(&at, to);
        assert!(answer["visited"].as_u64().unwrap() >= 2 && answer["bytes"].as_u64().unwrap() > 0 && answer["rounds"].as_u64().unwrap() >= 1);
        // Only along subClassOf, upwards: a superclass is reachable, a sibling is not.
        let up = rete(&["path", file.to_str().unwrap(), from, to, "--via", SUB_CLASS_OF, "--json"]);
        let expected_up = distances(&adjacency(&quads, Some(SUB_CLASS_OF), true, false), from).get(to).copied();
        assert_eq!(json_of(&up)["length"].as_u64().map(|l| l as usize), expected_up, "{from} → {to} up");
    }
}

#[test]
fn path_contract_no_path_is_null_with_exit_0_and_a_bad_iri_is_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("g.nt");
    std::fs::write(&input, "<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n<http://ex.org/b> <http://ex.org/p> _:x .\n_:x <http://ex.org/p> <http://ex.org/c> .\n<http://ex.org/c> <http://ex.org/p> <http://ex.org/c> .\n<http://ex.org/z> <http://ex.org/p> <http://ex.org/y> .\n").unwrap();
    let file = build(&input, dir.path());
    let file = file.to_str().unwrap();
    let found = json_of(&rete(&["path", file, "http://ex.org/a", "http://ex.org/c", "--json"]));
    assert_eq!(found["length"], json!(3));
    let blank = found["path"][1][2].as_str().unwrap();
    assert!(blank.starts_with("_:"), "blank nodes print as _:label, not {blank}");
    assert_eq!(found["path"][0], json!(["http://ex.org/a", "http://ex.org/p", "http://ex.org/b"]));
    // Through the blank node by its label.
    assert_eq!(json_of(&rete(&["path", file, blank, "http://ex.org/c", "--json"]))["length"], json!(1));
    for args in [&["http://ex.org/c", "http://ex.org/a"][..], &["http://ex.org/a", "http://ex.org/y"], &["http://ex.org/a", "http://ex.org/absent"]] {
        let none = rete(&[&["path", file][..], args, &["--json"]].concat());
        assert_eq!(none.status.code(), Some(0));
        assert_eq!(json_of(&none)["length"], Value::Null, "{args:?}");
    }
    let too_short = json_of(&rete(&["path", file, "http://ex.org/a", "http://ex.org/c", "--max-depth", "2", "--json"]));
    assert_eq!(too_short["length"], Value::Null);
    let undirected = json_of(&rete(&["path", file, "http://ex.org/c", "http://ex.org/a", "--undirected", "--json"]));
    assert_eq!(undirected["path"][2], json!(["http://ex.org/a", "http://ex.org/p", "http://ex.org/b"]), "a step runs object to subject, stored as it is");
    for bad in ["not an iri", "http://ex.org/a b", "relative/iri"] {
        let failed = rete(&["path", file, bad, "http://ex.org/c", "--json"]);
        assert_eq!(failed.status.code(), Some(1), "{bad}: {}", String::from_utf8_lossy(&failed.stderr));
        assert!(String::from_utf8_lossy(&failed.stderr).contains("invalid IRI"));
    }
    let reach = json_of(&rete(&["reach", file, "--from", "http://ex.org/a", "--from", "<http://ex.org/c>", "--via", "http://ex.org/p", "--json"]));
    assert_eq!(reach["seeds"], json!([{"from": "http://ex.org/a", "reached": 3}, {"from": "http://ex.org/c", "reached": 0}]), "a self-loop does not count the seed");
    assert_eq!(rete(&["reach", file, "--from", "nope", "--via", "http://ex.org/p"]).status.code(), Some(1));
}

#[test]
fn tier_0_on_a_real_ontology_reads_only_its_class_axioms() {
    let dir = tempfile::tempdir().unwrap();
    let file = build(&example("dbpedia-ontology", "dbpedia-ontology.ttl"), dir.path());
    let report = json_of(&rete(&["check", file.to_str().unwrap(), "--tier", "0", "--json"]));
    let (rounds, bytes) = (report["rounds"].as_u64().unwrap(), report["bytes"].as_u64().unwrap());
    assert!(rounds <= 3 && bytes <= 16384 + 16384, "{rounds} rounds, {bytes} bytes");
    // The DBpedia ontology puts dbo:Library under Agent and Place, which it declares disjoint.
    let library = report["findings"].as_array().unwrap().iter().find(|f| f["subject"] == json!("http://dbpedia.org/ontology/Library")).expect("Library is unsatisfiable");
    assert_eq!(library["kind"], json!("unsatisfiable-class"));
    let cited: HashSet<[String; 3]> = serde_json::from_value(library["evidence"].clone()).unwrap();
    let stored: HashSet<[String; 3]> = dump(&file).iter().map(|q| [text(&q.subject.clone().into()), q.predicate.as_str().to_owned(), text(&q.object)]).collect();
    assert!(cited.is_subset(&stored), "every cited triple is stored");
    // Tier 1 reads the property axioms too and the same findings stand.
    let tier1 = json_of(&rete(&["check", file.to_str().unwrap(), "--tier", "1", "--json"]));
    assert!(tier1["findings"].as_array().unwrap().contains(library));
}

/// `persons` people, students or professors, with names, ids and advisors,
/// under an ontology with planted faults: A under disjoint B and C, a
/// subclass cycle X ⊑ Y ⊑ X, and four instance clashes.
fn coherence_data(path: &Path, persons: usize) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let ex = "http://ex.org/";
    let t = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
    let rdfs = "http://www.w3.org/2000/01/rdf-schema#";
    let owl = "http://www.w3.org/2002/07/owl#";
    for (s, p, o) in [
        ("A", "subClassOf", "B"),
        ("A", "subClassOf", "C"),
        ("Student", "subClassOf", "Person"),
        ("Professor", "subClassOf", "Person"),
        ("X", "subClassOf", "Y"),
        ("Y", "subClassOf", "X"),
        ("advisor", "domain", "Student"),
        ("advisor", "range", "Professor"),
    ] {
        writeln!(out, "<{ex}{s}> <{rdfs}{p}> <{ex}{o}> .").unwrap();
    }
    writeln!(out, "<{ex}B> <{owl}disjointWith> <{ex}C> .").unwrap();
    writeln!(out, "<{ex}Student> <{owl}disjointWith> <{ex}Professor> .").unwrap();
    writeln!(out, "<{ex}ssn> <{t}> <{owl}FunctionalProperty> .").unwrap();
    for i in 0..persons {
        let class = if i % 4 == 0 { "Professor" } else { "Student" };
        writeln!(out, "<{ex}person/{i}> <{t}> <{ex}{class}> .").unwrap();
        writeln!(out, "<{ex}person/{i}> <{ex}name> \"Person {i}\" .").unwrap();
        writeln!(out, "<{ex}person/{i}> <{ex}ssn> \"{i:09}\" .").unwrap();
        writeln!(out, "<{ex}person/{i}> <{ex}knows> <{ex}person/{}> .", (i * 7 + 3) % persons).unwrap();
        if class == "Student" {
            writeln!(out, "<{ex}person/{i}> <{ex}advisor> <{ex}person/{}> .", i / 4 * 4).unwrap();
        }
    }
    for line in [
        format!("<{ex}clash/typed> <{t}> <{ex}Student> ."),
        format!("<{ex}clash/typed> <{t}> <{ex}Professor> ."),
        format!("<{ex}clash/unsatisfiable> <{t}> <{ex}A> ."),
        format!("<{ex}clash/domain> <{t}> <{ex}Professor> ."),
        format!("<{ex}clash/domain> <{ex}advisor> <{ex}person/0> ."),
        format!("<{ex}clash/ssn> <{ex}ssn> \"1\" ."),
        format!("<{ex}clash/ssn> <{ex}ssn> \"2\" ."),
    ] {
        writeln!(out, "{line}").unwrap();
    }
}

fn kinds(report: &Value) -> Vec<(String, String)> {
    report["findings"].as_array().unwrap().iter().map(|f| (f["kind"].as_str().unwrap().to_owned(), f["subject"].as_str().unwrap().to_owned())).collect()
}

fn check_tiers_at(persons: usize) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("people.nt");
    coherence_data(&input, persons);
    let file = build(&input, dir.path());
    let file = file.to_str().unwrap();
    let ex = |n: &str| format!("http://ex.org/{n}");
    let pair = |k: &str, s: String| (k.to_owned(), s);
    let schema = vec![pair("unsatisfiable-class", ex("A")), pair("subclass-cycle", ex("X"))];
    let tier0 = json_of(&rete(&["check", file, "--tier", "0", "--json"]));
    assert_eq!(tier0["tier"], json!(0));
    assert_eq!(kinds(&tier0), schema);
    let unsatisfiable = &tier0["findings"][0]["evidence"];
    assert_eq!(unsatisfiable.as_array().unwrap().len(), 3);
    assert!(unsatisfiable.as_array().unwrap().contains(&json!([ex("B"), "http://www.w3.org/2002/07/owl#disjointWith", ex("C")])));
    // Bounded: the open's 16 KiB, then at most 2 reads and 16 KB, at any size.
    let (rounds, bytes) = (tier0["rounds"].as_u64().unwrap(), tier0["bytes"].as_u64().unwrap());
    assert!(rounds <= 3 && bytes <= 16384 + 16384, "tier 0 at {persons} persons: {rounds} rounds, {bytes} bytes");
    let mut instances = schema.clone();
    instances.extend([pair("disjoint-instance", ex("clash/domain")), pair("disjoint-instance", ex("clash/typed")), pair("disjoint-instance", ex("clash/unsatisfiable")), pair("functional-property", ex("clash/ssn"))]);
    let tier1 = json_of(&rete(&["check", file, "--tier", "1", "--json"]));
    assert_eq!(kinds(&tier1), instances);
    let tier2 = json_of(&rete(&["check", file, "--tier", "2", "--json"]));
    assert_eq!(tier2["findings"], tier1["findings"], "the whole graph finds what the selective slice does");
    assert!(tier1["bytes"].as_u64().unwrap() < tier2["bytes"].as_u64().unwrap(), "tier 1 reads less than tier 2");
    let domain = tier1["findings"].as_array().unwrap().iter().find(|f| f["subject"] == json!(ex("clash/domain"))).unwrap();
    assert!(domain["evidence"].as_array().unwrap().contains(&json!([ex("advisor"), "http://www.w3.org/2000/01/rdf-schema#domain", ex("Student")])));
    let text = rete(&["check", file, "--tier", "1"]);
    assert!(text.status.success() && String::from_utf8_lossy(&text.stdout).contains("functional-property\thttp://ex.org/clash/ssn"));
}

#[test]
fn coherence_tiers_find_the_planted_faults_and_tier_0_stays_small_at_a_million_triples() {
    // ~4.75 quads a person: 210,000 people are a million triples.
    check_tiers_at(210_000);
}

#[test]
fn coherence_tier_0_at_ten_million_triples() {
    if std::env::var_os("RETE_BIG").is_none() {
        eprintln!("skipped: set RETE_BIG=1 to build ten million triples");
        return;
    }
    check_tiers_at(2_100_000);
}
