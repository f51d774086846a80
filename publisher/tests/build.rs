//! `rete build` end to end: round trips, determinism, bounded-memory paths,
//! edge terms, and corrupt files that must give errors, never panics.

use oxrdf::Dataset;
use oxrdfio::{RdfFormat, RdfParser};
use rete_core::read::{Directory, GraphFilter, QuadPattern};
use rete_core::{FormatError, ReadError, Store};
use rete_publisher::ingest::build::{BuildOptions, build};
use rete_publisher::ingest::input::Input;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn build_file(inputs: &[&Path], dir: &Path, name: &str, memory_bytes: usize) -> anyhow::Result<PathBuf> {
    build_with(inputs, dir, name, memory_bytes, true)
}

fn build_with(inputs: &[&Path], dir: &Path, name: &str, memory_bytes: usize, pyramid: bool) -> anyhow::Result<PathBuf> {
    let output = dir.join(name);
    let inputs = inputs.iter().map(|p| Input::new(p, None)).collect::<anyhow::Result<Vec<_>>>()?;
    build(&BuildOptions { inputs, output: output.clone(), memory_bytes, lenient: false, temp_dir: None, progress: false, metadata: Default::default(), pyramid, blocks: Default::default() })?;
    Ok(output)
}

/// Every quad of a file, read back through the reader, as an oxrdf dataset.
fn read_back(bytes: Vec<u8>) -> Result<Dataset, ReadError> {
    let store = Store::open(bytes, 1 << 20)?;
    let mut dataset = Dataset::new();
    for quad in store.quads(QuadPattern { subject: None, predicate: None, object: None, graph: GraphFilter::Any }) {
        let [s, p, o, g] = quad?;
        let subject = match store.term(s)? {
            oxrdf::Term::NamedNode(n) => oxrdf::NamedOrBlankNode::from(n),
            oxrdf::Term::BlankNode(b) => b.into(),
            other => panic!("literal subject {other}"),
        };
        let oxrdf::Term::NamedNode(predicate) = store.term(p)? else { panic!("bad predicate") };
        let graph = match g {
            0 => oxrdf::GraphName::DefaultGraph,
            g => match store.term(g)? {
                oxrdf::Term::NamedNode(n) => n.into(),
                oxrdf::Term::BlankNode(b) => b.into(),
                other => panic!("literal graph {other}"),
            },
        };
        dataset.insert(&oxrdf::Quad::new(subject, predicate, store.term(o)?, graph));
    }
    Ok(dataset)
}

fn parse_reference(path: &Path) -> Option<Dataset> {
    let name = path.to_string_lossy();
    let format = if name.ends_with(".rdf") { RdfFormat::RdfXml } else if name.ends_with(".nt") { RdfFormat::NTriples } else { RdfFormat::Turtle };
    let base = format!("file://{}", std::path::absolute(path).ok()?.display());
    let parser = RdfParser::from_format(format).with_base_iri(base).ok()?;
    let mut dataset = Dataset::new();
    for quad in parser.for_reader(std::fs::File::open(path).ok()?) {
        dataset.insert(&quad.ok()?);
    }
    Some(dataset)
}

fn canonical(mut dataset: Dataset) -> Dataset {
    dataset.canonicalize(oxrdf::dataset::CanonicalizationAlgorithm::Unstable);
    dataset
}

fn data_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            data_files(&path, out);
        } else if ["ttl", "nt", "rdf", "nq", "trig"].iter().any(|ext| path.extension().is_some_and(|e| e == *ext)) {
            out.push(path);
        }
    }
}

#[test]
fn round_trips_every_sparql_test_data_file() {
    let mut files = Vec::new();
    data_files(&repo().join("../shared/sparql-tests/sparql"), &mut files);
    assert!(files.len() > 300, "expected the W3C test data beside the repo, found {} files", files.len());
    let dir = tempfile::tempdir().unwrap();
    let (mut compared, mut rejected) = (0, 0);
    for file in &files {
        let reference = parse_reference(file);
        match (reference, build_file(&[file], dir.path(), "t.rete", 1 << 20)) {
            (Some(reference), Ok(built)) => {
                let back = read_back(std::fs::read(built).unwrap()).unwrap();
                assert!(canonical(back) == canonical(reference), "{} does not round-trip", file.display());
                compared += 1;
            }
            (None, Err(_)) => rejected += 1,
            (Some(_), Err(error)) => panic!("{} parses but does not build: {error:#}", file.display()),
            (None, Ok(_)) => panic!("{} is invalid but built", file.display()),
        }
    }
    assert!(compared > 300, "compared {compared}, rejected {rejected}");
}

