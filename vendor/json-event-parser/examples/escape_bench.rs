//! Times rete's string escaping (vendor/README.md) against upstream's character-by-character
//! loop, side by side in one run: the strings of a large SPARQL JSON answer (IRIs, literals,
//! a few with characters to escape) written into a `Vec<u8>` and into a writer behind a
//! `RefCell`, as the Worker's `SharedBuf` is. Prints the median of each and their ratio.
//! Not a test; docs/BENCHMARK.md records its output.
//!
//! cargo run --release -p json-event-parser --example escape_bench -- [--runs 7] [--strings 1000000]

use json_event_parser::{JsonEvent, LowLevelJsonSerializer};
use std::cell::RefCell;
use std::io::{Result, Write};
use std::rc::Rc;
use std::time::Instant;

#[path = "../tests/upstream_escape/mod.rs"]
mod upstream_escape;

/// The Worker's `SharedBuf`: every write borrows the buffer.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

fn strings(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| match i % 4 {
            0 => format!("http://www.Department{}.University{}.edu/GraduateStudent{}", i % 20, i % 7, i),
            1 => format!("GraduateStudent{i}@Department{}.University{}.edu", i % 20, i % 7),
            2 => format!("Publication {i} of the department, \"draft\"\nsecond line"),
            _ => format!("Ünïversité {i} — 東京大学"),
        })
        .collect()
}

/// The strings as a JSON array, each escaped by upstream's loop, written as the serializer
/// writes an array.
fn upstream_array(strings: &[String], mut write: impl Write) -> Result<()> {
    write.write_all(b"[")?;
    for (i, s) in strings.iter().enumerate() {
        if i > 0 {
            write.write_all(b",")?;
        }
        upstream_escape::upstream_escaped(s, &mut write)?;
    }
    write.write_all(b"]")
}

/// The same through the serializer (its state machine included).
fn serialized_array(strings: &[String], mut write: impl Write) -> Result<()> {
    let mut serializer = LowLevelJsonSerializer::new();
    serializer.serialize_event(JsonEvent::StartArray, &mut write)?;
    for s in strings {
        serializer.serialize_event(JsonEvent::String(s.as_str().into()), &mut write)?;
    }
    serializer.serialize_event(JsonEvent::EndArray, &mut write)
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut runs, mut count) = (7, 1_000_000);
    while let Some(flag) = args.next() {
        let value = args.next().and_then(|v| v.parse().ok()).expect("a number after the flag");
        match flag.as_str() {
            "--runs" => runs = value,
            "--strings" => count = value,
            _ => panic!("usage: escape_bench [--runs N] [--strings N]"),
        }
    }
    let strings = strings(count);
    let bytes: usize = strings.iter().map(String::len).sum();
    let mut times: [[Vec<f64>; 2]; 2] = Default::default();
    let mut outputs: [[Vec<u8>; 2]; 2] = Default::default();
    for _ in 0..runs {
        for sink in 0..2 {
            for which in 0..2 {
                let shared = Shared::default();
                let mut vec = Vec::with_capacity(bytes * 2);
                let start = Instant::now();
                if which == 0 {
                    if sink == 0 { upstream_array(&strings, &mut vec) } else { upstream_array(&strings, shared.clone()) }.unwrap();
                } else if sink == 0 {
                    serialized_array(&strings, &mut vec).unwrap();
                } else {
                    serialized_array(&strings, shared.clone()).unwrap();
                }
                times[sink][which].push(start.elapsed().as_secs_f64() * 1000.0);
                outputs[sink][which] = if sink == 0 { vec } else { shared.0.take() };
            }
        }
    }
    assert_eq!(outputs[0][0], outputs[0][1], "same bytes");
    assert_eq!(outputs[1][0], outputs[1][1], "same bytes");
    println!("{count} strings, {bytes} bytes, {runs} runs each, interleaved; median ms:");
    for (sink, name) in [(0, "Vec<u8>"), (1, "RefCell<Vec<u8>>")] {
        let (upstream, rete) = (median(times[sink][0].clone()), median(times[sink][1].clone()));
        println!("{name:>18}: upstream {upstream:.1} ms, rete {rete:.1} ms, ratio {:.2}x", upstream / rete);
    }
}
