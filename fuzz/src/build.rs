//! Target `build_input`: `rete build` on damaged N-Triples, N-Quads, Turtle
//! or TriG. The first input byte picks the syntax and options, the rest is
//! the document. oxrdfio parsing the same bytes is the oracle: a document it
//! parses must build, with as many statements parsed and as many distinct
//! quads in the file; a document it rejects must fail with rete's located
//! error at the same line and column. Either way nothing panics, and a
//! failed build leaves no output file and no temporary file behind. A
//! first-byte bit builds with a directory of tiny nodes (FORMAT.md §4.3), so
//! that the writer's trees are built over arbitrary data too; every file
//! built must read back whole (each block of the seven directories, a scan
//! of every quad).

use oxrdfio::{RdfFormat, RdfParser};
use rete_core::format::write::ContentHasher;
use rete_core::read::{BlockKey, Directory, GraphFilter};
use rete_core::{Permutation, QuadPattern, Store};
use rete_publisher::ingest::build::{BlockLayout, BuildOptions, build};
use rete_publisher::ingest::input::Input;
use rete_publisher::ingest::parse::InputError;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The syntaxes, by the low two bits of the first byte.
const FORMATS: [(RdfFormat, &str); 4] = [(RdfFormat::NTriples, "nt"), (RdfFormat::NQuads, "nq"), (RdfFormat::Turtle, "ttl"), (RdfFormat::TriG, "trig")];
/// First-byte bits: skip bad statements; gzip the document; or give the
/// bytes as they are as a `.gz` file (a damaged gzip stream).
const LENIENT: u8 = 1 << 2;
const GZIP: u8 = 1 << 3;
const RAW_GZIP: u8 = 1 << 4;
/// First-byte bit: `--block-quads 4 --node-entries 2`, a directory as deep
/// as the data allows (depth 3 past 32 blocks).
const DIRECTORY: u8 = 1 << 5;

/// What [`build_input`] saw, for tests.
#[derive(Debug, PartialEq, Eq)]
pub enum Built {
    /// The input was empty.
    Nothing,
    /// `rete build` wrote a file of this many quads.
    File { quads: u64 },
    /// `rete build` refused the document at this line and column.
    Rejected { line: u64, column: u64 },
    /// `rete build` failed otherwise (a damaged gzip stream, or `--lenient` with nothing left).
    Failed,
}

