//! The term-keeping reference engine of tests/differential/random.py: spareval
//! (the same evaluator rete wraps) over an in-memory `oxrdf::Dataset` of the
//! data files, read as `rete build` reads them.
//!
//! pyoxigraph's store keeps numbers, booleans and dates as values ("03" and
//! "3"^^xsd:integer become one term) and lowercases language tags, so it
//! cannot tell whether rete keeps RDF terms apart; an `oxrdf::Dataset` keeps
//! every term as written, which is what RDF 1.1 §3.3 and SPARQL's term
//! equality ask for. This is the reference the core unit tests use, as a
//! process: load once, then answer queries.
//!
//! ```sh
//! cargo build --release -p rete-publisher --example spareval_reference
//! target/release/examples/spareval_reference data.trig [--union] < requests
//! ```
//!
//! Each request is one line of JSON, `{"query": "..."}`; each answer one line
//! of JSON: `{"status": "ok", "format": "json"|"nt", "body": "..."}` (SPARQL
//! JSON results, or N-Triples for CONSTRUCT/DESCRIBE), `{"status":
//! "rejected", "message": ...}` for a query that does not parse, or
//! `{"status": "failed", "message": ...}` when evaluation fails. With
//! `--union`, a query without FROM sees the union of every graph (the
//! examples' `default_graph = "union"`).

use oxrdf::Dataset;
use oxrdfio::{RdfFormat, RdfParser, RdfSerializer};
use serde_json::json;
use sparesults::{QueryResultsFormat, QueryResultsSerializer};
use spareval::{QueryEvaluator, QueryResults};
use spargebra::SparqlParser;
use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut union = false;
    let mut files = Vec::new();
    for arg in std::env::args().skip(1) {
        if arg == "--union" {
            union = true;
        } else {
            files.push(arg);
        }
    }
    let dataset = match load(&files) {
        Ok(dataset) => dataset,
        Err(message) => {
            eprintln!("spareval_reference: {message}");
            return ExitCode::from(2);
        }
    };
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let answer = match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(request) => answer(&dataset, request["query"].as_str().unwrap_or_default(), union),
            Err(err) => json!({"status": "failed", "message": format!("bad request line: {err}")}),
        };
        if writeln!(stdout, "{answer}").and_then(|()| stdout.flush()).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

/// Every quad of the files, each parsed with its base IRI `file://<absolute path>` (as run.py
/// and `rete build` do), gzip by suffix.
fn load(files: &[String]) -> Result<Dataset, String> {
    let mut dataset = Dataset::new();
    for name in files {
        let path = Path::new(name).canonicalize().map_err(|err| format!("{name}: {err}"))?;
        let inner = if path.extension().is_some_and(|e| e == "gz") { path.with_extension("") } else { path.clone() };
        let extension = inner.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let format = RdfFormat::from_extension(extension).ok_or_else(|| format!("{name}: unknown RDF extension .{extension}"))?;
        let mut bytes = Vec::new();
        let file = std::fs::File::open(&path).map_err(|err| format!("{name}: {err}"))?;
        if path.extension().is_some_and(|e| e == "gz") {
            flate2::read::GzDecoder::new(file).read_to_end(&mut bytes)
        } else {
            std::io::BufReader::new(file).read_to_end(&mut bytes)
        }
        .map_err(|err| format!("{name}: {err}"))?;
        let parser = RdfParser::from_format(format).with_base_iri(format!("file://{}", path.display())).map_err(|err| format!("{name}: {err}"))?;
        for quad in parser.for_slice(&bytes) {
            dataset.insert(&quad.map_err(|err| format!("{name}: {err}"))?);
        }
    }
    Ok(dataset)
}

fn answer(dataset: &Dataset, text: &str, union: bool) -> serde_json::Value {
    let query = match SparqlParser::new().parse_query(text) {
        Ok(query) => query,
        Err(err) => return json!({"status": "rejected", "message": err.to_string()}),
    };
    let evaluator = QueryEvaluator::new();
    let mut prepared = evaluator.prepare(&query);
    if union && query.dataset().is_none() {
        prepared.dataset_mut().set_default_graph_as_union();
    }
    match prepared.execute(dataset).map_err(|err| err.to_string()).and_then(serialize) {
        Ok((format, body)) => json!({"status": "ok", "format": format, "body": body}),
        Err(message) => json!({"status": "failed", "message": message}),
    }
}

fn serialize(results: QueryResults<'_>) -> Result<(&'static str, String), String> {
    let json = QueryResultsSerializer::from_format(QueryResultsFormat::Json);
    let bytes = match results {
        QueryResults::Boolean(value) => return text("json", json.serialize_boolean_to_writer(Vec::new(), value).map_err(|e| e.to_string())?),
        QueryResults::Solutions(solutions) => {
            let mut writer = json.serialize_solutions_to_writer(Vec::new(), solutions.variables().to_vec()).map_err(|e| e.to_string())?;
            for solution in solutions {
                let solution = solution.map_err(|e| e.to_string())?;
                writer.serialize(&solution).map_err(|e| e.to_string())?;
            }
            return text("json", writer.finish().map_err(|e| e.to_string())?);
        }
        QueryResults::Graph(triples) => {
            let mut writer = RdfSerializer::from_format(RdfFormat::NTriples).for_writer(Vec::new());
            for triple in triples {
                writer.serialize_triple(&triple.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
            }
            writer.finish().map_err(|e| e.to_string())?
        }
    };
    text("nt", bytes)
}

fn text(format: &'static str, bytes: Vec<u8>) -> Result<(&'static str, String), String> {
    String::from_utf8(bytes).map(|body| (format, body)).map_err(|e| e.to_string())
}
