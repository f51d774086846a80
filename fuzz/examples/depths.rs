//! What `build_input` builds over a corpus: for the inputs with the
//! directory bit (first byte's bit 5) and the others, how many built a file
//! and of which directory depth (the deepest of the seven), how many were
//! rejected at a line and column, and how many failed otherwise.
//! docs/RELIABILITY.md quotes it to show that a change of the directory
//! layout keeps the depths the target builds.
//!
//! `cargo run --release -p rete-fuzz --example depths -- DIR`

use rete_fuzz::Built;
use std::collections::BTreeMap;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: depths DIR");
        std::process::exit(2);
    };
    rete_fuzz::init_build_input();
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir}: {e}")).filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let mut tally: BTreeMap<(bool, String), usize> = BTreeMap::new();
    for path in &paths {
        let Ok(input) = std::fs::read(path) else { continue };
        let directory = input.first().is_some_and(|&options| options & (1 << 5) != 0);
        let outcome = match rete_fuzz::build_input(&input) {
            Built::File { depth, .. } => format!("file of depth {depth}"),
            Built::Rejected { .. } => "rejected".into(),
            Built::Failed => "failed".into(),
            Built::Nothing => "empty".into(),
        };
        *tally.entry((directory, outcome)).or_default() += 1;
    }
    for ((directory, outcome), count) in &tally {
        println!("{:<22} {outcome:<16} {count:6}", if *directory { "directory bit" } else { "no directory bit" });
    }
}
