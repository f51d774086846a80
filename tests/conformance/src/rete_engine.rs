//! rete's own engine under the harness: the test's files are written as one N-Quads file,
//! built into a `.rete` by the publisher's builder, and queried through `rete_core::sparql`
//! over the file's bytes — the same path as `rete query`.

use crate::engine::{Answer, Engine, EngineError, PathAndIri, Resolver, Solutions, read_triples};
use oxrdf::{GraphName, NamedNode, Quad};
use oxrdfio::RdfFormat;
use rete_core::Store;
use rete_core::sparql::{self, QueryOptions};
use rete_publisher::ingest::build::{BuildOptions, build};
use rete_publisher::ingest::input::Input;
use std::collections::HashSet;
use std::fmt::Write as _;

/// Builds each test's data into a `.rete` and evaluates with `rete_core::sparql`.
#[derive(Debug, Default, Clone, Copy)]
pub struct Rete;

impl Engine for Rete {
    fn name(&self) -> &str {
        "rete"
    }

    fn evaluate(
        &self,
        query: &str,
        base: &str,
        default_graph: &[PathAndIri],
        named_graphs: &[PathAndIri],
        resolve: Resolver<'_>,
    ) -> Result<Answer, EngineError> {
        let parsed = sparql::parse_query(query, Some(base)).map_err(|e| EngineError::Parse(e.to_string()))?;

        let mut nquads = String::new();
        for file in default_graph {
            append(&mut nquads, file, &GraphName::DefaultGraph)?;
        }
        let mut loaded = HashSet::new();
        for file in named_graphs {
            if loaded.insert(file.iri.clone()) {
                append(&mut nquads, file, &NamedNode::new_unchecked(&file.iri).into())?;
            }
        }
        // FROM / FROM NAMED: each file becomes the named graph of its IRI; the query's own
        // dataset clause then selects the graphs.
        if let Some(clause) = query_dataset(&parsed) {
            for iri in clause.default.iter().chain(clause.named.iter().flatten()) {
                if loaded.insert(iri.as_str().to_owned()) {
                    let path = resolve(iri.as_str()).ok_or_else(|| EngineError::Unsupported(format!("no local file for graph <{}>", iri.as_str())))?;
                    append(&mut nquads, &PathAndIri { path, iri: iri.as_str().to_owned() }, &iri.clone().into())?;
                }
            }
        }

        let bytes = build_rete(&nquads)?;
        let store = Store::open(bytes, 16 << 20).map_err(|e| EngineError::Evaluation(format!("cannot open the built file: {e}")))?;
        let answer = sparql::evaluate(&store, &parsed, &QueryOptions::default()).map_err(|e| EngineError::Evaluation(e.to_string()))?;
        collect(answer).map_err(|e| EngineError::Evaluation(e.to_string()))
    }

    fn notes(&self) -> &str {
        NOTES
    }

    fn parse_only(&self, query: &str, base: &str) -> Result<(), String> {
        sparql::parse_query(query, Some(base)).map(|_| ()).map_err(|e| e.to_string())
    }
}

fn query_dataset(query: &spargebra::Query) -> Option<&spargebra::algebra::QueryDataset> {
    match query {
        spargebra::Query::Select { dataset, .. }
        | spargebra::Query::Construct { dataset, .. }
        | spargebra::Query::Describe { dataset, .. }
        | spargebra::Query::Ask { dataset, .. } => dataset.as_ref(),
    }
}

fn append(nquads: &mut String, file: &PathAndIri, graph: &GraphName) -> Result<(), EngineError> {
    for triple in read_triples(file)? {
        let quad = Quad::new(triple.subject, triple.predicate, triple.object, graph.clone());
        let _ = writeln!(nquads, "{quad} .");
    }
    Ok(())
}

/// Runs the real builder on the N-Quads text and returns the file's bytes.
fn build_rete(nquads: &str) -> Result<Vec<u8>, EngineError> {
    let failed = |message: String| EngineError::Evaluation(format!("building the .rete failed: {message}"));
    let dir = tempfile::tempdir().map_err(|e| failed(e.to_string()))?;
    let input_path = dir.path().join("data.nq");
    let output = dir.path().join("data.rete");
    std::fs::write(&input_path, nquads).map_err(|e| failed(e.to_string()))?;
    let input = Input::new(&input_path, Some(RdfFormat::NQuads)).map_err(|e| failed(format!("{e:#}")))?;
    build(&BuildOptions { inputs: vec![input], output: output.clone(), memory_bytes: 64 << 20, lenient: false, temp_dir: None, progress: false, metadata: Default::default(), pyramid: false, blocks: Default::default() })
        .map_err(|e| failed(format!("{e:#}")))?;
    std::fs::read(&output).map_err(|e| failed(e.to_string()))
}