#[test]
fn round_trips_examples() {
    let mut files = Vec::new();
    data_files(&repo().join("examples"), &mut files);
    let dir = tempfile::tempdir().unwrap();
    for file in files.iter().filter(|f| !f.to_string_lossy().contains("queries")) {
        let Some(reference) = parse_reference(file) else { continue };
        let built = build_file(&[file], dir.path(), "e.rete", 64 << 20).unwrap();
        let back = read_back(std::fs::read(built).unwrap()).unwrap();
        assert_eq!(back.len(), reference.len(), "{}", file.display());
        assert!(canonical(back) == canonical(reference), "{} does not round-trip", file.display());
    }
}

/// A few thousand quads with many distinct terms, named graphs and blank nodes.
fn synthetic_nquads(dir: &Path, quads: usize) -> PathBuf {
    use std::fmt::Write;
    let mut text = String::new();
    for i in 0..quads {
        let graph = if i % 3 == 0 { String::new() } else { format!(" <http://example.org/graph/{}>", i % 5) };
        let object = match i % 4 {
            0 => format!("<http://example.org/thing/{}>", (i * 7919) % quads),
            1 => format!("\"value {i} é\\n\"@en"),
            2 => format!("\"{}\"^^<http://www.w3.org/2001/XMLSchema#integer>", i % 1000),
            _ => format!("_:n{}", i % 97),
        };
        writeln!(text, "<http://example.org/thing/{}> <http://example.org/p{}> {object}{graph} .", i % 1500, i % 13).unwrap();
    }
    let path = dir.join("synthetic.nq");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn output_is_deterministic_across_memory_budgets() {
    let dir = tempfile::tempdir().unwrap();
    let input = synthetic_nquads(dir.path(), 20_000);
    // The community levels are skipped when they do not fit --mem (by design),
    // so files built with different budgets are compared without them.
    let roomy = build_with(&[&input], dir.path(), "roomy.rete", 256 << 20, false).unwrap();
    let again = build_with(&[&input], dir.path(), "again.rete", 256 << 20, false).unwrap();
    // 64 KiB forces term runs, on-disk id mapping, windowed renumbering and multi-run sorts.
    let tight = build_with(&[&input], dir.path(), "tight.rete", 64 << 10, false).unwrap();
    // 1 MiB: the term table spills runs while the quads stay in memory.
    let mixed = build_with(&[&input], dir.path(), "mixed.rete", 1 << 20, false).unwrap();
    let roomy = std::fs::read(roomy).unwrap();
    assert!(roomy == std::fs::read(again).unwrap(), "two builds differ");
    assert!(roomy == std::fs::read(tight).unwrap(), "a tight memory budget changes the output");
    assert!(roomy == std::fs::read(mixed).unwrap(), "a small memory budget changes the output");
    let reference = parse_reference_nquads(&input);
    assert!(canonical(read_back(roomy).unwrap()) == canonical(reference));
}

fn parse_reference_nquads(path: &Path) -> Dataset {
    RdfParser::from_format(RdfFormat::NQuads).for_reader(std::fs::File::open(path).unwrap()).map(|q| q.unwrap()).collect()
}

/// Builds `input` with `rete build --threads N` and returns the file's bytes.
fn build_with_threads(input: &Path, output: &Path, threads: &str) -> Vec<u8> {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_rete")).args(["build", "-q", "--threads", threads, "-o"]).arg(output).arg(input).status().unwrap();
    assert!(status.success());
    std::fs::read(output).unwrap()
}

#[test]
fn output_is_deterministic_across_thread_counts() {
    let dir = tempfile::tempdir().unwrap();
    let input = synthetic_nquads(dir.path(), 20_000);
    let run = |threads: &str, name: &str| build_with_threads(&input, &dir.path().join(name), threads);
    let one = run("1", "one.rete");
    assert!(one == run("4", "four.rete"));
    let summary = Store::open(one, 1 << 20).unwrap().summary().unwrap().expect("a SUMMARY section");
    assert!(!summary.levels.is_empty(), "the comparison covers the community levels");
}

#[test]
fn keeps_edge_terms_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(1 << 20);
    let text = format!(
        "@prefix ex: <http://example.org/> .\n\
         ex:s ex:p \"01\"^^<http://www.w3.org/2001/XMLSchema#integer>, \"1.0E0\"^^<http://www.w3.org/2001/XMLSchema#double> .\n\
         ex:s ex:p \"tab\\there \\\"quoted\\\" \\u00e9 \\U0001F600\", \"\", \"chat\"@fr, \"colour\"@en-GB .\n\
         <http://example.org/ünïcødé/%20> ex:p [ ex:q ( 1 2 ) ] .\n\
         ex:s ex:long \"{long}\" .\n"
    );
    let input = dir.path().join("edge.ttl");
    std::fs::write(&input, text).unwrap();
    let built = build_file(&[&input], dir.path(), "edge.rete", 1 << 20).unwrap();
    let back = read_back(std::fs::read(built).unwrap()).unwrap();
    let reference = parse_reference(&input).unwrap();
    assert!(canonical(back.clone()) == canonical(reference));
    let lexical: Vec<String> = back.iter().filter_map(|q| match q.object {
        oxrdf::TermRef::Literal(l) => Some(l.value().to_owned()),
        _ => None,
    }).collect();
    assert!(lexical.contains(&"01".to_owned()), "lexical form kept");
    assert!(lexical.contains(&long));
}

