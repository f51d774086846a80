//! The `rete` binary's contract with scripts: messages that say what and
//! where, exit codes (0 ok, 1 invalid data, 2 usage, 3 other), no partial files.

use std::path::Path;
use std::process::{Command, Output};

fn rete(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rete")).args(args).current_dir(dir).output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn syntax_error_names_file_line_column_and_quotes_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.nt"), "<http://a> <http://b> \"x\" .\n<http://a> <http://b> oops .\n").unwrap();
    let output = rete(&["build", "bad.nt", "-o", "out.rete"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(message.starts_with("rete: bad.nt:2:23: "), "{message}");
    assert!(message.contains("(byte 50)"), "{message}");
    assert!(message.contains("  | <http://a> <http://b> oops .\n  |                       ^"), "{message}");
    assert!(!dir.path().join("out.rete").exists(), "no partial output");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(leftovers.len(), 1, "temporary files left behind: {leftovers:?}");
}

#[test]
fn lenient_skips_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.nt"), "<http://a> <http://b> \"x\" .\n<http://a> <http://b> oops .\n<http://a> <http://c> \"y\" .\n").unwrap();
    let output = rete(&["build", "--lenient", "bad.nt", "-o", "out.rete"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("skipped 1 bad statements"));
    let dump = rete(&["dump", "out.rete"], dir.path());
    assert_eq!(String::from_utf8_lossy(&dump.stdout).lines().count(), 2);
}

#[test]
fn turtle_given_as_ntriples_suggests_the_format() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data.nt"), "@prefix ex: <http://e/> .\nex:a ex:b ex:c .\n").unwrap();
    let output = rete(&["build", "data.nt", "-o", "out.rete"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("hint: this looks like Turtle; pass --format ttl"), "{}", stderr(&output));
    let output = rete(&["build", "--format", "ttl", "data.nt", "-o", "out.rete"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn stdin_gzip_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let text = "<http://a> <http://b> \"x\" <http://g> .\n";
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut encoder, text.as_bytes()).unwrap();
    std::fs::write(dir.path().join("data.nq.gz"), encoder.finish().unwrap()).unwrap();
    assert_eq!(rete(&["build", "data.nq.gz", "-o", "gz.rete"], dir.path()).status.code(), Some(0));
    let mut child = Command::new(env!("CARGO_BIN_EXE_rete"))
        .args(["build", "-", "--format", "nq", "-o", "stdin.rete"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), text.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    let dumped = |file: &str| String::from_utf8(rete(&["dump", file], dir.path()).stdout).unwrap();
    assert_eq!(dumped("gz.rete"), text);
    assert_eq!(dumped("stdin.rete"), text);

    assert_eq!(rete(&["build", "-", "-o", "x.rete"], dir.path()).status.code(), Some(2), "stdin without --format");
    assert_eq!(rete(&["build", "missing.nt", "-o", "x.rete"], dir.path()).status.code(), Some(3));
    assert_eq!(rete(&["build", "--no-such-flag"], dir.path()).status.code(), Some(2));
    assert_eq!(rete(&["build", "data.nq.gz", "-o", "x.rete", "--mem", "lots"], dir.path()).status.code(), Some(2));
    std::fs::write(dir.path().join("junk.rete"), b"not a rete file").unwrap();
    let output = rete(&["inspect", "junk.rete"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output), "rete: cannot read junk.rete: not a .rete file (bad magic number)\n");
}

#[test]
fn verify_reports_corruption() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.nt"), "<http://a> <http://b> \"x\" .\n<http://a> <http://c> \"y\" .\n").unwrap();
    assert!(rete(&["build", "d.nt", "-o", "d.rete"], dir.path()).status.success());
    let ok = rete(&["verify", "d.rete"], dir.path());
    assert_eq!(ok.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&ok.stdout).starts_with("d.rete: ok (2 quads"));
    let mut bytes = std::fs::read(dir.path().join("d.rete")).unwrap();
    let last = bytes.len() - 10;
    bytes[last] ^= 1;
    std::fs::write(dir.path().join("d.rete"), bytes).unwrap();
    let bad = rete(&["verify", "d.rete"], dir.path());
    assert_eq!(bad.status.code(), Some(1));
    let message = stderr(&bad);
    assert!(message.contains("verification failed:") && message.contains("content hash is"), "{message}");
    assert!(message.contains("PERMUTATION OPS section checksum mismatch"), "{message}");
}

#[test]
fn inspect_json_has_counts_and_sections() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.ttl"), "@prefix ex: <http://e/> . ex:a a ex:C ; ex:p 1 . ex:b a ex:C .").unwrap();
    assert!(rete(&["build", "d.ttl", "-o", "d.rete"], dir.path()).status.success());
    let output = rete(&["inspect", "--json", "d.rete"], dir.path());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["quads"], 3);
    // INDEX, CARD, SEARCH, CLASS and PROPERTY AXIOMS (empty: they say there are none), SUMMARY,
    // DICTIONARY, six permutations and SEARCH BLOCKS (no MEMBERS: no entity links).
    assert_eq!(json["sections"].as_array().unwrap().len(), 14);
    assert_eq!(json["summary"]["schema"]["classes"][0]["iri"], "http://e/C");
    assert_eq!(json["card"]["classes"][0]["iri"], "http://e/C");
    assert_eq!(json["card"]["classes"][0]["instances"], 2);
    assert_eq!(json["card"]["predicates"][0]["quads"], 2);
}

