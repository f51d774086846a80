//! `rete query` end to end through the binary: every output format, the
//! dataset flags, and the errors a person sees (with their exit codes).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const DATA: &str = r#"@prefix : <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:alice a :Person ; :name "Alice" ; :age "030"^^xsd:integer ; :knows :bob .
:bob a :Person ; :name "Bob"@en ; :age 25 .
"#;

const TRIG: &str = r#"@prefix : <http://example.org/> .
:g1 { :alice :likes :pizza . }
:g2 { :bob :likes :pasta . }
"#;

struct Fixture {
    _dir: tempfile::TempDir,
    file: PathBuf,
    graphs: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let build = |name: &str, ext: &str, content: &str| {
        let input = dir.path().join(format!("{name}.{ext}"));
        std::fs::write(&input, content).unwrap();
        let output = dir.path().join(format!("{name}.rete"));
        let status = Command::new(env!("CARGO_BIN_EXE_rete")).arg("build").arg(&input).arg("-o").arg(&output).arg("--quiet").status().unwrap();
        assert!(status.success());
        output
    };
    let file = build("people", "ttl", DATA);
    let graphs = build("graphs", "trig", TRIG);
    Fixture { _dir: dir, file, graphs }
}

fn rete(file: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rete")).arg("query").arg(file).args(args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout.clone()).unwrap()
}

const SELECT: &str = "PREFIX : <http://example.org/> SELECT ?p ?age WHERE { ?p :age ?age } ORDER BY ?p";
const CONSTRUCT: &str = "PREFIX : <http://example.org/> CONSTRUCT { ?p :years ?age } WHERE { ?p :age ?age FILTER(?p = :alice) }";

