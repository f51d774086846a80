//! Times SPARQL queries over a `.rete` file in one process: open once, then
//! each query `--runs` times with a warm block cache; prints one JSON line per
//! query. Used by `bench/query.sh` (docs/BENCHMARK.md), never by tests.
//!
//! cargo run --release -p rete-publisher --example bench_queries -- FILE.rete QUERY.rq... [--runs 5]

use rete_core::sparql::{Answer, QueryOptions, query};
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 5;
    if let Some(at) = args.iter().position(|a| a == "--runs") {
        runs = args.get(at + 1).and_then(|r| r.parse().ok()).unwrap_or(5);
        args.drain(at..(at + 2).min(args.len()));
    }
    let (file, queries) = args.split_first().ok_or_else(|| anyhow::anyhow!("usage: bench_queries FILE.rete QUERY.rq... [--runs N]"))?;
    let started = Instant::now();
    let store = rete_publisher::cmd::open(std::path::Path::new(file))?;
    println!("{}", serde_json::json!({"open_ms": started.elapsed().as_secs_f64() * 1000.0, "file_bytes": store.header().file_length}));
    for path in queries {
        let text = std::fs::read_to_string(path)?;
        let mut times = Vec::with_capacity(runs);
        let mut rows = 0usize;
        for _ in 0..runs {
            let started = Instant::now();
            rows = match query(&store, &text, None, &QueryOptions::default())? {
                Answer::Solutions(solutions) => solutions.map(|s| s.map(|_| ())).collect::<Result<Vec<_>, _>>()?.len(),
                Answer::Boolean(_) => 1,
                Answer::Graph(triples) => triples.map(|t| t.map(|_| ())).collect::<Result<Vec<_>, _>>()?.len(),
                _ => 0,
            };
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        println!("{}", serde_json::json!({"query": path, "rows": rows, "median_ms": times[times.len() / 2], "runs_ms": times}));
    }
    Ok(())
}