#[test]
fn empty_input_gives_a_valid_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("empty.nt");
    std::fs::write(&input, "").unwrap();
    let built = build_file(&[&input], dir.path(), "empty.rete", 1 << 20).unwrap();
    let store = Store::open(std::fs::read(built).unwrap(), 1 << 20).unwrap();
    assert_eq!(store.header().quad_count, 0);
    assert_eq!(store.term(1).unwrap_err().to_string(), "corrupt dictionary at byte 0: term id 1 is not in the dictionary (0 terms)");
    assert_eq!(store.quads(QuadPattern { subject: None, predicate: None, object: None, graph: GraphFilter::Any }).count(), 0);
}

fn small_file() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let input = synthetic_nquads(dir.path(), 3000);
    std::fs::read(build_file(&[&input], dir.path(), "small.rete", 1 << 20).unwrap()).unwrap()
}

/// Opens a file and reads every block and quad; any error is fine, a panic is not.
fn read_everything(bytes: Vec<u8>) -> Result<usize, ReadError> {
    use rete_core::read::BlockKey;
    let store = Store::open(bytes, 1 << 20)?;
    store.card()?;
    store.axioms(true)?;
    if let Some(summary) = store.summary()? {
        for node in summary.levels.iter().flat_map(|level| &level.nodes) {
            for page in 0..node.members.pages {
                store.member_page(&node.members, page)?;
            }
        }
    }
    for n in 0..store.block_count(Directory::Dictionary) {
        store.block(BlockKey::Dictionary(n))?;
    }
    for permutation in rete_core::Permutation::ALL {
        for n in 0..store.block_count(Directory::Permutation(permutation)) {
            store.block(BlockKey::Permutation(permutation, n))?;
        }
    }
    if let Some(root) = store.search_root()? {
        for n in 0..root.blocks.len() {
            store.block(BlockKey::Search(n))?;
        }
    }
    let mut count = 0;
    for quad in store.quads(QuadPattern { subject: None, predicate: None, object: None, graph: GraphFilter::Any }) {
        for id in quad? {
            if id != 0 {
                store.term(id)?;
            }
        }
        count += 1;
    }
    Ok(count)
}

