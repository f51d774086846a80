//! Every input that once failed a fuzz target (`fuzz/regressions/<target>/`)
//! replayed through that target on stable Rust, in `cargo test`. The fix of
//! each finding also has a regression test beside the code it fixed; this
//! keeps the exact fuzzer input too.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions").join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("replaying {}", path.display());
        run(&data);
    }
}

#[test]
fn read_file_regressions() {
    replay("read_file", rete_fuzz::read_file);
}

#[test]
fn query_damaged_regressions() {
    replay("query_damaged", rete_fuzz::query_damaged);
}

#[test]
fn build_input_regressions() {
    replay("build_input", |data| {
        rete_fuzz::build_input(data);
    });
}

#[test]
fn request_regressions() {
    replay("request", rete_fuzz::request);
}

/// The base files (with a directory of depth 1–3, and flat) come apart and
/// go back together byte for byte, so an input without mutations queries
/// the real file (and must succeed).
#[test]
fn undamaged_base_files_answer_every_query() {
    for base in 0..6u8 {
        for query in 0..40u8 {
            let _ = rete_fuzz::query(rete_fuzz::Damage { base, mutations: Vec::new(), queries: vec![query] });
        }
    }
}

/// The build target's oracle sees what `rete build` does: a file with the
/// distinct quads, or the error's line and column.
#[test]
fn build_input_reports_files_and_error_positions() {
    use rete_fuzz::Built;
    let nt = b"\x00<http://a/s> <http://a/p> \"x\" .\n<http://a/s> <http://a/p> \"x\" .\n<http://a/s> <http://a/p> _:b .\n";
    assert_eq!(rete_fuzz::build_input(nt), Built::File { quads: 2, depth: 0 });
    let gzipped = [&[0x08u8][..], &nt[1..]].concat();
    assert_eq!(rete_fuzz::build_input(&gzipped), Built::File { quads: 2, depth: 0 });
    let ttl = b"\x02@prefix ex: <http://a/> .\nex:s ex:p ex:o ;\n  ex:q [ ex:r 1 ] .\n";
    assert_eq!(rete_fuzz::build_input(ttl), Built::File { quads: 3, depth: 0 });
    assert_eq!(rete_fuzz::build_input(b"\x00<http://a/s> <http://a/p> \"x\" .\n<http://a/s> <http://a/p> \"y .\n"), Built::Rejected { line: 2, column: 27 });
    assert_eq!(rete_fuzz::build_input(b"\x10not gzip at all"), Built::Failed);
    // With a directory of tiny nodes (first-byte bit 5): 40 quads in 4-quad
    // blocks, 400 in 25-quad ones, both of depth 3 (the deepest of the seven).
    let quads = |from: usize, to: usize| -> String { (from..to).map(|i| format!("<http://a/s{i}> <http://a/p{}> \"{i}\" .\n", i % 3)).collect() };
    let directory = |document: String| [&b"\x20"[..], document.as_bytes()].concat();
    assert_eq!(rete_fuzz::build_input(&directory(quads(0, 40))), Built::File { quads: 40, depth: 3 });
    assert_eq!(rete_fuzz::build_input(&directory(quads(0, 400))), Built::File { quads: 400, depth: 3 });
    // Lenient (bit 2), a bad statement after 10 of 400 quads: the blocks are
    // sized for the 400 that both parsers keep, still 16 per order.
    let broken = format!("{}<http://a/s> <http://a/p> <a b> .\n{}", quads(0, 10), quads(10, 400));
    assert_eq!(rete_fuzz::build_input(&[&[0x24u8][..], &directory(broken)[1..]].concat()), Built::File { quads: 400, depth: 3 });
    assert_eq!(rete_fuzz::build_input(b""), Built::Nothing);
}

/// `query_damaged`'s first three base files have a directory of depth 1, 2
/// and 3 in every permutation (and a dictionary directory), so that damaged
/// nodes are reached at every level a reader accepts; the last three are flat.
#[test]
fn base_files_have_directories_of_depth_1_to_3() {
    use rete_core::Permutation;
    use rete_core::read::Directory;
    let depths: Vec<(u8, u8)> = rete_fuzz::base_files()
        .iter()
        .map(|base| {
            let store = rete_core::Store::open(&base.file[..], 0).unwrap_or_else(|e| panic!("{}: {e}", base.name));
            let permutations = Permutation::ALL.map(|p| store.depth(Directory::Permutation(p)));
            assert!(permutations.iter().all(|&d| d == permutations[0]), "{}: permutation depths {permutations:?}", base.name);
            (store.depth(Directory::Dictionary), permutations[0])
        })
        .collect();
    assert_eq!(depths.iter().map(|d| d.1).collect::<Vec<_>>(), [1, 2, 3, 0, 0, 0], "dictionary and permutation depths: {depths:?}");
    assert!(depths[..3].iter().all(|d| d.0 >= 1), "dictionary depths: {depths:?}");
}

/// Damage reaches the directories' nodes: nodes of each directory base (32
/// spread over every level and directory, for time) with their entry count
/// (the second byte of the decompressed node) raised by one, with and
/// without re-syncing the entries above, under a query that scans a whole
/// permutation. The query either does not need the node
/// or fails with a corrupt-file error naming it (`query` itself asserts
/// that nothing else happens); some must name it.
#[test]
fn damaged_directory_nodes_are_reported_as_corrupt_nodes() {
    use rete_fuzz::{Damage, Edit, Mutation};
    for base in 0..3u8 {
        let (blocks, nodes) = rete_fuzz::parts_of(base);
        assert!(nodes > 0, "base {base} has no directory nodes");
        let mut named = 0;
        for node in (0..nodes).step_by(nodes.div_ceil(32)) {
            for resync in [false, true] {
                let block = u16::try_from(blocks + node).unwrap_or_else(|e| panic!("{e}"));
                let mutations = vec![Mutation::Block { block, edit: Edit::Add { at: 1, delta: 1 }, resync }];
                // Query 11 of every base: SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }.
                for [in_rounds, whole] in rete_fuzz::query(Damage { base, mutations, queries: vec![11] }) {
                    named += [in_rounds, whole].iter().filter(|o| o.as_ref().is_err_and(|e| e.contains("directory node"))).count();
                }
            }
        }
        assert!(named > 0, "no damaged node of base {base} ({nodes} nodes) was reported");
        eprintln!("base {base}: {} of {nodes} nodes damaged twice each, {named} answers name a corrupt directory node", nodes.div_ceil(nodes.div_ceil(32)));
    }
}