/// Builds the document in `data` (see the module doc).
pub fn build_input(data: &[u8]) -> Built {
    let Some((&options, document)) = data.split_first() else { return Built::Nothing };
    let (format, extension) = FORMATS[usize::from(options & 3)];
    let lenient = options & LENIENT != 0;
    let dir = WORK_DIR.with(|dir| dir.clone());
    let dir = dir.as_path();
    if let Err(e) = std::fs::create_dir(dir) {
        assert!(e.kind() == std::io::ErrorKind::AlreadyExists, "cannot make {}: {e}", dir.display());
    }
    let name = match options {
        o if o & RAW_GZIP != 0 => format!("input.{extension}.gz"),
        o if o & GZIP != 0 => format!("input.{extension}.gz"),
        _ => format!("input.{extension}"),
    };
    let input = dir.join(&name);
    let bytes = if options & RAW_GZIP == 0 && options & GZIP != 0 { gzip(document) } else { document.to_vec() };
    std::fs::write(&input, &bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", input.display()));
    let output = dir.join("out.rete");
    let build_options = BuildOptions {
        inputs: vec![Input::new(&input, None).unwrap_or_else(|e| panic!("{e:#}"))],
        output: output.clone(),
        memory_bytes: 1 << 20,
        lenient,
        temp_dir: None,
        progress: false,
        metadata: Default::default(),
        pyramid: true,
        blocks: if options & DIRECTORY != 0 { BlockLayout { block_quads: Some(4), node_entries: Some(2) } } else { BlockLayout::default() },
    };
    let built = POOL.with(|pool| pool.install(|| build(&build_options)));
    let oracle = (options & RAW_GZIP == 0).then(|| parse(document, format, &input));
    match (&built, oracle) {
        (Ok(report), Some(Ok(quads))) if !lenient => {
            assert_eq!(report.parsed, quads.0, "rete parsed {} statements, oxrdfio {}", report.parsed, quads.0);
            let file = std::fs::read(&output).unwrap_or_else(|e| panic!("build succeeded but {} is unreadable: {e}", output.display()));
            check_file(&file, quads.1);
        }
        (Ok(_), Some(Err(error))) if !lenient => panic!("rete built a document oxrdfio rejects (error at line and column {error:?})"),
        (Ok(report), _) => {
            let file = std::fs::read(&output).unwrap_or_else(|e| panic!("build succeeded but {} is unreadable: {e}", output.display()));
            check_file(&file, report.quads);
        }
        (Err(error), Some(Err(expected))) if !lenient => {
            let located = error.chain().find_map(|e| e.downcast_ref::<InputError>()).unwrap_or_else(|| panic!("build failed without a line and column: {error:#}"));
            assert_eq!((located.line, located.column), expected, "rete and oxrdfio disagree on where the error is: {error:#}");
        }
        (Err(error), Some(Ok(_))) if !lenient => panic!("rete failed on a document oxrdfio parses: {error:#}"),
        (Err(_), _) => {}
    }
    if built.is_err() {
        assert!(!output.exists(), "a failed build left {}", output.display());
    }
    let left: Vec<PathBuf> = std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    let stray: Vec<&PathBuf> = left.iter().filter(|p| **p != input && **p != output).collect();
    assert!(stray.is_empty(), "build left temporary files: {stray:?}");
    let _ = std::fs::remove_file(&output);
    let _ = std::fs::remove_file(&input);
    std::fs::remove_dir(dir).unwrap_or_else(|e| panic!("cannot remove {}: {e}", dir.display()));
    match built {
        Ok(report) => Built::File { quads: report.quads },
        Err(error) => match error.chain().find_map(|e| e.downcast_ref::<InputError>()) {
            Some(located) => Built::Rejected { line: located.line, column: located.column },
            None => Built::Failed,
        },
    }
}

/// Statements and distinct quads oxrdfio reads, or the 1-based line and
/// column of its first error. The base IRI is the one `rete build` gives.
fn parse(document: &[u8], format: RdfFormat, input: &Path) -> Result<(u64, u64), (u64, u64)> {
    let base = format!("file://{}", input.display());
    let parser = RdfParser::from_format(format).with_base_iri(&base).unwrap_or_else(|e| panic!("{e}"));
    let mut statements = 0;
    let mut distinct = HashSet::new();
    for quad in parser.for_slice(document) {
        match quad {
            Ok(quad) => {
                statements += 1;
                distinct.insert(quad);
            }
            Err(error) => {
                // Without a position rete says line 0, column 0, as `parse::locate` does.
                return Err(error.location().map_or((0, 0), |range| (range.start.line + 1, range.start.column + 1)));
            }
        }
    }
    Ok((statements, distinct.len() as u64))
}

/// A file `rete build` wrote opens, holds `quads` quads, its content hash
/// is right, and it reads back whole: every block its directories list
/// (through their nodes, when it has some) and every quad.
fn check_file(file: &[u8], quads: u64) {
    let store = Store::open(file, 1 << 20).unwrap_or_else(|e| panic!("rete build wrote a file that does not open: {e}"));
    assert_eq!(store.header().quad_count, quads, "distinct quads in the file and in the input differ");
    let mut hasher = ContentHasher::default();
    hasher.update(file);
    assert_eq!(hasher.finish(), store.header().content_hash, "content hash mismatch");
    store.card().unwrap_or_else(|e| panic!("rete build wrote a bad CARD: {e}"));
    store.summary().unwrap_or_else(|e| panic!("rete build wrote a bad SUMMARY: {e}"));
    for directory in std::iter::once(Directory::Dictionary).chain(Permutation::ALL.map(Directory::Permutation)) {
        for n in 0..store.block_count(directory) {
            let key = match directory {
                Directory::Dictionary => BlockKey::Dictionary(n),
                Directory::Permutation(p) => BlockKey::Permutation(p, n),
            };
            store.block(key).unwrap_or_else(|e| panic!("rete build wrote a file whose {} block {n} does not read: {e}", directory.name()));
        }
    }
    let every = QuadPattern { subject: None, predicate: None, object: None, graph: GraphFilter::Any };
    let mut scanned = 0u64;
    for quad in store.quads(every) {
        quad.unwrap_or_else(|e| panic!("rete build wrote a file whose quads do not scan: {e}"));
        scanned += 1;
    }
    assert_eq!(scanned, quads, "a scan of every quad found {scanned} of the header's {quads}");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap_or_else(|e| panic!("{e}"));
    encoder.finish().unwrap_or_else(|e| panic!("{e}"))
}

/// Names the work directory and makes the thread pool before runs are timed.
pub fn init() {
    WORK_DIR.with(|_| ());
    POOL.with(|_| ());
}

thread_local! {
    /// The build runs on one thread (one fuzzing process, one core), and
    /// that thread is the calling one: a pool of one thread that is the
    /// caller itself (`use_current_thread`), so rayon runs each parallel
    /// step inline and `install` hands nothing to another thread. Called
    /// from outside its pool, every step was handed to the pool's thread
    /// and waited for (wake-ups, `sched_yield` spinning: most of an input's
    /// CPU time); a pool of its own thread still cost two hand-offs per
    /// input (docs/RELIABILITY.md "Throughput"). One pool per calling thread,
    /// as each test of `cargo test` runs on a thread of its own.
    static POOL: rayon::ThreadPool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
        .unwrap_or_else(|e| panic!("no thread pool: {e}"));
}

thread_local! {
    /// Where a run writes its input and output, on tmpfs when there is one:
    /// one name per thread (tests run on several), so that the base IRI the
    /// input's relative IRIs resolve against stays the same from run to run.
    /// The directory exists only during a run: made at its start, removed at
    /// its end, once empty. A directory made once and kept was never removed
    /// (a static is never dropped, and libFuzzer ends with `exit`): every
    /// fuzzing process left one behind in /dev/shm.
    static WORK_DIR: PathBuf = {
        let shm = Path::new("/dev/shm");
        let made = tempfile::Builder::new().prefix("rete-fuzz-build-").tempdir_in(if shm.is_dir() { shm } else { Path::new(".") });
        let made = made.or_else(|_| tempfile::tempdir()).unwrap_or_else(|e| panic!("no temporary directory: {e}"));
        // Dropping it removes it: only its unique name is kept.
        made.path().to_path_buf()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_leaves_no_work_directory_behind() {
        let dir = WORK_DIR.with(|dir| dir.clone());
        assert_eq!(build_input(b"\x00<http://a/s> <http://a/p> <http://a/o> .\n"), Built::File { quads: 1 });
        assert_eq!(build_input(b"\x00<http://a/s> <http://a/p> \"x .\n"), Built::Rejected { line: 1, column: 27 });
        assert!(!dir.exists(), "{} is left behind", dir.display());
        assert_eq!(WORK_DIR.with(|dir| dir.clone()), dir, "the same name for every run of a thread");
    }
}