#[test]
fn flipped_bytes_give_errors_never_panics() {
    let original = small_file();
    let total = read_everything(original.clone()).unwrap();
    let step = (original.len() / 1500).max(1);
    for offset in (0..original.len()).step_by(step) {
        let mut bytes = original.clone();
        bytes[offset] ^= 0x5a;
        // Header, INDEX, CARD, the axioms, SUMMARY and every block carry a checksum, and the format has no
        // padding: a reader that reads everything must notice every flip.
        let result = read_everything(bytes);
        assert!(result.is_err(), "flip at {offset} went unnoticed (read {result:?} of {total} quads)");
    }
}

#[test]
fn truncated_files_give_errors() {
    let original = small_file();
    let step = (original.len() / 500).max(1);
    for length in (0..original.len()).step_by(step) {
        let error = read_everything(original[..length].to_vec()).expect_err("truncated file read fine");
        assert!(!error.to_string().is_empty());
    }
}

#[test]
fn wrong_magic_and_future_version_are_named() {
    let original = small_file();
    let mut bad_magic = original.clone();
    bad_magic[0] = b'X';
    assert!(matches!(Store::open(bad_magic, 1024).err(), Some(ReadError::Format(FormatError::BadMagic))));
    let mut future = original.clone();
    future[8] = 3;
    let error = Store::open(future, 1024).err().unwrap();
    assert_eq!(error.to_string(), "file is rete format 3; this build reads formats 1 to 2");
    // A required feature this build does not know (FORMAT.md §2) is refused by name before anything is read.
    let mut unknown_feature = original.clone();
    unknown_feature[0x48] = 1 << 5;
    let header_length = u32::from_le_bytes(unknown_feature[0x0C..0x10].try_into().unwrap()) as usize;
    let checksum = rete_core::format::header::header_checksum(&unknown_feature[..header_length]);
    unknown_feature[0x44..0x48].copy_from_slice(&checksum.to_le_bytes());
    let error = Store::open(unknown_feature, 1024).err().unwrap();
    assert_eq!(error.to_string(), "file needs required feature bit 5 this build does not know (it knows: triple-terms, directory, value-order, restart-codings); read it with a newer rete");
}

/// `lines` N-Triples statements, about 80 bytes each; statement `i` is bad when `bad(i)`.
fn ntriples(lines: usize, end_of_line: &str, bad: impl Fn(usize) -> bool) -> String {
    let mut text = String::new();
    for i in 0..lines {
        let object = if bad(i) { "oops".to_owned() } else { format!("\"value {i}\"") };
        text.push_str(&format!("<http://example.org/s/{}> <http://example.org/p/{}> {object} .{end_of_line}", i / 3, i % 7));
    }
    text
}

#[test]
fn errors_far_into_a_large_file_are_located_exactly() {
    // Tens of parsing chunks: the position must count the lines and bytes of all before.
    let dir = tempfile::tempdir().unwrap();
    for end_of_line in ["\n", "\r\n"] {
        let bad_line = 70_001;
        let text = ntriples(80_000, end_of_line, |i| i + 1 == bad_line);
        let input = dir.path().join("big.nt");
        std::fs::write(&input, &text).unwrap();
        let error = build_file(&[&input], dir.path(), "big.rete", 64 << 20).unwrap_err();
        let error = error.downcast_ref::<rete_publisher::ingest::parse::InputError>().expect("a located syntax error");
        let line_start = text.split_inclusive('\n').take(bad_line - 1).map(str::len).sum::<usize>();
        let line = &text[line_start..].lines().next().unwrap();
        let column = line.find("oops").unwrap();
        assert_eq!((error.line, error.column, error.byte), (bad_line as u64, column as u64 + 1, (line_start + column) as u64), "{end_of_line:?}");
        assert_eq!(error.quote.as_deref(), Some(line.trim_end_matches('\r')));
        assert!(!dir.path().join("big.rete").exists());
    }
}

