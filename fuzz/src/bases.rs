//! The real files `query_damaged` damages: the first few thousand statements
//! of each dataset in `examples/` (so that every file has several blocks
//! per section, literals, blank nodes, and for qudt named graphs), built by
//! the real `rete build`, with queries about their own terms. Each is built
//! twice: flat (FORMAT.md §4.1, as every file below 8 M quads is) and with a
//! directory of small nodes (§4.3, as `rete build --block-quads N
//! --node-entries N` writes one), of depth 1, 2 and 3 for the three
//! datasets, so that damage reaches the nodes and the walks through them.

use oxrdf::Term;
use oxrdfio::{RdfFormat, RdfParser, RdfSerializer};
use rete_core::{QuadPattern, Store};
use rete_publisher::ingest::build::{BlockLayout, BuildOptions, build};
use rete_publisher::ingest::input::Input;
use std::path::{Path, PathBuf};

/// Statements taken from each example: past 1,024 quads, so that every
/// permutation has two blocks (FORMAT.md §8), and few enough that a query
/// costs a millisecond or so.
const STATEMENTS: usize = 1200;

/// The datasets and, for each, the directory its second file is built with:
/// (quads per permutation block, entries per node and root). 1,200
/// statements make 19, 75 and 75 blocks per permutation (and 204–245
/// dictionary blocks), so permutation directories of depth 1, 2 and 3, and
/// 51, 102 and 342 nodes in all (`tests/replay.rs` checks the depths).
const DATASETS: [(&str, &str, BlockLayout); 3] = [
    ("schema-org", "schema-org.nt", BlockLayout { block_quads: Some(64), node_entries: Some(8) }),
    ("qudt", "qudt.trig", BlockLayout { block_quads: Some(16), node_entries: Some(8) }),
    ("dbpedia-ontology", "dbpedia-ontology.ttl", BlockLayout { block_quads: Some(16), node_entries: Some(3) }),
];

/// A base file: its name, bytes and queries.
pub struct BaseFile {
    pub name: &'static str,
    /// Built with a directory (FORMAT.md §4.3) rather than flat.
    pub directory: bool,
    pub file: Vec<u8>,
    pub queries: Vec<String>,
}

/// The repository's `examples/` folder.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// Builds the base files (a second or so, once per process): the three
/// with a directory, then the three flat ones, each dataset in the same
/// place, so that `query_damaged`'s `base % 6` keeps the dataset `base % 3`
/// picked before directories came (and the regression inputs found on flat
/// files, `base` 105 and 214, stay on flat files).
pub fn base_files() -> Vec<BaseFile> {
    let temp = tempfile::tempdir().unwrap_or_else(|e| panic!("no temporary directory: {e}"));
    let mut flat = Vec::new();
    let mut with_directory = Vec::new();
    for (name, data, blocks) in DATASETS {
        let slice = write_slice(&examples_dir().join(name).join(data), temp.path());
        for (directory, blocks) in [(false, BlockLayout::default()), (true, blocks)] {
            let file = build_slice(&slice, blocks, temp.path());
            let mut queries = term_queries(&file);
            queries.extend(example_queries(name));
            let base = BaseFile { name, directory, file, queries };
            if directory { with_directory.push(base) } else { flat.push(base) }
        }
    }
    with_directory.extend(flat);
    with_directory
}

/// Writes the first [`STATEMENTS`] statements of `data` as N-Quads into `dir`.
fn write_slice(data: &Path, dir: &Path) -> PathBuf {
    let format = RdfFormat::from_extension(data.extension().and_then(|e| e.to_str()).unwrap_or_default()).unwrap_or(RdfFormat::NTriples);
    let text = std::fs::read(data).unwrap_or_else(|e| panic!("cannot read {}: {e}", data.display()));
    let mut nquads = RdfSerializer::from_format(RdfFormat::NQuads).for_writer(Vec::new());
    for quad in RdfParser::from_format(format).for_slice(&text).take(STATEMENTS) {
        let quad = quad.unwrap_or_else(|e| panic!("{}: {e}", data.display()));
        nquads.serialize_quad(&quad).unwrap_or_else(|e| panic!("{e}"));
    }
    let input = dir.join("slice.nq");
    std::fs::write(&input, nquads.finish().unwrap_or_else(|e| panic!("{e}"))).unwrap_or_else(|e| panic!("{e}"));
    input
}