#[test]
fn triple_terms_build_into_format_2_and_query() {
    // RDF 1.2 Turtle: a reifier, an annotation, a nested triple term, VERSION (FORMAT.md §5.1).
    let dir = tempfile::tempdir().unwrap();
    let turtle = r#"VERSION "1.2"
PREFIX : <http://a/>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
:s :p :o {| :source :web |} .
:r rdf:reifies <<( _:b :q <<( :s :p "x\u0000y"@en--ltr )>> )>> .
"#;
    std::fs::write(dir.path().join("a.ttl"), turtle).unwrap();
    let output = rete(&["build", "a.ttl", "-o", "a.rete"], dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
    let inspect = rete(&["inspect", "--json", "a.rete"], dir.path());
    let json: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
    assert_eq!(json["format_version"], "2.0");
    let query = "PREFIX : <http://a/> SELECT ?s ?o WHERE { ?r <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( ?s :p ?o )>> }";
    let output = rete(&["query", "a.rete", query, "--format", "json"], dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["results"]["bindings"][0]["o"]["value"], "http://a/o", "{json}");
    let construct = "CONSTRUCT { ?r ?p ?t } WHERE { ?r ?p ?t FILTER(isTRIPLE(?t) && isTRIPLE(OBJECT(?t))) }";
    let output = rete(&["query", "a.rete", construct, "--format", "nt"], dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
    let nt = String::from_utf8(output.stdout).unwrap();
    assert!(nt.contains(r#"<http://a/r> <http://www.w3.org/1999/02/22-rdf-syntax-ns#reifies> <<( _:"#), "{nt}");
    assert!(nt.contains(r#"<http://a/q> <<( <http://a/s> <http://a/p> "x\u0000y"@en--ltr )>> )>> ."#), "{nt}");

    // A file without triple terms stays 1.2, which every 1.x reader reads.
    std::fs::write(dir.path().join("b.nt"), "<http://a/s> <http://a/p> <http://a/o> .\n").unwrap();
    assert!(rete(&["build", "b.nt", "-o", "b.rete"], dir.path()).status.success());
    let inspect = rete(&["inspect", "--json", "b.rete"], dir.path());
    let json: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
    assert_eq!(json["format_version"], "1.2");
}

#[test]
fn triple_terms_nested_too_deep_are_refused_with_what_and_where() {
    let mut term = "<http://a/o>".to_string();
    for _ in 0..33 {
        term = format!("<<( <http://a/s> <http://a/p> {term} )>>");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.nt"), format!("<http://a/s> <http://a/p> <http://a/o> .\n<http://a/r> <http://a/q> {term} .\n")).unwrap();
    let output = rete(&["build", "a.nt", "-o", "a.rete"], dir.path());
    let message = stderr(&output);
    assert!(!output.status.success(), "{message}");
    assert!(message.contains("a.nt: statement 2 holds triple terms nested 33 deep"), "{message}");
    assert!(!dir.path().join("a.rete").exists());
}
