//! `rete build`'s pipeline. Memory stays within `--mem` whatever the input
//! size: the term table and every sort spill to temporary files. Blocks are
//! compressed on all cores in order, so the output does not depend on the
//! thread count. The file is written beside the output and renamed into
//! place only when complete.

use super::dictionary::{TermRuns, final_id};
use super::input::Input;
use super::parse::{BlankNodes, ParseStats, parse_input};
use super::sort::{ExternalSorter, read_record, write_record};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use oxrdf::vocab::rdf;
use rayon::prelude::*;
use rete_core::format::block;
use rete_core::format::card::{CARD_LIST_CAP, Card, ClassCount, PredicateCount, SourceFile};
use rete_core::format::dictionary::{DictionaryBlock, DictionaryEncoder};
use rete_core::format::index::{DictionaryEntry, GraphEntry, Index, PermutationEntry};
use rete_core::format::permutation::{Key, encode_block};
use rete_core::format::write::{ContentHasher, Counts, SectionSummary, layout, stamp_content_hash};
use rete_core::{ByteRange, Permutation, TermId, encode_term};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::Xxh3;

/// What `rete build` was asked to do.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Inputs in order.
    pub inputs: Vec<Input>,
    /// The `.rete` to write.
    pub output: PathBuf,
    /// Memory budget in bytes.
    pub memory_bytes: usize,
    /// Skip bad statements instead of failing.
    pub lenient: bool,
    /// Where temporary files go (default: beside the output).
    pub temp_dir: Option<PathBuf>,
    /// Show progress bars.
    pub progress: bool,
}

/// What a build produced.
#[derive(Debug, Clone)]
pub struct BuildReport {
    /// Statements parsed (with duplicates).
    pub parsed: u64,
    /// Bad statements skipped (`--lenient`).
    pub skipped: u64,
    /// Distinct quads.
    pub quads: u64,
    /// Distinct terms.
    pub terms: u64,
    /// Named graphs.
    pub graphs: u64,
    /// Bytes of input read.
    pub input_bytes: u64,
    /// Bytes of the output.
    pub file_bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
}