#[test]
fn lenient_counts_bad_statements_in_every_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.nt");
    std::fs::write(&input, ntriples(50_000, "\n", |i| i % 997 == 0)).unwrap();
    let output = dir.path().join("bad.rete");
    let inputs = vec![Input::new(&input, None).unwrap()];
    let report = build(&BuildOptions { inputs, output: output.clone(), memory_bytes: 64 << 20, lenient: true, temp_dir: None, progress: false, metadata: Default::default(), pyramid: true, blocks: Default::default() }).unwrap();
    let bad = (0..50_000).filter(|i| i % 997 == 0).count() as u64;
    assert_eq!((report.skipped, report.parsed), (bad, 50_000 - bad));
    assert_eq!(read_back(std::fs::read(output).unwrap()).unwrap().len() as u64, 50_000 - bad);
}

#[test]
fn turtle_with_anonymous_nodes_is_deterministic_across_thread_counts() {
    // Turtle is parsed as one stream in batches; its anonymous nodes get random labels
    // from the parser, which the build renames in order of appearance.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("@prefix ex: <http://example.org/> .\n");
    for i in 0..30_000 {
        text.push_str(&format!("ex:s{} ex:p [ ex:q {i} ; ex:r [ ex:q \"{}\" ] ] .\n", i % 1000, i % 13));
    }
    let input = dir.path().join("anon.ttl");
    std::fs::write(&input, &text).unwrap();
    let run = |threads: &str, name: &str| build_with_threads(&input, &dir.path().join(name), threads);
    let one = run("1", "one.rete");
    assert!(one == run("3", "three.rete"));
    let reference = parse_reference(&input).unwrap();
    assert!(canonical(read_back(one).unwrap()) == canonical(reference));
}

#[test]
fn the_same_data_gives_the_same_file_however_its_path_is_spelled() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let input = synthetic_nquads(dir.path(), 500);
    let spellings = [input.clone(), dir.path().join(".").join("synthetic.nq"), dir.path().join("sub").join("..").join("synthetic.nq")];
    let files: Vec<Vec<u8>> = spellings.iter().enumerate().map(|(i, path)| std::fs::read(build_file(&[path], dir.path(), &format!("{i}.rete"), 1 << 20).unwrap()).unwrap()).collect();
    assert!(files.iter().all(|file| file == &files[0]), "the content depends on the input's path");
    let card = Store::open(files[0].clone(), 1 << 20).unwrap().card().unwrap();
    assert_eq!(card.sources.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["synthetic.nq"]);
}

/// FORMAT.md §8 and docs/READ-PATH.md, "Why the bounds hold": the writer's
/// blocks keep INDEX inside the open's first read and each dictionary block's
/// id range narrow, so one triple pattern reads in 3 rounds cold (the open;
/// its terms with its quad blocks speculated; the printed terms).
#[test]
fn block_sizes_keep_index_in_the_first_read_and_patterns_in_3_rounds() {
    use rete_core::read::{BlockCache, RoundOptions, open_in_rounds, run_in_rounds};
    use rete_core::{RangeSource, SectionKind};
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("students.nt");
    std::fs::write(&input, students(36_000)).unwrap();
    let bytes = std::fs::read(build_file(&[&input], dir.path(), "students.rete", 256 << 20).unwrap()).unwrap();
    let store = Store::open(bytes.as_slice(), 1 << 20).unwrap();
    assert!(store.header().quad_count > 200_000);
    let index = store.header().section(SectionKind::Index).unwrap();
    assert!(index.offset + index.length <= 16384, "INDEX ends at {}", index.offset + index.length);
    assert!(store.block_count(Directory::Dictionary) <= 256, "{} dictionary blocks", store.block_count(Directory::Dictionary));
    // SPO, POS and OSP (what a bound lookup reads) have blocks of half the size.
    for permutation in rete_core::Permutation::ALL {
        let blocks = store.block_count(Directory::Permutation(permutation));
        let most = if matches!(permutation, rete_core::Permutation::Spo | rete_core::Permutation::Pos | rete_core::Permutation::Osp) { 256 } else { 128 };
        assert!((most / 2..=most).contains(&blocks), "{}: {blocks} blocks", permutation.name());
    }
    for text in [
        "SELECT ?o WHERE { <http://www.Department7.University0.edu/Student12007> ?p ?o }",
        "SELECT ?s WHERE { ?s <http://swat.cse.lehigh.edu/onto/univ-bench.owl#takesCourse> <http://www.Department3.University0.edu/Course123> }",
        "ASK { <http://www.Department7.University0.edu/Student12007> <http://swat.cse.lehigh.edu/onto/univ-bench.owl#name> \"Student12007\" }",
        "DESCRIBE <http://www.Department0.University0.edu/Student30000>",
    ] {
        let run = |store: &Store<_>| answer_lines(store, text);
        let fetch = |ranges: &[rete_core::ByteRange]| bytes.as_slice().read_ranges(ranges);
        let (cold, opened) = open_in_rounds(fetch, BlockCache::new(64 << 20)).unwrap();
        let (answer, stats) = run_in_rounds(&cold, &RoundOptions::default(), fetch, run).unwrap();
        let answer = answer.unwrap();
        assert!(!answer.is_empty() && answer != ["false"], "{text}: {answer:?}");
        assert_eq!(answer, answer_lines(&store, text).unwrap(), "{text}");
        assert_eq!(opened.rounds, 1, "{text}");
        assert!(opened.rounds + stats.rounds <= 3, "{text}: {} rounds after the open", stats.rounds);
    }
}

