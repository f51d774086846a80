//! Times SPARQL queries over a `.rete` file in one process: open once, then
//! each query `--runs` times with a warm block cache; prints one JSON line per
//! query, with its median wall and CPU time. With `--points N`, also times the point operations of a graph
//! database on N nodes spread over the dictionary (IRI → id, id → IRI, the
//! out-links of a node, ASK of one triple), each warm, and writes the nodes
//! and triples it used to `--points-out` so Oxigraph can be timed on the same
//! ones. With `--write`, each timed run also writes the answer into memory in the format a client
//! gets by default (SPARQL JSON, N-Triples for graphs), as the Worker does before it responds
//! (`bench/worker/factor.measure.ts`). With `--budget`, queries run under the Worker's default
//! limits (wrangler.toml's `[vars]`: step hooks above every join, every quad and row metered; no
//! clock), so the meter's cost can be told from wasm's. Used by `bench/query.py` and the Worker's
//! factor measure (docs/BENCHMARK.md), never by tests.
//!
//! cargo run --release -p rete-publisher --example bench_queries -- FILE.rete QUERY.rq... [--runs 5] [--write] [--budget] [--points 1000 --points-out FILE.nt]

use oxrdf::{NamedNode, Term, Triple};
use rete_core::read::{GraphFilter, QuadPattern};
use rete_core::results::{ResultFormat, write_answer};
use rete_core::sparql::{Answer, Budget, QueryOptions, query};
use rete_core::{RangeSource, Store, TermId};
use std::io::Write;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut flag = |name: &str| -> Option<String> {
        let at = args.iter().position(|a| a == name)?;
        let value = args.get(at + 1).cloned();
        args.drain(at..(at + 2).min(args.len()));
        value
    };
    let runs = flag("--runs").and_then(|r| r.parse().ok()).unwrap_or(5);
    let points: usize = flag("--points").and_then(|r| r.parse().ok()).unwrap_or(0);
    let points_out = flag("--points-out");
    let mut switch = |name: &str| match args.iter().position(|a| a == name) {
        Some(at) => {
            args.remove(at);
            true
        }
        None => false,
    };
    let write = switch("--write");
    // The Worker's defaults (worker/src/config.rs, wrangler.toml [vars]).
    let budget = if switch("--budget") {
        Budget { max_quads_scanned: 5_000_000, max_rows_produced: 100_000, max_steps: 10_000_000, max_computed_bytes: 16 << 20, should_stop: None }
    } else {
        Budget::unlimited()
    };
    let options = QueryOptions { budget, ..QueryOptions::default() };
    let (file, queries) = args.split_first().ok_or_else(|| anyhow::anyhow!("usage: bench_queries FILE.rete QUERY.rq... [--runs N] [--write] [--budget] [--points N --points-out FILE]"))?;
    let started = Instant::now();
    let store = rete_publisher::cmd::open(std::path::Path::new(file))?;
    println!("{}", serde_json::json!({"open_ms": started.elapsed().as_secs_f64() * 1000.0, "file_bytes": store.header().file_length}));
    for path in queries {
        let text = std::fs::read_to_string(path)?;
        let (mut times, mut cpu_times) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
        let mut rows = 0usize;
        // A query a limit stops (`--budget`) is timed to its error, which the line names.
        let mut error = None;
        for _ in 0..runs {
            let started = Instant::now();
            let cpu_started = cpu_ms();
            let answered = answer(&store, &text, &options, write);
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            cpu_times.push(cpu_ms() - cpu_started);
            match answered {
                Ok((count, Some((bytes, format)))) => rows = count.max(count_rows(&bytes, format)), // untimed
                Ok((count, None)) => rows = count,
                Err(e) => error = Some(format!("{e:#}")),
            }
        }
        times.sort_by(f64::total_cmp);
        cpu_times.sort_by(f64::total_cmp);
        println!("{}", serde_json::json!({"query": path, "rows": rows, "median_ms": times[times.len() / 2], "median_cpu_ms": cpu_times[cpu_times.len() / 2], "runs_ms": times, "error": error}));
    }
    if points > 0 {
        point_operations(&store, points, points_out.as_deref())?;
    }
    Ok(())
}

/// Evaluates a query and pulls its whole answer: the rows counted, or with
/// `write` the answer written as a client gets it (rows counted from it later).
fn answer<S: RangeSource>(store: &Store<S>, text: &str, options: &QueryOptions, write: bool) -> anyhow::Result<(usize, Option<(Vec<u8>, ResultFormat)>)> {
    let answer = query(store, text, None, options)?;
    if write {
        let format = ResultFormat::default_for(&answer);
        return Ok((0, Some((write_answer(answer, format, Vec::new())?, format))));
    }
    let rows = match answer {
        Answer::Solutions(solutions) => solutions.map(|s| s.map(|_| ())).collect::<Result<Vec<_>, _>>()?.len(),
        Answer::Boolean(_) => 1,
        Answer::Graph(triples) => triples.map(|t| t.map(|_| ())).collect::<Result<Vec<_>, _>>()?.len(),
        _ => 0,
    };
    Ok((rows, None))
}