/// Builds a `.rete` file.
pub fn build(options: &BuildOptions) -> Result<BuildReport> {
    let started = Instant::now();
    let output_dir = match options.output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    let temp_root = options.temp_dir.clone().unwrap_or_else(|| output_dir.clone());
    let temp = tempfile::Builder::new().prefix(".rete-build-").tempdir_in(&temp_root).with_context(|| format!("cannot create a temporary directory in {}", temp_root.display()))?;
    let dir = temp.path();
    // Half for the term table while parsing, half for sort runs and id mappings.
    let memory = options.memory_bytes.max(64 << 10);
    let progress = Progress::new(options.progress);

    // 1. Parse: temporary ids for terms, temporary-id quads to disk.
    let input_bytes: u64 = options.inputs.iter().map(Input::size_bytes).sum();
    progress.phase("parsing", input_bytes);
    let mut terms = TermRuns::new(dir, memory / 2);
    let mut blank_nodes = BlankNodes::default();
    let mut quads_file = tempfile::tempfile_in(dir)?;
    let mut stats = ParseStats::default();
    {
        let mut writer = BufWriter::with_capacity(1 << 20, &mut quads_file);
        for input in &options.inputs {
            let bar = progress.bar.clone();
            let parsed = parse_input(input, options.lenient, &mut blank_nodes, move |n| bar.inc(n as u64), |quad| {
                let record = [terms.intern(quad[0])?, terms.intern(quad[1])?, terms.intern(quad[2])?, terms.intern(quad[3])?];
                write_record(&mut writer, &record)
            })?;
            stats.quads += parsed.quads;
            stats.skipped += parsed.skipped;
        }
        writer.flush()?;
    }
    drop(blank_nodes);

    // 2. Dictionary: merge term runs into sorted blocks; map temporary ids to final ones.
    progress.phase("dictionary", 0);
    let (term_count, term_bytes) = terms.distinct()?;
    let mut dictionary = BlockWriter::new(dir)?;
    let mut encoder = DictionaryEncoder::new((term_bytes / 256).clamp(4096, 1 << 20) as usize);
    let mut pending = Vec::new();
    let mut dictionary_entries: Vec<DictionaryEntry> = Vec::new();
    let mut next_first_id: TermId = 1;
    let mut flush_dictionary = |pending: &mut Vec<rete_core::format::dictionary::RawDictionaryBlock>, writer: &mut BlockWriter, entries: &mut Vec<DictionaryEntry>, force: bool| -> Result<()> {
        if pending.len() < 64 && !force {
            return Ok(());
        }
        let sealed = seal_all(pending.iter().map(|b| b.raw.as_slice()).collect())?;
        for (raw, sealed) in pending.drain(..).zip(sealed) {
            let range = writer.write_block(&sealed)?;
            entries.push(DictionaryEntry { range, first_id: next_first_id, term_count: raw.term_count, head: raw.head });
            next_first_id += raw.term_count;
        }
        Ok(())
    };
    let rdf_type = encode_term(rdf::TYPE);
    let mut rdf_type_id = None;
    let mut id: TermId = 0;
    let mut mapping = terms.merge(memory / 2, |term| {
        id += 1;
        if term == rdf_type.as_slice() {
            rdf_type_id = Some(id);
        }
        if let Some(block) = encoder.push(term) {
            pending.push(block);
            flush_dictionary(&mut pending, &mut dictionary, &mut dictionary_entries, false)?;
        }
        Ok(())
    })?;
    if let Some(block) = encoder.finish() {
        pending.push(block);
    }
    flush_dictionary(&mut pending, &mut dictionary, &mut dictionary_entries, true)?;
    debug_assert_eq!(id, term_count);

    // 3. Renumber quads, then sort them in SPO order once, dropping duplicates.
    progress.phase("renumbering", 0);
    let translated = mapping.translate(quads_file, dir, memory / 2)?;
    drop(mapping);
    progress.phase("sorting SPO", 0);
    let mut sorter = ExternalSorter::<4>::new(dir, memory / 2);
    let mut reader = BufReader::with_capacity(1 << 20, translated);
    while let Some(quad) = read_record::<4>(&mut reader)? {
        sorter.push(quad.map(final_id))?;
    }
    drop(reader);
    let mut sorted = sorter.finish()?;
    let mut unique = tempfile::tempfile_in(dir)?;
    let mut quad_count = 0u64;
    let mut graphs: BTreeMap<TermId, u64> = BTreeMap::new();
    {
        let mut writer = BufWriter::with_capacity(1 << 20, &mut unique);
        while let Some(quad) = sorted.next_record()? {
            write_record(&mut writer, &quad)?;
            quad_count += 1;
            if quad[3] != 0 {
                *graphs.entry(quad[3]).or_default() += 1;
            }
        }
        writer.flush()?;
    }
    drop(sorted);

    // 4. The six orders, with the counts the card needs.
    let block_quads = quad_count.div_ceil(128).next_power_of_two().clamp(1024, 65536) as usize;
    let mut permutation_entries: [Vec<PermutationEntry>; 6] = Default::default();
    let mut permutation_summaries = [SectionSummary::default(); 6];
    let mut permutation_files = Vec::new();
    let mut predicate_counts = TopCounts::default();
    let mut class_counts = TopCounts::default();
    for permutation in Permutation::ALL {
        progress.phase(&format!("sorting {}", permutation.name()), quad_count);
        unique.rewind()?;
        let mut reader = BufReader::with_capacity(1 << 20, unique.try_clone()?);
        let mut writer = BlockWriter::new(dir)?;
        let mut encoder = PermutationEncoder::new(block_quads);
        let mut on_key = |key: Key, writer: &mut BlockWriter, entries: &mut Vec<PermutationEntry>| -> Result<()> {
            match permutation {
                Permutation::Pso => predicate_counts.add(key[0]),
                Permutation::Pos if Some(key[0]) == rdf_type_id => class_counts.add(key[1]),
                _ => {}
            }
            encoder.push(key, writer, entries)
        };
        let entries = &mut permutation_entries[usize::from(permutation.id())];
        if permutation == Permutation::Spo {
            while let Some(quad) = read_record::<4>(&mut reader)? {
                on_key(quad, &mut writer, entries)?;
                progress.bar.inc(1);
            }
        } else {
            let mut sorter = ExternalSorter::<4>::new(dir, memory / 2);
            while let Some(quad) = read_record::<4>(&mut reader)? {
                sorter.push(permutation.key(quad))?;
            }
            let mut sorted = sorter.finish()?;
            while let Some(key) = sorted.next_record()? {
                on_key(key, &mut writer, entries)?;
                progress.bar.inc(1);
            }
        }
        encoder.finish(&mut writer, entries)?;
        permutation_summaries[usize::from(permutation.id())] = writer.summary();
        permutation_files.push(writer.into_file()?);
    }
    predicate_counts.finish();
    class_counts.finish();

    // 5. INDEX and CARD.
    progress.phase("writing", 0);
    let graph_entries: Vec<GraphEntry> = graphs.iter().map(|(&id, &quad_count)| GraphEntry { id, quad_count }).collect();
    let index = Index { dictionary: dictionary_entries, graphs: graph_entries, permutations: permutation_entries };
    let index_sealed = block::compress(&index.encode())?;
    let mut dictionary_file = dictionary.into_file_keep()?;
    let mut names = TempDictionary { file: &mut dictionary_file, entries: &index.dictionary };
    let card = Card {
        rete_version: env!("CARGO_PKG_VERSION").into(),
        quads: quad_count,
        terms: term_count,
        graphs: graphs.len() as u64,
        predicates: predicate_counts.top.iter().map(|&(count, id)| Ok(PredicateCount { iri: names.iri(id)?, quads: count })).collect::<Result<_>>()?,
        predicates_more: predicate_counts.more,
        classes: class_counts.top.iter().map(|&(count, id)| Ok(ClassCount { iri: names.iri(id)?, instances: count })).collect::<Result<_>>()?,
        classes_more: class_counts.more,
        sources: options.inputs.iter().map(|i| SourceFile { name: i.display_name(), bytes: i.size_bytes() }).collect(),
        extra: Default::default(),
    };
    let card_sealed = block::compress(&serde_json::to_vec(&card)?)?;
    if card_sealed.len() as u64 > rete_core::format::MAX_CARD_BYTES {
        bail!("the card is {} bytes, over the 32 KiB limit (FORMAT.md §7)", card_sealed.len());
    }

    // 6. Assemble: header, INDEX, CARD, DICTIONARY, six permutations; hash; rename.
    let header = layout(
        Counts { quads: quad_count, terms: term_count, graphs: graphs.len() as u64 },
        plain_summary(&index_sealed),
        plain_summary(&card_sealed),
        dictionary.summary,
        permutation_summaries,
    );
    let mut header_bytes = header.encode();
    let mut output = tempfile::Builder::new().prefix(".rete-").suffix(".partial").tempfile_in(&output_dir).with_context(|| format!("cannot write in {}", output_dir.display()))?;
    let mut hasher = ContentHasher::default();
    {
        let mut writer = HashingWriter { inner: BufWriter::with_capacity(1 << 20, output.as_file_mut()), hasher: &mut hasher };
        writer.write_all(&header_bytes)?;
        writer.write_all(&index_sealed)?;
        writer.write_all(&card_sealed)?;
        dictionary_file.rewind()?;
        std::io::copy(&mut dictionary_file, &mut writer)?;
        for mut file in permutation_files {
            file.rewind()?;
            std::io::copy(&mut file, &mut writer)?;
        }
        writer.inner.flush()?;
    }
    stamp_content_hash(&mut header_bytes, hasher.finish());
    let file = output.as_file_mut();
    file.rewind()?;
    file.write_all(&header_bytes)?;
    file.sync_all()?;
    let file_bytes = file.metadata()?.len();
    if file_bytes != header.file_length {
        bail!("internal error: wrote {file_bytes} bytes, layout says {}", header.file_length);
    }
    output.persist(&options.output).with_context(|| format!("cannot create {}", options.output.display()))?;
    progress.bar.finish_and_clear();
    Ok(BuildReport {
        parsed: stats.quads,
        skipped: stats.skipped,
        quads: quad_count,
        terms: term_count,
        graphs: graphs.len() as u64,
        input_bytes,
        file_bytes,
        elapsed: started.elapsed(),
    })
}