/// Builds a `.rete` of the N-Quads file `input` with the given block layout.
fn build_slice(input: &Path, blocks: BlockLayout, dir: &Path) -> Vec<u8> {
    let output = dir.join("slice.rete");
    let options = BuildOptions {
        inputs: vec![Input::new(input, Some(RdfFormat::NQuads)).unwrap_or_else(|e| panic!("{e}"))],
        output: output.clone(),
        memory_bytes: 64 << 20,
        lenient: false,
        temp_dir: None,
        progress: false,
        metadata: Default::default(),
        pyramid: true,
        blocks,
    };
    build(&options).unwrap_or_else(|e| panic!("cannot build {} ({blocks:?}): {e:#}", input.display()));
    std::fs::read(&output).unwrap_or_else(|e| panic!("{e}"))
}

/// Queries about terms the file holds: one per pattern shape, joins,
/// aggregates, filters, DESCRIBE and CONSTRUCT, graphs.
fn term_queries(file: &[u8]) -> Vec<String> {
    let store = Store::open(file, 16 << 20).unwrap_or_else(|e| panic!("{e}"));
    let quads: Vec<[u64; 4]> = store.quads(QuadPattern { subject: None, predicate: None, object: None, graph: rete_core::read::GraphFilter::Any }).take(400).map(|q| q.unwrap_or_else(|e| panic!("{e}"))).collect();
    let term = |id: u64| store.term(id).unwrap_or_else(|e| panic!("{e}"));
    let (s, p) = quads.iter().find_map(|q| matches!(term(q[0]), Term::NamedNode(_)).then(|| (term(q[0]), term(q[1])))).unwrap_or_else(|| panic!("no IRI subject"));
    let literal = quads.iter().map(|q| term(q[2])).find(|t| matches!(t, Term::Literal(_))).unwrap_or_else(|| s.clone());
    let iri_object = quads.iter().map(|q| term(q[2])).find(|t| matches!(t, Term::NamedNode(_))).unwrap_or_else(|| s.clone());
    let graph = store.index().graphs.first().map(|g| term(g.id).to_string()).unwrap_or_else(|| "<urn:none>".into());
    vec![
        "SELECT * WHERE { ?s ?p ?o } LIMIT 50".into(),
        format!("SELECT ?p ?o WHERE {{ {s} ?p ?o }}"),
        format!("SELECT ?s ?o WHERE {{ ?s {p} ?o }} LIMIT 100"),
        format!("SELECT ?s ?p WHERE {{ ?s ?p {literal} }}"),
        format!("SELECT ?s WHERE {{ ?s {p} {iri_object} }}"),
        format!("ASK {{ {s} {p} ?o }}"),
        format!("DESCRIBE {s}"),
        format!("DESCRIBE {iri_object}"),
        format!("DESCRIBE ?s WHERE {{ ?s {p} ?o }} LIMIT 3"),
        format!("CONSTRUCT {{ ?s {p} ?o }} WHERE {{ ?s {p} ?o }} LIMIT 20"),
        format!("SELECT ?s ?x WHERE {{ ?s {p} ?o . ?o ?q ?x }} LIMIT 100"),
        "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }".into(),
        "SELECT ?type (COUNT(?s) AS ?n) WHERE { ?s a ?type } GROUP BY ?type ORDER BY DESC(?n) ?type LIMIT 20".into(),
        "SELECT ?o WHERE { ?s ?p ?o FILTER(isLiteral(?o) && regex(str(?o), \"a\", \"i\")) } LIMIT 10".into(),
        format!("SELECT ?o WHERE {{ ?s {p} ?o }} ORDER BY DESC(?o) LIMIT 5"),
        "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY ?g".into(),
        format!("SELECT ?s ?p ?o WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }} LIMIT 20"),
        "SELECT DISTINCT ?p WHERE { ?s ?p ?o } LIMIT 20".into(),
        format!("SELECT ?s ?label WHERE {{ ?s {p} ?o OPTIONAL {{ ?s <http://www.w3.org/2000/01/rdf-schema#label> ?label }} }} LIMIT 50"),
        format!("SELECT ?s (SAMPLE(?o) AS ?x) (MAX(STR(?o)) AS ?m) WHERE {{ ?s {p} ?o }} GROUP BY ?s LIMIT 10"),
        format!("SELECT ?x WHERE {{ {s} ({p}|^{p})+ ?x }} LIMIT 30"),
    ]
}

/// The example's own queries (some name terms outside the slice: their answers are empty).
fn example_queries(name: &str) -> Vec<String> {
    let dir = examples_dir().join(name).join("queries");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    paths.sort();
    paths.iter().filter(|p| p.extension().is_some_and(|e| e == "rq")).filter_map(|p| std::fs::read_to_string(p).ok()).collect()
}
