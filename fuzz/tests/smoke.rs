//! A short random run of every fuzz target on stable Rust, in `cargo test`:
//! the smoke run of issue 18 that needs neither nightly nor cargo-fuzz, so
//! that CI on a fresh clone runs it within seconds. It is not coverage
//! guided (the campaigns are: `scripts/fuzz.sh`, fuzz/README.md); it mutates
//! the targets' own kind of input with a fixed-seed generator, so a failure
//! replays exactly. The targets' invariants are the campaigns' (a panic or a
//! broken assertion fails the test); the CPU-time limit is left to the
//! campaigns, since tests share the process's CPU clock.

use rete_fuzz::base_files;
use std::path::Path;

/// Inputs per target (a quarter of it for build_input): about 5 s in all
/// in a release build.
const INPUTS: usize = 2000;

/// xorshift64*: small, fixed-seed, good enough to pick edits.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// One to eight byte edits of `seed`: overwrite, insert, remove, truncate,
/// repeat a slice, or set a byte to a boundary value.
fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(data.len() + 1);
        match rng.below(6) {
            0 => {
                let n = 1 + rng.below(8);
                let bytes = rng.bytes(n);
                for (i, b) in bytes.into_iter().enumerate() {
                    if let Some(slot) = data.get_mut(at + i) {
                        *slot = b;
                    }
                }
            }
            1 => {
                let n = 1 + rng.below(16);
                let bytes = rng.bytes(n);
                data.splice(at..at, bytes);
            }
            2 => {
                let end = (at + 1 + rng.below(64)).min(data.len());
                data.drain(at.min(end)..end);
            }
            3 => data.truncate(at),
            4 => {
                let end = (at + 1 + rng.below(32)).min(data.len());
                let slice = data[at.min(end)..end].to_vec();
                data.splice(at..at, slice);
            }
            _ => {
                if let Some(slot) = data.get_mut(at) {
                    *slot = [0x00, 0x7f, 0x80, 0xff][rng.below(4)];
                }
            }
        }
    }
    data
}

#[test]
fn read_file_on_mutated_real_files() {
    let files: Vec<Vec<u8>> = base_files().into_iter().map(|b| b.file).collect();
    let mut rng = Rng(0x1818_0001);
    for _ in 0..INPUTS {
        let seed = &files[rng.below(files.len())];
        rete_fuzz::read_file(&mutate(&mut rng, seed));
    }
}

#[test]
fn query_damaged_on_random_damage() {
    rete_fuzz::init_query_damaged();
    let mut rng = Rng(0x1818_0002);
    for _ in 0..INPUTS {
        let length = rng.below(600);
        rete_fuzz::query_damaged(&rng.bytes(length));
    }
}

#[test]
fn build_input_on_mutated_documents() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    // (option byte's syntax bits, the first 4 KiB of an example in that syntax)
    let seeds: Vec<(u8, Vec<u8>)> = [(0u8, "schema-org/schema-org.nt"), (3, "qudt/qudt.trig"), (2, "dbpedia-ontology/dbpedia-ontology.ttl")]
        .into_iter()
        .map(|(syntax, path)| {
            let text = std::fs::read(examples.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
            (syntax, text[..text.len().min(4096)].to_vec())
        })
        .collect();
    let mut rng = Rng(0x1818_0003);
    for _ in 0..INPUTS / 4 {
        let (syntax, document) = &seeds[rng.below(seeds.len())];
        // Mostly the document's own syntax, sometimes gzip, --lenient or another syntax.
        let options = if rng.below(4) == 0 { rng.next() as u8 } else { *syntax };
        let mut input = vec![options];
        input.extend(mutate(&mut rng, document));
        rete_fuzz::build_input(&input);
    }
}

#[test]
fn request_on_mutated_requests() {
    rete_fuzz::init_request();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("requests.txt")).unwrap_or_else(|e| panic!("requests.txt: {e}"));
    let seeds: Vec<&str> = text.split("\n=====\n").collect();
    // Each seed as written (every route answers as it should), then mutated.
    for seed in &seeds {
        rete_fuzz::request(seed.as_bytes());
    }
    let mut rng = Rng(0x1818_0004);
    for _ in 0..INPUTS / 4 {
        let seed = seeds[rng.below(seeds.len())];
        rete_fuzz::request(&mutate(&mut rng, seed.as_bytes()));
    }
}