fn plain_summary(bytes: &[u8]) -> SectionSummary {
    SectionSummary { length: bytes.len() as u64, item_count: 0, checksum: xxhash_rust::xxh3::xxh3_64(bytes) }
}

/// Seals blocks on all cores, keeping their order.
fn seal_all(raws: Vec<&[u8]>) -> Result<Vec<Vec<u8>>> {
    Ok(raws.into_par_iter().map(block::seal).collect::<std::io::Result<Vec<_>>>()?)
}

/// Appends sealed blocks to a temporary section file.
struct BlockWriter {
    writer: BufWriter<File>,
    hasher: Xxh3,
    summary: SectionSummary,
}

impl BlockWriter {
    fn new(dir: &Path) -> Result<Self> {
        Ok(Self { writer: BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(dir)?), hasher: Xxh3::new(), summary: SectionSummary::default() })
    }

    /// Writes a block; its range is relative to the section until [`Index`] decoding adds the section offset.
    fn write_block(&mut self, sealed: &[u8]) -> Result<ByteRange> {
        self.writer.write_all(sealed)?;
        self.hasher.update(sealed);
        let range = ByteRange { offset: self.summary.length, length: sealed.len() as u64 };
        self.summary.length += sealed.len() as u64;
        self.summary.item_count += 1;
        Ok(range)
    }

    fn summary(&self) -> SectionSummary {
        SectionSummary { checksum: self.hasher.digest(), ..self.summary }
    }

    fn into_file(self) -> Result<File> {
        self.writer.into_inner().map_err(|e| e.into_error()).context("cannot flush a temporary file")
    }

    fn into_file_keep(&mut self) -> Result<File> {
        self.writer.flush()?;
        self.summary = self.summary();
        Ok(self.writer.get_ref().try_clone()?)
    }
}

