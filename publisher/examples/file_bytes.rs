//! Where a .rete file's bytes go (issue 17: the file against gzip -9): each
//! section's length, and within the six permutations each id column's share,
//! measured by compressing the column alone at the writer's zstd level. With
//! `--variants` it also re-encodes every permutation block in candidate
//! column encodings and reports what each would weigh, so an encoding is
//! chosen on measured bytes (docs/BENCHMARK.md, "Scale").
//!
//! ```sh
//! cargo run --release -p rete-publisher --example file_bytes -- lubm.rete --variants
//! ```

use rete_core::format::block;
use rete_core::format::header::{Header, SectionKind};
use rete_core::format::permutation::{Key, Permutation, decode_block};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::process::ExitCode;
use std::time::Instant;

const LEVEL: i32 = rete_core::format::ZSTD_LEVEL;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: file_bytes FILE.rete [--variants]");
        return ExitCode::from(2);
    };
    match run(path, args.iter().any(|a| a == "--variants")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("file_bytes: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read_range(file: &mut File, offset: u64, length: u64) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0; usize::try_from(length).map_err(|e| e.to_string())?];
    file.seek(SeekFrom::Start(offset)).map_err(|e| e.to_string())?;
    file.read_exact(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

fn run(path: &str, variants: bool) -> Result<(), String> {
    let mut file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let length = file.metadata().map_err(|e| e.to_string())?.len();
    let first = read_range(&mut file, 0, length.min(16384))?;
    let header = Header::decode(&first, Some(length)).map_err(|e| e.to_string())?;
    println!("{path}: {length} bytes, {} quads, {} terms, format {}.{}", header.quad_count, header.term_count, header.major_version, header.minor_version);
    println!("{:<20} {:>14} {:>7} {:>10}", "section", "bytes", "%", "B/quad");
    for section in &header.sections {
        println!("{:<20} {:>14} {:>6.2}% {:>10.3}", section.kind.name(), section.length, 100.0 * section.length as f64 / length as f64, section.length as f64 / header.quad_count.max(1) as f64);
    }
    let mut totals = Totals::default();
    for p in Permutation::ALL {
        let section = header.required(SectionKind::Permutation(p.id())).map_err(|e| e.to_string())?;
        let bytes = read_range(&mut file, section.offset, section.length)?;
        let mut sums = Totals::default();
        for (number, sealed) in blocks(&bytes)?.into_iter().enumerate() {
            let what = || format!("{} block {number}", p.name());
            let raw = block::open(sealed, &what, 0).map_err(|e| e.to_string())?;
            let keys = decode_block(&raw, header.block_layout(), &what(), 0).map_err(|e| e.to_string())?;
            sums.add(&measure(&keys, sealed.len(), raw.len(), variants));
        }
        sums.print(p.name(), header.quad_count);
        totals.merge(&sums);
    }
    totals.print("all six", header.quad_count);
    Ok(())
}

/// The sealed blocks of a block section, in order: zstd frames and their trailers.
fn blocks(section: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut out = Vec::new();
    let mut rest = section;
    while !rest.is_empty() {
        let frame = zstd::zstd_safe::find_frame_compressed_size(rest).map_err(|e| format!("not a zstd frame: {e}"))?;
        let (sealed, after) = rest.split_at((frame + 4).min(rest.len()));
        out.push(sealed);
        rest = after;
    }
    Ok(out)
}

/// Named byte counts, summed over blocks.
#[derive(Default)]
struct Totals(Vec<(String, u64)>);

impl Totals {
    fn add(&mut self, values: &[(String, u64)]) {
        for (name, value) in values {
            match self.0.iter_mut().find(|(n, _)| n == name) {
                Some((_, total)) => *total += value,
                None => self.0.push((name.clone(), *value)),
            }
        }
    }

    fn merge(&mut self, other: &Totals) {
        self.add(&other.0);
    }

    fn print(&self, name: &str, quads: u64) {
        println!("{name}");
        for (what, value) in &self.0 {
            let per_quad = *value as f64 / quads.max(1) as f64;
            println!("  {what:<28} {value:>14} {per_quad:>9.3} B/quad");
        }
    }
}

fn zstd_len(raw: &[u8], level: i32) -> u64 {
    zstd::bulk::compress(raw, level).map(|c| c.len() as u64 + 4).unwrap_or(0)
}

/// zstd with its block splitter on, as the search index's blocks are sealed (FORMAT.md §12.6).
fn split_len(raw: &[u8], level: i32) -> u64 {
    use zstd::zstd_safe::{CParameter, ParamSwitch};
    let mut compressor = zstd::bulk::Compressor::new(level).expect("zstd");
    compressor.set_parameter(CParameter::UseBlockSplitter(ParamSwitch::Enable)).expect("zstd");
    compressor.compress(raw).map(|c| c.len() as u64 + 4).unwrap_or(0)
}

fn put(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn zigzag(value: u64, previous: u64) -> u64 {
    let delta = value.wrapping_sub(previous) as i64;
    ((delta << 1) ^ (delta >> 63)) as u64
}

/// How a column value is coded when its prefix changed (the row before had
/// other leading components): the encodings compared.
#[derive(Clone, Copy)]
enum Restart {
    /// FORMAT.md §6 today: the raw id.
    Raw,
    /// The zigzag difference from the previous row's value of the column.
    Zigzag,
    /// The difference from the column's smallest value in the block.
    Minimum,
}

/// The four columns of a block, each a varint stream.
fn columns(keys: &[Key], b_restart: Restart, c_restart: Restart) -> [Vec<u8>; 4] {
    let values = values(keys, b_restart, c_restart);
    let mut out: [Vec<u8>; 4] = Default::default();
    for (column, values) in out.iter_mut().zip(&values) {
        for &value in values {
            put(column, value);
        }
    }
    out
}

/// The four columns of a block as byte planes: each column's values in the
/// fewest bytes that hold its largest, the lowest byte of every row first,
/// then the next byte of every row, and so on.
fn planes(keys: &[Key], b_restart: Restart, c_restart: Restart) -> [Vec<u8>; 4] {
    let values = values(keys, b_restart, c_restart);
    let mut out: [Vec<u8>; 4] = Default::default();
    for (column, values) in out.iter_mut().zip(&values) {
        let largest = values.iter().copied().max().unwrap_or(0);
        let width = (64 - largest.leading_zeros()).div_ceil(8) as usize;
        column.push(width as u8);
        for byte in 0..width {
            column.extend(values.iter().map(|v| (v >> (8 * byte)) as u8));
        }
    }
    out
}

/// The values the four columns hold.
fn values(keys: &[Key], b_restart: Restart, c_restart: Restart) -> [Vec<u64>; 4] {
    let mut out: [Vec<u64>; 4] = Default::default();
    let minimum = |column: usize| keys.iter().map(|k| k[column]).min().unwrap_or(0);
    let minima = [0, minimum(1), minimum(2)];
    let mut previous = [0u64; 4];
    for (i, key) in keys.iter().enumerate() {
        out[0].push(key[0] - previous[0]);
        for column in 1..3 {
            let continues = i > 0 && previous[..column] == key[..column];
            let restart = if column == 1 { b_restart } else { c_restart };
            let value = match (continues, restart) {
                (true, _) => key[column] - previous[column],
                (false, Restart::Raw) => key[column],
                (false, Restart::Zigzag) => zigzag(key[column], previous[column]),
                (false, Restart::Minimum) => key[column] - minima[column],
            };
            out[column].push(value);
        }
        out[3].push(key[3]);
        previous = *key;
    }
    out
}

fn joined(count: usize, columns: &[Vec<u8>; 4]) -> Vec<u8> {
    let mut raw = Vec::new();
    put(&mut raw, count as u64);
    for column in columns {
        raw.extend_from_slice(column);
    }
    raw
}

/// One candidate coding of a block: its bytes raw and compressed, the time to compress
/// them, and the b and c columns compressed alone.
fn measure_variant(out: &mut Vec<(String, u64)>, name: &str, keys: usize, variant: &[Vec<u8>; 4]) {
    let raw = joined(keys, variant);
    out.push((format!("{name}: raw"), raw.len() as u64));
    let start = Instant::now();
    out.push((format!("{name}: zstd {LEVEL}"), zstd_len(&raw, LEVEL)));
    out.push((format!("{name}: µs compress"), start.elapsed().as_micros() as u64));
    for (column, bytes) in ["b", "c"].iter().zip(&variant[1..3]) {
        out.push((format!("{name}: column {column} alone"), zstd_len(bytes, LEVEL)));
    }
}

fn measure(keys: &[Key], sealed: usize, raw: usize, variants: bool) -> Vec<(String, u64)> {
    let mut out = vec![("stored (sealed)".to_string(), sealed as u64), ("decompressed".to_string(), raw as u64)];
    let today = columns(keys, Restart::Raw, Restart::Raw);
    for (name, column) in ["a", "b", "c", "g"].iter().zip(&today) {
        out.push((format!("column {name} alone"), zstd_len(column, LEVEL)));
    }
    if !variants {
        return out;
    }
    let start = Instant::now();
    let _ = zstd_len(&joined(keys.len(), &today), LEVEL);
    out.push(("µs compress raw restarts".into(), start.elapsed().as_micros() as u64));
    for (name, b, c) in [
        ("zigzag b+c", Restart::Zigzag, Restart::Zigzag),
        ("zigzag c", Restart::Raw, Restart::Zigzag),
        ("zigzag b", Restart::Zigzag, Restart::Raw),
        ("minimum b+c", Restart::Minimum, Restart::Minimum),
        ("zigzag b, minimum c", Restart::Zigzag, Restart::Minimum),
    ] {
        measure_variant(&mut out, name, keys.len(), &columns(keys, b, c));
    }
    // Per block, the best of raw/zigzag for b and for c (an oracle, by the
    // whole block at the writer's level), and the choice made from each
    // column compressed alone at level 1 (what a writer could afford).
    let codings = [Restart::Raw, Restart::Zigzag];
    let mut oracle = u64::MAX;
    for b in codings {
        for c in codings {
            oracle = oracle.min(zstd_len(&joined(keys.len(), &columns(keys, b, c)), LEVEL));
        }
    }
    out.push(("per block oracle: zstd 9".into(), oracle));
    let start = Instant::now();
    let pick = |column: usize| {
        let raw = zstd_len(&columns(keys, Restart::Raw, Restart::Raw)[column], 1);
        let zig = zstd_len(&columns(keys, Restart::Zigzag, Restart::Zigzag)[column], 1);
        if zig < raw { Restart::Zigzag } else { Restart::Raw }
    };
    let (b, c) = (pick(1), pick(2));
    out.push(("per block level-1 pick: µs".into(), start.elapsed().as_micros() as u64));
    let picked = joined(keys.len(), &columns(keys, b, c));
    out.push(("per block level-1 pick: zstd 9".into(), zstd_len(&picked, LEVEL)));
    out.push(("per block level-1 pick: split 9".into(), split_len(&picked, LEVEL)));
    let start = Instant::now();
    out.push(("per block level-1 pick: zstd 15".into(), zstd_len(&picked, 15)));
    out.push(("µs compress level 15".into(), start.elapsed().as_micros() as u64));
    let start = Instant::now();
    let _ = split_len(&picked, LEVEL);
    out.push(("µs compress split 9".into(), start.elapsed().as_micros() as u64));
    for (name, b, c) in [("planes raw restarts", Restart::Raw, Restart::Raw), ("planes zigzag b+c", Restart::Zigzag, Restart::Zigzag)] {
        measure_variant(&mut out, name, keys.len(), &planes(keys, b, c));
    }
    out.push((format!("raw restarts: split {LEVEL}"), split_len(&joined(keys.len(), &today), LEVEL)));
    out.push((format!("zigzag b+c: split {LEVEL}"), split_len(&joined(keys.len(), &columns(keys, Restart::Zigzag, Restart::Zigzag)), LEVEL)));
    out.push((format!("planes zigzag b+c: split {LEVEL}"), split_len(&joined(keys.len(), &planes(keys, Restart::Zigzag, Restart::Zigzag)), LEVEL)));
    for level in [12, 15] {
        out.push((format!("raw restarts: zstd {level}"), zstd_len(&joined(keys.len(), &today), level)));
    }
    out.push(("raw restarts: zstd 19".into(), zstd_len(&joined(keys.len(), &today), 19)));
    out.push(("zigzag b+c: zstd 19".into(), zstd_len(&joined(keys.len(), &columns(keys, Restart::Zigzag, Restart::Zigzag)), 19)));
    out
}