/// LUBM-like N-Triples: `count` students in 60 departments, 6 quads each.
fn students(count: usize) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    for i in 0..count {
        let student = format!("<http://www.Department{}.University0.edu/Student{i}>", i % 60);
        let ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
        writeln!(text, "{student} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{ub}Student> .").unwrap();
        writeln!(text, "{student} <{ub}name> \"Student{i}\" .").unwrap();
        writeln!(text, "{student} <{ub}emailAddress> \"Student{i}@Department{}.University0.edu\" .", i % 60).unwrap();
        writeln!(text, "{student} <{ub}memberOf> <http://www.Department{}.University0.edu> .", i % 60).unwrap();
        for course in [i % 500, (i * 7 + 3) % 500] {
            writeln!(text, "{student} <{ub}takesCourse> <http://www.Department{}.University0.edu/Course{course}> .", course % 60).unwrap();
        }
    }
    text
}

/// Issue 17, FORMAT.md §4.3: a file written with a directory of depth 1
/// (fixed blocks of 1,024 quads, nodes of at most 32 entries, as the writer
/// does past 8.4M quads with 16,384 and 512) answers like the flat file, opens
/// with one read (the roots lie in the first 16 KiB), and reads one pattern,
/// an ASK or a DESCRIBE within the depth-1 bound: 3 + 2 rounds cold, the open
/// included (a round for the nodes of the constants, speculated together,
/// and one for the nodes of the printed terms).
#[test]
fn issue_17_a_directory_of_depth_1_answers_like_the_flat_file_within_its_bounds() {
    use rete_core::format::header::{FEATURE_DIRECTORY, FEATURE_RESTART_CODINGS};
    use rete_core::read::{BlockCache, RoundOptions, open_in_rounds, run_in_rounds};
    use rete_core::{RangeSource, SectionKind};
    use rete_publisher::ingest::build::BlockLayout;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("students.nt");
    std::fs::write(&input, students(36_000)).unwrap();
    let flat = std::fs::read(build_file(&[&input], dir.path(), "flat.rete", 256 << 20).unwrap()).unwrap();
    let output = dir.path().join("tree.rete");
    let inputs = vec![Input::new(&input, None).unwrap()];
    let blocks = BlockLayout { block_quads: Some(1024), node_entries: Some(32) };
    build(&BuildOptions { inputs, output: output.clone(), memory_bytes: 256 << 20, lenient: false, temp_dir: None, progress: false, metadata: Default::default(), pyramid: true, blocks }).unwrap();
    let tree = std::fs::read(&output).unwrap();

    let flat_store = Store::open(flat.as_slice(), 1 << 20).unwrap();
    let store = Store::open(tree.as_slice(), 1 << 20).unwrap();
    let header = store.header();
    // FORMAT.md §6.1: fixed-size blocks carry coding bytes.
    assert_eq!((header.major_version, header.required_features), (2, FEATURE_DIRECTORY | FEATURE_RESTART_CODINGS));
    assert_eq!(flat_store.header().required_features, 0, "the default writer stays flat at this size");
    assert!(header.section(SectionKind::Directory).is_some());
    let index = header.section(SectionKind::Index).unwrap();
    assert!(index.offset + index.length <= 16384, "INDEX ends at {}", index.offset + index.length);
    let directories = std::iter::once(Directory::Dictionary).chain(rete_core::Permutation::ALL.map(Directory::Permutation));
    for directory in directories {
        assert_eq!(store.depth(directory), 1, "{}", directory.name());
        assert!(store.block_count(directory) > 32, "{}: {} blocks", directory.name(), store.block_count(directory));
    }
    assert_eq!(store.block_count(Directory::Permutation(rete_core::Permutation::Spo)), 211);

    let ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
    let queries = [
        // FORMAT.md §4.3 bounds at depth 1, the dictionary's nodes read whole (they are
        // under 32 KiB here): a pattern printing terms ≤ 4 rounds cold, an ASK ≤ 3.
        ("SELECT ?p ?o WHERE { <http://www.Department7.University0.edu/Student12007> ?p ?o }".to_owned(), 4),
        (format!("SELECT ?s WHERE {{ ?s <{ub}takesCourse> <http://www.Department3.University0.edu/Course123> }}"), 4),
        (format!("ASK {{ <http://www.Department7.University0.edu/Student12007> <{ub}name> \"Student12007\" }}"), 3),
        ("DESCRIBE <http://www.Department0.University0.edu/Student30000>".to_owned(), 4),
        ("ASK { ?s ?p ?o }".to_owned(), 3),
        (format!("SELECT (COUNT(*) AS ?n) WHERE {{ ?s a <{ub}Student> ; <{ub}memberOf> <http://www.Department59.University0.edu> }}"), 64),
        (format!("SELECT ?s ?c WHERE {{ ?s <{ub}memberOf> <http://www.Department5.University0.edu> ; <{ub}takesCourse> ?c }} ORDER BY ?s ?c LIMIT 50"), 64),
        (format!("SELECT ?name WHERE {{ ?s <{ub}name> ?name FILTER(STRSTARTS(?name, \"Student3599\")) }} ORDER BY ?name"), 64),
    ];
    for (text, max_rounds) in &queries {
        let expected = answer_lines(&flat_store, text).unwrap();
        assert!(!expected.is_empty() && expected != ["false"], "{text}: {expected:?}");
        assert_eq!(answer_lines(&store, text).unwrap(), expected, "{text}: read whole");
        let mut rounds = Vec::new();
        for file in [&flat, &tree] {
            let fetch = |ranges: &[rete_core::ByteRange]| file.as_slice().read_ranges(ranges);
            let (cold, opened) = open_in_rounds(fetch, BlockCache::new(64 << 20)).unwrap();
            let (answer, stats) = run_in_rounds(&cold, &RoundOptions::default(), fetch, |store: &Store<_>| answer_lines(store, text)).unwrap();
            assert_eq!(answer.unwrap(), expected, "{text}: in rounds");
            assert_eq!(opened.rounds, 1, "{text}");
            rounds.push((opened.rounds + stats.rounds, stats.bytes));
        }
        println!("{text}: cold rounds and bytes after the open, flat {:?}, depth 1 {:?}", rounds[0], rounds[1]);
        assert!(rounds[1].0 <= *max_rounds, "{text}: {} rounds, the open included", rounds[1].0);
    }
}

/// A query's answer as lines (solutions, boolean or triples), or its error.
fn answer_lines<S: rete_core::RangeSource>(store: &Store<S>, text: &str) -> Result<Vec<String>, String> {
    use rete_core::sparql::{Answer, QueryOptions, query};
    match query(store, text, None, &QueryOptions::default()).map_err(|e| e.to_string())? {
        Answer::Solutions(solutions) => solutions.map(|s| s.map(|s| format!("{s:?}")).map_err(|e| e.to_string())).collect(),
        Answer::Boolean(value) => Ok(vec![value.to_string()]),
        Answer::Graph(triples) => triples.map(|t| t.map(|t| t.to_string()).map_err(|e| e.to_string())).collect(),
        _ => Err("an answer of a kind this test does not know".into()),
    }
}
