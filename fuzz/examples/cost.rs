//! What one input of a target costs: runs the target over every file in a
//! directory (a seed corpus, `build/fuzz/seeds/TARGET`) a few times, on
//! stable Rust and without instrumentation, and prints the CPU time per
//! input (median of the rounds; wall time beside it, which counts waits for
//! the disk and for a core too) and the executions per second that makes on
//! one core. docs/RELIABILITY.md quotes it for the targets' throughput.
//!
//! `cargo run --release -p rete-fuzz --example cost -- TARGET DIR [ROUNDS] [SLOWEST]`
//! (SLOWEST: also list that many of the costliest inputs, from the first round).

use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(target), Some(dir)) = (args.first(), args.get(1)) else {
        eprintln!("usage: cost TARGET DIR [ROUNDS] [SLOWEST]   (TARGET: read_file, query_damaged, build_input, request)");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3);
    let slowest: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(0);
    let run: fn(&[u8]) = match target.as_str() {
        "read_file" => rete_fuzz::read_file,
        "query_damaged" => {
            rete_fuzz::init_query_damaged();
            rete_fuzz::query_damaged
        }
        "build_input" => {
            rete_fuzz::init_build_input();
            |data| {
                rete_fuzz::build_input(data);
            }
        }
        "request" => {
            rete_fuzz::init_request();
            rete_fuzz::request
        }
        other => {
            eprintln!("cost: unknown target {other:?}");
            std::process::exit(2);
        }
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{dir}: {e}")).filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let inputs: Vec<(Vec<u8>, &PathBuf)> = paths.iter().filter_map(|p| Some((std::fs::read(p).ok()?, p))).collect();
    let count = inputs.len().max(1) as f64;
    let mut each: Vec<(f64, &PathBuf)> = Vec::new();
    let mut per_input: Vec<(f64, f64)> = (0..rounds)
        .map(|round| {
            let (cpu, wall) = (rete_fuzz::limits::process_cpu_seconds(), std::time::Instant::now());
            for &(ref input, path) in &inputs {
                let before = rete_fuzz::limits::process_cpu_seconds();
                run(input);
                if round == 0 && slowest > 0 {
                    each.push((rete_fuzz::limits::process_cpu_seconds() - before, path));
                }
            }
            ((rete_fuzz::limits::process_cpu_seconds() - cpu) / count, wall.elapsed().as_secs_f64() / count)
        })
        .collect();
    each.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total: f64 = each.iter().map(|(cpu, _)| cpu).sum();
    for (cpu, path) in each.iter().take(slowest) {
        println!("{:9.3} ms ({:4.1} % of the round) {}", cpu * 1e3, 100.0 * cpu / total, path.display());
    }
    per_input.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (cpu, wall) = per_input[per_input.len() / 2];
    println!(
        "{target}: {} inputs × {rounds} rounds, median {:.3} ms of CPU ({:.3} ms wall) per input: {:.0} executions per CPU-second",
        inputs.len(),
        cpu * 1e3,
        wall * 1e3,
        1.0 / cpu
    );
}