fn collect(answer: sparql::Answer<'_>) -> Result<Answer, sparql::QueryError> {
    Ok(match answer {
        sparql::Answer::Boolean(value) => Answer::Boolean(value),
        sparql::Answer::Solutions(solutions) => {
            let variables = solutions.variables().to_vec();
            let mut rows = Vec::new();
            for solution in solutions {
                let solution = solution?;
                rows.push(variables.iter().map(|v| solution.get(v).cloned()).collect());
            }
            Answer::Solutions(Solutions { variables, rows })
        }
        sparql::Answer::Graph(triples) => Answer::Graph(triples.collect::<Result<_, _>>()?),
        #[allow(unreachable_patterns)]
        _ => return Err(sparql::QueryError::Evaluation("unknown answer kind".into())),
    })
}

const NOTES: &str = "### Why these fail

Every failure above is a test whose expected lexical form of a computed number contradicts
another test's, under this harness's exact comparison:

- **Lexical forms of computed numbers**: `agg-avg-02` wants the decimal `2.0` and `coalesce01`
  `0.0` (XSD canonical forms) while `expr-ops/add-numbers-cast` wants `6` and `functions/ceil01`
  `-1` (shortest forms); `agg-sum-distinct` wants the double `2100` and `agg-sum-02` `3.21E4`;
  the cast tests want `1.0E0`. No single rule passes them all. rete writes spareval's shortest
  forms, which passes the larger group; stored terms that only pass through an expression (MIN,
  MAX, SAMPLE, COALESCE, IF, unary +, STR) keep their stored form (`core/src/sparql/dataset.rs`).
  An outside runner compares numbers by value within their datatype, and there rete passes them.

What was fixed where (each fix with a test that fails on the unpatched crates): GRAPH variable
scoping and unknown extension functions in core (`core/src/sparql/graph_scope.rs`,
`extensions.rs`); zero-length paths from absent terms, GROUP_CONCAT of tagged literals, BNODE(str)
per solution, STR of stored numbers, date/time comparison across timezones and MINUS under LATERAL
in the vendored spareval (`vendor/spareval/README.md`); parser fixes in the vendored spargebra
(`vendor/spargebra/README.md`).

## Through the CLI, as an outside runner sees rete

`tests/conformance/cli_runner.py` runs the W3C suites through rete's command-line contract only
(`rete build` the test data as N-Quads, `rete query --format json|nt`), comparing numeric literals
by value within their datatype and every other term exactly. It covers SPARQL 1.1 (the 820 tests
above) and SPARQL 1.2 (the 246 tests of `../shared/sparql12-tests`: 63 evaluation, 183 syntax),
each held to a floor in `tests/conformance/cli-floor.txt` (the `conformance` suite of
`scripts/test.sh`).

Command: `python3 tests/conformance/cli_runner.py [--suite 1.1|1.2|all] [--floor tests/conformance/cli-floor.txt] [FILTER]`
(pyoxigraph parses data and expected results; `target/release/rete` answers).

| suite | passed | failed | total |
|---|---:|---:|---:|
| SPARQL 1.1 | 820 | 0 | 820 |
| SPARQL 1.2 | 246 | 0 | 246 |

No SPARQL 1.2 test fails. RDF 1.2 triple terms (`<<( s p o )>>`, and the reifiers `<< s p o >>`
and annotations `{| |}` that stand for them) are terms of the dictionary since format 2.0
(`docs/FORMAT.md` §5.1, term kind 0x06; `required_features` bit 0 `triple-terms`, §2), so the 38
tests of `eval-triple-terms` pass: data with triple terms builds, queries match them, take them
apart (`SUBJECT`, `PREDICATE`, `OBJECT`, `isTRIPLE`) and build them (`TRIPLE`, CONSTRUCT
templates), and `--format json|nt` write them as SPARQL 1.2 JSON results and N-Triples 1.2.
Directional language tags (`\"x\"@en--ltr`, RDF 1.2) are stored since format 1.2 (FORMAT.md
§5.1), so LANGDIR, hasLANGDIR and STRLANGDIR pass. Oxigraph 0.5.13 passes 240 of the 246 under
the same runner.
";