#[test]
fn select_in_every_solutions_format() {
    let f = fixture();
    let json = stdout(&rete(&f.file, &[SELECT]));
    assert_eq!(
        json,
        r#"{"head":{"vars":["p","age"]},"results":{"bindings":[{"p":{"type":"uri","value":"http://example.org/alice"},"age":{"type":"literal","value":"030","datatype":"http://www.w3.org/2001/XMLSchema#integer"}},{"p":{"type":"uri","value":"http://example.org/bob"},"age":{"type":"literal","value":"25","datatype":"http://www.w3.org/2001/XMLSchema#integer"}}]}}"#
    );
    let xml = stdout(&rete(&f.file, &[SELECT, "--format", "xml"]));
    assert!(xml.contains(r#"<binding name="age"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">030</literal></binding>"#), "{xml}");
    assert_eq!(stdout(&rete(&f.file, &[SELECT, "-f", "csv"])), "p,age\r\nhttp://example.org/alice,030\r\nhttp://example.org/bob,25\r\n");
    assert_eq!(stdout(&rete(&f.file, &[SELECT, "-f", "tsv"])), "?p\t?age\n<http://example.org/alice>\t030\n<http://example.org/bob>\t25\n");
}

#[test]
fn ask_answers_a_boolean() {
    let f = fixture();
    assert_eq!(stdout(&rete(&f.file, &["ASK { <http://example.org/alice> ?p ?o }"])), r#"{"head":{},"boolean":true}"#);
    assert!(stdout(&rete(&f.file, &["ASK { <http://example.org/carol> ?p ?o }", "-f", "xml"])).contains("<boolean>false</boolean>"));
}

#[test]
fn construct_in_every_graph_format() {
    let f = fixture();
    let triple = "<http://example.org/alice> <http://example.org/years> \"030\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n";
    assert_eq!(stdout(&rete(&f.file, &[CONSTRUCT])), triple, "N-Triples by default");
    assert_eq!(stdout(&rete(&f.file, &[CONSTRUCT, "-f", "nt"])), triple);
    assert_eq!(stdout(&rete(&f.file, &[CONSTRUCT, "-f", "nq"])), triple);
    assert!(stdout(&rete(&f.file, &[CONSTRUCT, "-f", "ttl"])).contains("<http://example.org/years> 030"));
    assert!(stdout(&rete(&f.file, &[CONSTRUCT, "-f", "trig"])).contains("<http://example.org/alice>"));
    let jsonld = stdout(&rete(&f.file, &[CONSTRUCT, "-f", "jsonld"]));
    assert!(jsonld.contains(r#""@value":"030""#) || jsonld.contains(r#""@value": "030""#), "{jsonld}");
    assert!(stdout(&rete(&f.file, &[CONSTRUCT, "-f", "rdf"])).contains("030</"));
    let describe = stdout(&rete(&f.file, &["DESCRIBE <http://example.org/bob>"]));
    assert!(describe.contains("<http://example.org/bob> <http://example.org/name> \"Bob\"@en .\n"), "{describe}");
}

#[test]
fn query_from_a_file_with_a_base_iri() {
    let f = fixture();
    let query = f.file.with_extension("rq");
    std::fs::write(&query, "SELECT ?n WHERE { <alice> <name> ?n }").unwrap();
    let output = rete(&f.file, &["--file", query.to_str().unwrap(), "--base", "http://example.org/", "-f", "csv"]);
    assert_eq!(stdout(&output), "n\r\nAlice\r\n");
}

#[test]
fn dataset_flags_replace_from_clauses() {
    let f = fixture();
    let query = "SELECT ?s FROM <http://example.org/g1> WHERE { ?s ?p ?o }";
    assert_eq!(stdout(&rete(&f.graphs, &[query, "-f", "csv"])), "s\r\nhttp://example.org/alice\r\n");
    assert_eq!(stdout(&rete(&f.graphs, &[query, "-f", "csv", "--default-graph", "http://example.org/g2"])), "s\r\nhttp://example.org/bob\r\n");
    let named = "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }";
    assert_eq!(stdout(&rete(&f.graphs, &[named, "-f", "csv"])).lines().count(), 3);
    assert_eq!(stdout(&rete(&f.graphs, &[named, "-f", "csv", "--named-graph", "http://example.org/g1"])), "g\r\nhttp://example.org/g1\r\n");
}

#[test]
fn syntax_error_shows_line_column_and_caret() {
    let f = fixture();
    let output = rete(&f.file, &["SELECT ?x\nWHERE { ?x ?y ?z FILTER(?x = ) }\n"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines[0].starts_with("rete: invalid query at line 2 column "), "{stderr}");
    assert_eq!(lines[1], "  WHERE { ?x ?y ?z FILTER(?x = ) }");
    let column: usize = lines[0]["rete: invalid query at line 2 column ".len()..].split(':').next().unwrap().parse().unwrap();
    assert_eq!(lines[2], format!("  {}^", " ".repeat(column - 1)));
}

#[test]
fn usage_errors() {
    let f = fixture();
    let output = rete(&f.file, &[SELECT, "-f", "ttl"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(String::from_utf8(output.stderr).unwrap(), "rete: ttl cannot hold SELECT solutions; use json, xml, csv or tsv (--format)\n");
    assert_eq!(rete(&f.file, &[SELECT, "-f", "yaml"]).status.code(), Some(2));
    assert_eq!(rete(&f.file, &[SELECT, "--default-graph", "not an iri"]).status.code(), Some(2));
    assert_eq!(rete(&f.file, &[]).status.code(), Some(2), "no query");
}

#[test]
fn unsupported_and_missing_inputs() {
    let f = fixture();
    let output = rete(&f.file, &["SELECT * WHERE { SERVICE <http://example.com/sparql> { ?s ?p ?o } }"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8(output.stderr).unwrap().starts_with("rete: unsupported: SERVICE"));
    let output = rete(&f.file.with_extension("missing"), &[SELECT]);
    assert_eq!(output.status.code(), Some(3));
}

#[test]
fn timeout_exits_with_5() {
    let f = fixture();
    // Ten unconnected patterns: ~10^10 rows on the fixture, far beyond 0.2 s even in release.
    let bomb = "SELECT (COUNT(*) AS ?c) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n ?o . ?q ?r ?s . ?t ?u ?v . ?w ?x ?y . ?z ?a1 ?a2 . ?a3 ?a4 ?a5 }";
    let output = rete(&f.file, &[bomb, "--timeout-s", "0.2"]);
    assert_eq!(output.status.code(), Some(5));
    assert_eq!(String::from_utf8(output.stderr).unwrap(), "rete: query exceeded its time limit\n");
}

#[test]
fn cost_of_a_local_file() {
    let f = fixture();
    let output = Command::new(env!("CARGO_BIN_EXE_rete")).arg("cost").arg(&f.file).arg(SELECT).arg("--json").output().unwrap();
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let file_bytes = std::fs::metadata(&f.file).unwrap().len();
    assert_eq!(json["file_bytes"].as_u64(), Some(file_bytes));
    // The whole file is in the open's first read: nothing more is fetched.
    assert!(file_bytes < 16384);
    assert_eq!((json["rounds"].as_u64(), json["requests"].as_u64(), json["bytes"].as_u64()), (Some(1), Some(1), Some(file_bytes)), "{json}");
    let output = Command::new(env!("CARGO_BIN_EXE_rete")).arg("cost").arg(&f.file).arg("SELECT ?x WHERE {").output().unwrap();
    assert_eq!(output.status.code(), Some(1), "a syntax error");
    assert!(String::from_utf8(output.stderr).unwrap().starts_with("rete: invalid query at line 1"));
    let output = Command::new(env!("CARGO_BIN_EXE_rete")).arg("cost").arg(f.file.with_extension("missing")).arg(SELECT).output().unwrap();
    assert_eq!(output.status.code(), Some(3), "a missing file");
    let truncated = f.file.with_extension("truncated.rete");
    let bytes = std::fs::read(&f.file).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 10]).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rete")).arg("cost").arg(&truncated).arg(SELECT).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "a truncated file is invalid data");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("truncated"), "{stderr}");
}

#[test]
fn unknown_function_warns_once_and_answers() {
    let f = fixture();
    let query = "PREFIX : <http://example.org/> SELECT ?p ?x WHERE { ?p :age ?age BIND(<http://example.org/f>(?age) AS ?x) FILTER(!<http://example.org/f>(?p) || true) } ORDER BY ?p";
    let output = rete(&f.file, &[query, "--format", "csv"]);
    assert_eq!(stdout(&output), "p,x\r\nhttp://example.org/alice,\r\nhttp://example.org/bob,\r\n");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("rete: warning: unknown function <http://example.org/f>: every call is an expression error"), "{stderr}");
}

/// `rete build --default-graph union` (or `default_graph = "union"` in card.toml):
/// a query without FROM sees every graph; FROM and `--default-graph IRI` still win.
#[test]
fn default_graph_union_from_the_flag_or_card_toml() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("graphs.trig");
    std::fs::write(&input, TRIG).unwrap();
    let build = |output: &str, args: &[&str]| {
        let output = dir.path().join(output);
        let built = Command::new(env!("CARGO_BIN_EXE_rete")).arg("build").arg(&input).arg("-o").arg(&output).arg("--quiet").args(args).output().unwrap();
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        output
    };
    const ALL: &str = "SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s";
    let subjects = |file: &Path, args: &[&str]| stdout(&rete(file, &[&[ALL, "--format", "tsv"], args].concat()));
    let empty = build("empty.rete", &[]);
    assert_eq!(subjects(&empty, &[]), "?s\n");
    let union = build("union.rete", &["--default-graph", "union"]);
    assert_eq!(subjects(&union, &[]), "?s\n<http://example.org/alice>\n<http://example.org/bob>\n");
    assert_eq!(subjects(&union, &["--default-graph", "http://example.org/g2"]), "?s\n<http://example.org/bob>\n");
    let from = stdout(&rete(&union, &["SELECT ?s FROM <http://example.org/g1> WHERE { ?s ?p ?o }", "--format", "tsv"]));
    assert_eq!(from, "?s\n<http://example.org/alice>\n");
    std::fs::write(dir.path().join("card.toml"), "default_graph = \"union\"\n").unwrap();
    assert_eq!(subjects(&build("card.rete", &[]), &[]), subjects(&union, &[]));
    assert_eq!(subjects(&build("flag-wins.rete", &["--default-graph", "empty"]), &[]), "?s\n");
    std::fs::write(dir.path().join("card.toml"), "default_graph = \"all\"\n").unwrap();
    let bad = Command::new(env!("CARGO_BIN_EXE_rete")).arg("build").arg(&input).arg("-o").arg(dir.path().join("bad.rete")).output().unwrap();
    let message = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && message.contains("card.toml line 1") && message.contains("union"), "{message}");
}