/// The rows of a written answer: bindings of SPARQL JSON, lines of N-Triples.
fn count_rows(bytes: &[u8], format: ResultFormat) -> usize {
    if format != ResultFormat::Json {
        return bytes.split(|&b| b == b'\n').filter(|line| !line.is_empty()).count();
    }
    let json: serde_json::Value = serde_json::from_slice(bytes).unwrap_or_default();
    json.get("results").and_then(|r| r.get("bindings")).and_then(|b| b.as_array()).map_or(1, Vec::len)
}

/// CPU time of this thread so far: on a machine others keep busy, wall time
/// says more about them than about the query.
fn cpu_ms() -> f64 {
    cpu_time::ThreadTime::now().as_duration().as_secs_f64() * 1000.0
}

/// Nodes spread evenly over the dictionary's IRIs (which sort first, FORMAT.md
/// §5.1), each with one of its out-links when it has any.
fn sample<S: RangeSource>(store: &Store<S>, count: usize) -> anyhow::Result<Vec<(TermId, NamedNode, Option<[TermId; 3]>)>> {
    let is_iri = |id: TermId| -> anyhow::Result<bool> { Ok(matches!(store.term(id)?, Term::NamedNode(_))) };
    let (mut low, mut high) = (1, store.header().term_count + 1);
    while low < high {
        let middle = low + (high - low) / 2;
        if is_iri(middle)? { low = middle + 1 } else { high = middle }
    }
    let iris = low - 1;
    let mut nodes = Vec::new();
    for i in 0..count as u64 {
        let id = 1 + i * iris / count as u64;
        let Term::NamedNode(iri) = store.term(id)? else { anyhow::bail!("term {id} is not an IRI") };
        let link = out_links(store, id).next().transpose()?.map(|[s, p, o, _]| [s, p, o]);
        nodes.push((id, iri, link));
    }
    nodes.dedup_by_key(|(id, _, _)| *id);
    Ok(nodes)
}

fn out_links<S: RangeSource>(store: &Store<S>, subject: TermId) -> rete_core::read::QuadIter<'_, S> {
    store.quads(QuadPattern { subject: Some(subject), predicate: None, object: None, graph: GraphFilter::Any })
}

/// Times `op` on every item, after one untimed pass that warms the cache;
/// returns p50 and p95 in nanoseconds.
fn percentiles<T>(items: &[T], mut op: impl FnMut(&T) -> anyhow::Result<()>) -> anyhow::Result<(f64, f64)> {
    for item in items {
        op(item)?;
    }
    let mut times = Vec::with_capacity(items.len() * 3);
    for _ in 0..3 {
        for item in items {
            let started = Instant::now();
            op(item)?;
            times.push(started.elapsed().as_nanos() as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], times[times.len() * 95 / 100]))
}

fn point_operations<S: RangeSource>(store: &Store<S>, count: usize, out: Option<&str>) -> anyhow::Result<()> {
    let nodes = sample(store, count)?;
    let links: Vec<[TermId; 3]> = nodes.iter().filter_map(|(_, _, link)| *link).collect();
    let mut report = serde_json::Map::new();
    let mut record = |name: &str, (p50, p95): (f64, f64)| {
        report.insert(name.into(), serde_json::json!({"p50_ns": p50, "p95_ns": p95}));
    };
    record("iri_to_id", percentiles(&nodes, |(id, iri, _)| {
        anyhow::ensure!(store.term_id(iri.as_ref().into())? == Some(*id), "IRI → id disagrees for {iri}");
        Ok(())
    })?);
    record("id_to_iri", percentiles(&nodes, |(id, _, _)| {
        std::hint::black_box(store.term(*id)?);
        Ok(())
    })?);
    record("out_links_ids", percentiles(&nodes, |(id, _, _)| {
        std::hint::black_box(out_links(store, *id).collect::<Result<Vec<_>, _>>()?);
        Ok(())
    })?);
    record("out_links_terms", percentiles(&nodes, |(id, _, _)| {
        for quad in out_links(store, *id) {
            let [_, p, o, _] = quad?;
            std::hint::black_box((store.term(p)?, store.term(o)?));
        }
        Ok(())
    })?);
    record("ask_triple", percentiles(&links, |&[s, p, o]| {
        let pattern = QuadPattern { subject: Some(s), predicate: Some(p), object: Some(o), graph: GraphFilter::Any };
        anyhow::ensure!(store.quads(pattern).next().transpose()?.is_some(), "a sampled triple is missing");
        Ok(())
    })?);
    println!("{}", serde_json::json!({"points": report, "nodes": nodes.len(), "triples": links.len()}));
    if let Some(out) = out {
        // One line per node: its out-link as N-Triples, or `<iri> .` when it has none.
        let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
        for (_, iri, link) in &nodes {
            match link {
                Some([_, p, o]) => {
                    let Term::NamedNode(predicate) = store.term(*p)? else { anyhow::bail!("predicate {p} is not an IRI") };
                    writeln!(file, "{} .", Triple::new(iri.clone(), predicate, store.term(*o)?))?;
                }
                None => writeln!(file, "{iri} .")?,
            }
        }
        file.flush()?;
    }
    Ok(())
}