/// Cuts keys into blocks of `block_quads`, sealing 64 at a time in parallel.
struct PermutationEncoder {
    block_quads: usize,
    current: Vec<Key>,
    pending: Vec<Vec<Key>>,
}

impl PermutationEncoder {
    fn new(block_quads: usize) -> Self {
        Self { block_quads, current: Vec::with_capacity(block_quads), pending: Vec::new() }
    }

    fn push(&mut self, key: Key, writer: &mut BlockWriter, entries: &mut Vec<PermutationEntry>) -> Result<()> {
        self.current.push(key);
        if self.current.len() == self.block_quads {
            self.pending.push(std::mem::replace(&mut self.current, Vec::with_capacity(self.block_quads)));
            if self.pending.len() == 64 {
                self.flush(writer, entries)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, writer: &mut BlockWriter, entries: &mut Vec<PermutationEntry>) -> Result<()> {
        if !self.current.is_empty() {
            self.pending.push(std::mem::take(&mut self.current));
        }
        self.flush(writer, entries)
    }

    fn flush(&mut self, writer: &mut BlockWriter, entries: &mut Vec<PermutationEntry>) -> Result<()> {
        let sealed: Vec<Vec<u8>> = self.pending.par_iter().map(|keys| block::seal(&encode_block(keys))).collect::<std::io::Result<_>>()?;
        for (keys, sealed) in self.pending.drain(..).zip(sealed) {
            let range = writer.write_block(&sealed)?;
            entries.push(PermutationEntry { range, quad_count: keys.len() as u64, first_key: keys[0] });
        }
        Ok(())
    }
}

/// Counts runs of equal ids (they arrive grouped) and keeps the largest.
#[derive(Default)]
struct TopCounts {
    current: Option<(TermId, u64)>,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, std::cmp::Reverse<TermId>)>>,
    more: u64,
    top: Vec<(u64, TermId)>,
}

impl TopCounts {
    fn add(&mut self, id: TermId) {
        match &mut self.current {
            Some((current, count)) if *current == id => *count += 1,
            _ => {
                self.close();
                self.current = Some((id, 1));
            }
        }
    }

    fn close(&mut self) {
        if let Some((id, count)) = self.current.take() {
            self.heap.push(std::cmp::Reverse((count, std::cmp::Reverse(id))));
            if self.heap.len() > CARD_LIST_CAP {
                self.heap.pop();
                self.more += 1;
            }
        }
    }

    /// Sorted by count descending, then id (= IRI order).
    fn finish(&mut self) {
        self.close();
        let mut top: Vec<(u64, TermId)> = self.heap.drain().map(|std::cmp::Reverse((count, std::cmp::Reverse(id)))| (count, id)).collect();
        top.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        self.top = top;
    }
}

/// Reads terms back from the dictionary section being written.
struct TempDictionary<'a> {
    file: &'a mut File,
    entries: &'a [DictionaryEntry],
}

impl TempDictionary<'_> {
    fn iri(&mut self, id: TermId) -> Result<String> {
        let number = self.entries.partition_point(|e| e.first_id <= id).saturating_sub(1);
        let entry = self.entries.get(number).context("term id outside the dictionary")?;
        let mut sealed = vec![0u8; entry.range.length as usize];
        self.file.seek(std::io::SeekFrom::Start(entry.range.offset))?;
        self.file.read_exact(&mut sealed)?;
        let raw = block::open(&sealed, &|| "temporary dictionary".into(), 0)?;
        let block = DictionaryBlock::decode(&raw, "temporary dictionary", 0)?;
        let term = block.get((id - entry.first_id) as usize).context("term id outside its block")?;
        Ok(match rete_core::decode_term(term)? {
            oxrdf::Term::NamedNode(node) => node.into_string(),
            other => other.to_string(),
        })
    }
}

struct HashingWriter<'a, W> {
    inner: W,
    hasher: &'a mut ContentHasher,
}

impl<W: Write> Write for HashingWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Progress on stderr when it is a terminal; silent otherwise.
struct Progress {
    bar: ProgressBar,
}

impl Progress {
    fn new(enabled: bool) -> Self {
        let bar = if enabled { ProgressBar::new(0) } else { ProgressBar::hidden() };
        Self { bar }
    }

    fn phase(&self, name: &str, total: u64) {
        let template = if total > 0 { "{msg:>14} [{bar:30}] {percent:>3}% {elapsed}" } else { "{msg:>14} {spinner} {elapsed}" };
        if let Ok(style) = ProgressStyle::with_template(template) {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.set_message(name.to_owned());
        self.bar.enable_steady_tick(Duration::from_millis(200));
    }
}
