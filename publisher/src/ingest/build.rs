//! `rete build`'s pipeline. Memory stays within `--mem` whatever the input
//! size: the term table and every sort spill to temporary files. Quads that
//! fit in half the budget never touch the disk: they are sorted in place and
//! each order is derived from the previous one. Blocks are compressed on all
//! cores in order, so the output does not depend on the thread count. The
//! file is written beside the output and renamed into place only when complete.

use super::dictionary::{IdMapping, TermRuns};
use super::heads::{BlockHeads, MAX_HEADS_OF_A_KIND};
use super::input::Input;
use super::metadata::{DefaultGraph, Metadata, built_at};
use super::parse::{BlankNodes, ParseStats, parse_input};
use super::readback::{Lookup, TempDictionary, TempQuads};
use super::sort::{ExternalSorter, RecordWriter, Section, SectionWriter, TempRecords};
use super::stats::{Runs, TermStats};
use super::summary::{SummaryInputs, SummaryOptions};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use rete_core::format::block;
use rete_core::format::header::{FEATURE_RESTART_CODINGS, FEATURE_TRIPLE_TERMS, FEATURE_VALUE_ORDER, FLAG_UNION_DEFAULT_GRAPH};
use rete_core::format::card::{CARD_EXAMPLE_CLASSES, CARD_EXAMPLES, CARD_LIST_CAP, Card, ClassCount, PredicateCount, SourceFile};
use rete_core::format::dictionary::{BlockTarget, DictionaryEncoder};
use rete_core::format::directory::{Body, build_tree};
use rete_core::format::index::{DictionaryEntry, GraphEntry, Index, PermutationEntry, Sections as IndexSections};
use rete_core::format::permutation::{self, Key, encode_block, encode_coded_block};
use rete_core::format::write::{ContentHasher, Counts, SectionSummary, layout_with_directory, stamp_content_hash};
use rete_core::{ByteRange, Permutation, TermId};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufWriter, Seek, Write};
use std::mem::size_of;
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
    /// Card members given as flags (they win over `card.toml` and the data).
    pub metadata: Metadata,
    /// Compute the summary's community levels (`--no-pyramid` turns it off).
    pub pyramid: bool,
    /// Block sizes and directory (the writer's choice by size unless set).
    pub blocks: BlockLayout,
}

/// How blocks and their directories are laid out (FORMAT.md §4.3, §8). The
/// default is the writer's guidance; the fields force a layout (hidden
/// flags `--block-quads` and `--node-entries`), so that a small file can
/// have a directory (tests, benchmarks).
#[derive(Debug, Clone, Copy, Default)]
pub struct BlockLayout {
    /// Quads per permutation block, fixed.
    pub block_quads: Option<usize>,
    /// Write a directory whose nodes and root hold at most this many entries.
    pub node_entries: Option<usize>,
}

/// FORMAT.md §4.3: past this many quads, fixed blocks and a directory.
const FLAT_MAX_QUADS: u64 = 8_388_608;
/// FORMAT.md §4.3: quads per permutation block past [`FLAT_MAX_QUADS`].
const DIRECTORY_BLOCK_QUADS: usize = 16_384;
/// FORMAT.md §4.3: entries of a node, and of a root (a permutation's, the dictionary's).
const NODE_ENTRIES: usize = 512;
const ROOT_ENTRIES: [usize; 2] = [128, 256];

impl BlockLayout {
    /// Fixed quads per permutation block for `quads` quads, if any: when
    /// forced, or past [`FLAT_MAX_QUADS`] (else FORMAT.md §8's share).
    fn fixed_block_quads(&self, quads: u64) -> Option<usize> {
        self.block_quads.map(|n| n.max(1)).or((quads > FLAT_MAX_QUADS).then_some(DIRECTORY_BLOCK_QUADS))
    }
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
    /// Community levels in the summary.
    pub summary_levels: usize,
    /// Wall time.
    pub elapsed: Duration,
}

/// Builds a `.rete` file. One function per phase, in the order the data
/// flows: 1 parse, 2 dictionary, 3 the six orders (then INDEX, which they and
/// the dictionary give), 4 the label search index, 5 the sections that
/// describe the data (card, summary, axioms), 6 assembly.
pub fn build(options: &BuildOptions) -> Result<BuildReport> {
    let started = Instant::now();
    let work = Workspace::new(options)?;
    // Read card.toml first: a mistake in it should not cost a whole build.
    let card_toml = read_card_toml(&options.inputs)?;
    let parsed = parse(options, &work)?;
    let dictionary = write_dictionary(parsed.terms, &parsed.heads, parsed.stats.quads, &work)?;
    let Dictionary { section: dictionary_section, entries: dictionary_entries, mapping, term_count, stats: mut term_stats } = dictionary;
    let first_blank_id = term_stats.first_blank_id.unwrap_or(term_count + 1);
    let first_literal_id = term_stats.first_literal_id.unwrap_or(term_count + 1);
    // FORMAT.md §2: a file with a triple term is format 2.0 with `required_features` bit 0,
    // one with a value-ordered literal (§5.1.1) with bit 2.
    let mut required_features = if term_stats.first_triple_term_id.is_some() { FEATURE_TRIPLE_TERMS } else { 0 } | if term_stats.value_order { FEATURE_VALUE_ORDER } else { 0 };
    let vocabulary = std::mem::take(&mut term_stats.vocabulary);
    let (mut sorted, summary_inputs) = sort_orders(parsed.quads, mapping, &vocabulary, first_literal_id, &work)?;
    // FORMAT.md §6.1: fixed-size blocks (a directory) carry coding bytes, bit 3.
    if sorted.key_layout == permutation::BlockLayout::Coded {
        required_features |= FEATURE_RESTART_CODINGS;
    }
    let counts = Counts { quads: sorted.counts.quad_count, terms: term_count, graphs: sorted.counts.graphs.len() as u64 };
    let graphs = sorted.counts.graphs.iter().map(|(&id, &quad_count)| GraphEntry { id, quad_count }).collect();
    let index = Index::flat(dictionary_entries, graphs, std::mem::take(&mut sorted.entries));
    let dictionary_summary = dictionary_section.summary();
    let mut dictionary_file = dictionary_section.finish()?;
    let search_settings = options.metadata.clone().or(card_toml.clone().unwrap_or_default());
    // Phase 4: the label search index (FORMAT.md §12), read back from the temporary sections.
    let search = super::search::build_section(&mut dictionary_file, &index, &mut sorted.files, sorted.key_layout, first_blank_id, first_literal_id, &search_settings, work.dir(), work.memory)?;
    let described = describe(options, card_toml, &parsed.stats, term_stats, &vocabulary, counts, &mut sorted, summary_inputs, &index, &mut dictionary_file, first_blank_id, search.card, &work)?;
    let summary_levels = described.summary.levels;
    let (index, directory) = directories(&index, work.blocks)?;
    let sections = Sections {
        index,
        directory,
        described,
        search: search.sections,
        dictionary: (dictionary_summary, dictionary_file),
        permutations: (sorted.summaries, sorted.files),
    };
    let file_bytes = assemble(&options.output, counts, required_features, sections, &work)?;
    work.progress.bar.finish_and_clear();
    Ok(BuildReport {
        parsed: parsed.stats.quads,
        skipped: parsed.stats.skipped,
        quads: counts.quads,
        terms: counts.terms,
        graphs: counts.graphs,
        input_bytes: parsed.input_bytes,
        file_bytes,
        summary_levels,
        elapsed: started.elapsed(),
    })
}

/// Where a build works: the output's directory, its temporary directory
/// (removed when the build ends, however it ends), its memory and its progress bar.
struct Workspace {
    output_dir: PathBuf,
    blocks: BlockLayout,
    temp: tempfile::TempDir,
    /// While parsing, half for the term table and half for the quads; later the
    /// quads (or the sort runs) may use all of it. Batches of blocks being
    /// compressed and chunks being parsed are held on top, bounded by constants.
    memory: usize,
    progress: Progress,
}

impl Workspace {
    fn new(options: &BuildOptions) -> Result<Self> {
        let output_dir = match options.output.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
        let temp_root = options.temp_dir.clone().unwrap_or_else(|| output_dir.clone());
        let temp = tempfile::Builder::new().prefix(".rete-build-").tempdir_in(&temp_root).with_context(|| format!("cannot create a temporary directory in {}", temp_root.display()))?;
        Ok(Self { output_dir, blocks: options.blocks, temp, memory: options.memory_bytes.max(64 << 10), progress: Progress::new(options.progress) })
    }

    fn dir(&self) -> &Path {
        self.temp.path()
    }
}

/// The `card.toml` beside the first input, if any (not for stdin).
fn read_card_toml(inputs: &[Input]) -> Result<Option<Metadata>> {
    match inputs.first() {
        Some(input) if !input.is_stdin() => Metadata::from_card_toml(input.path.parent().unwrap_or(Path::new(""))).map(Some),
        _ => Ok(None),
    }
}

/// What parsing leaves: every term under a temporary id (in order of
/// appearance), and the quads of temporary ids, in memory or on disk.
struct Parsed {
    terms: TermRuns,
    /// Predicates and classes, which start dictionary blocks.
    heads: BlockHeads,
    quads: SpooledQuads,
    stats: ParseStats,
    input_bytes: u64,
}

/// Phase 1: parses every input in order.
fn parse(options: &BuildOptions, work: &Workspace) -> Result<Parsed> {
    let input_bytes: u64 = options.inputs.iter().map(Input::size_bytes).sum();
    work.progress.phase("parsing", input_bytes);
    let mut terms = TermRuns::new(work.dir(), work.memory / 2);
    let mut blank_nodes = BlankNodes::default();
    let mut spool = QuadSpool::new(work.dir(), work.memory / 2);
    let mut stats = ParseStats::default();
    let mut heads = BlockHeads::default();
    for input in &options.inputs {
        let bar = work.progress.bar.clone();
        let parsed = parse_input(input, options.lenient, &mut blank_nodes, move |n| bar.inc(n as u64), |quad| {
            let ids = [terms.intern(quad[0])?, terms.intern(quad[1])?, terms.intern(quad[2])?, terms.intern(quad[3])?];
            heads.add((quad[1], ids[1]), (quad[2], ids[2]));
            spool.push(ids)
        })?;
        stats.quads += parsed.quads;
        stats.skipped += parsed.skipped;
        stats.prefixes.extend(parsed.prefixes);
    }
    Ok(Parsed { terms, heads, quads: spool.finish()?, stats, input_bytes })
}

/// The DICTIONARY section written to a temporary file, and how temporary ids map to final ones.
struct Dictionary {
    section: BlockWriter,
    entries: Vec<DictionaryEntry>,
    mapping: IdMapping,
    term_count: u64,
    stats: TermStats,
}

/// Phase 2: merges the term runs into sorted, sealed dictionary blocks
/// (FORMAT.md §5), counting what the card says about terms.
fn write_dictionary(mut terms: TermRuns, heads: &BlockHeads, quads: u64, work: &Workspace) -> Result<Dictionary> {
    work.progress.phase("dictionary", 0);
    let (term_count, term_bytes) = terms.distinct()?;
    let mut section = BlockWriter::new(work.dir());
    // `quads` counts statements parsed, duplicates included: at least the quads.
    let target = match work.blocks.fixed_block_quads(quads) {
        Some(block_quads) => fixed_dictionary_target(term_count, term_bytes, quads.div_ceil(block_quads as u64)),
        None => dictionary_target(term_count, term_bytes),
    };
    let mut encoder = DictionaryEncoder::new(target);
    // A block may grow to twice the size it was full at (waiting for a short head).
    let dictionary_batch = batch_blocks(4 * target.bytes, BATCH_BYTES);
    let mut pending = Vec::new();
    let mut entries: Vec<DictionaryEntry> = Vec::new();
    let mut next_first_id: TermId = 1;
    let mut flush = |pending: &mut Vec<rete_core::format::dictionary::RawDictionaryBlock>, writer: &mut BlockWriter, entries: &mut Vec<DictionaryEntry>, force: bool| -> Result<()> {
        if pending.len() < dictionary_batch && !force {
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
    let mut stats = TermStats::default();
    let mut id: TermId = 0;
    let mapping = terms.merge(work.memory / 2, |term| {
        id += 1;
        stats.add(id, term);
        if heads.starts_block(term)
            && let Some(block) = encoder.cut_before()
        {
            pending.push(block);
        }
        if let Some(block) = encoder.push(term) {
            pending.push(block);
            flush(&mut pending, &mut section, &mut entries, false)?;
        }
        Ok(())
    })?;
    if let Some(block) = encoder.finish() {
        pending.push(block);
    }
    flush(&mut pending, &mut section, &mut entries, true)?;
    debug_assert_eq!(id, term_count);
    Ok(Dictionary { section, entries, mapping, term_count, stats })
}

/// The six PERMUTATION sections written to temporary files, and the counts
/// the card and the summary take from them.
struct Sorted {
    counts: OrderCounts,
    entries: [Vec<PermutationEntry>; 6],
    summaries: [SectionSummary; 6],
    files: Vec<Section>,
    /// How the blocks in `files` are laid out (FORMAT.md §6.1).
    key_layout: permutation::BlockLayout,
}

/// Phase 3: renumbers the quads to final ids, then sorts them into the six
/// orders (FORMAT.md §6), in memory when they fit, else on disk.
/// The summary's inputs (type pairs and links) are gathered while SPO is written.
fn sort_orders(quads: SpooledQuads, mapping: IdMapping, vocabulary: &BTreeMap<&'static str, TermId>, first_literal_id: TermId, work: &Workspace) -> Result<(Sorted, SummaryInputs)> {
    work.progress.phase("renumbering", 0);
    let rdf_type_id = vocabulary.get(oxrdf::vocab::rdf::TYPE.as_str()).copied();
    let summary_inputs = SummaryInputs::new(work.dir(), vocabulary, first_literal_id)?;
    let mut orders = Orders::new(work.dir(), &work.progress, rdf_type_id, summary_inputs, work.blocks);
    match (quads, mapping) {
        (SpooledQuads::Memory(mut quads), IdMapping::Memory(mapping)) => {
            // Every temporary id was handed out by the term table, so it is in the
            // mapping; final ids are at most the temporary ones, so they pack too.
            quads.par_iter_mut().for_each(|quad| *quad = pack(unpack(*quad).map(|id| mapping.get(id as usize).copied().unwrap_or(0))).unwrap_or(0));
            drop(mapping);
            orders.sort_in_memory(quads)?;
        }
        (quads, mapping) => {
            // Translated quads go straight into the SPO sort (its buffer and the
            // mapping's window take half the budget each).
            let quads = quads.into_records(work.dir())?;
            let mut sorter = ExternalSorter::<4>::new(work.dir(), work.memory / 2, quads.records());
            mapping.translate(quads, work.dir(), work.memory / 2, |quad| sorter.push(quad))?;
            orders.sort_on_disk(sorter, work.memory)?;
        }
    }
    let key_layout = orders.key_layout();
    let Orders { mut counts, sections, summary_inputs, .. } = orders;
    counts.predicate_counts.finish();
    counts.class_counts.finish();
    let mut entries: [Vec<PermutationEntry>; 6] = Default::default();
    let mut summaries = [SectionSummary::default(); 6];
    let mut files = Vec::new();
    for (p, (section_entries, summary, file)) in sections.into_iter().enumerate() {
        entries[p] = section_entries;
        summaries[p] = summary;
        files.push(file);
    }
    Ok((Sorted { counts, entries, summaries, files, key_layout }, summary_inputs))
}

/// The sections that describe the data: CARD, SUMMARY (and MEMBERS), the two axiom sections.
struct Described {
    card: Vec<u8>,
    summary: super::summary::SummarySections,
    axioms: [Option<Vec<u8>>; 2],
    flags: u64,
}

/// Phase 5: the card, the summary and the axioms, read back from the
/// temporary sections through `index` (terms by id, quads by pattern).
#[allow(clippy::too_many_arguments)]
fn describe(
    options: &BuildOptions,
    card_toml: Option<Metadata>,
    parse_stats: &ParseStats,
    term_stats: TermStats,
    vocabulary: &BTreeMap<&'static str, TermId>,
    counts: Counts,
    sorted: &mut Sorted,
    summary_inputs: SummaryInputs,
    index: &Index,
    dictionary_file: &mut Section,
    first_blank_id: TermId,
    search_card: Option<rete_core::format::card::CardSearch>,
    work: &Workspace,
) -> Result<Described> {
    work.progress.phase("summarizing", 0);
    let [spo_file, _, pso_file, pos_file, ..] = sorted.files.as_mut_slice() else { bail!("internal error: six permutations expected") };
    let mut lookup = Lookup {
        dictionary: TempDictionary::new(dictionary_file, &index.dictionary),
        spo: TempQuads::new(spo_file, &index.permutations[0], sorted.key_layout),
        pso: TempQuads::new(pso_file, &index.permutations[2], sorted.key_layout),
        pos: TempQuads::new(pos_file, &index.permutations[3], sorted.key_layout),
        vocabulary,
    };
    let metadata = options.metadata.clone().or(card_toml.unwrap_or_default()).or(Metadata::from_data(&mut lookup)?);
    let flags = if metadata.default_graph == Some(DefaultGraph::Union) { FLAG_UNION_DEFAULT_GRAPH } else { 0 };
    let input_paths: Vec<&Path> = options.inputs.iter().filter(|i| !i.is_stdin()).map(|i| i.path.as_path()).collect();
    let mut predicates = Vec::with_capacity(sorted.counts.predicate_counts.top.len());
    for &(count, id) in &sorted.counts.predicate_counts.top {
        predicates.push(PredicateCount { iri: lookup.dictionary.iri(id)?, label: lookup.label(id)?, quads: count });
    }
    let mut classes = Vec::with_capacity(sorted.counts.class_counts.top.len());
    for (rank, &(count, id)) in sorted.counts.class_counts.top.iter().enumerate() {
        let mut class = ClassCount { iri: lookup.dictionary.iri(id)?, label: lookup.label(id)?, instances: count, examples: Vec::new() };
        if rank < CARD_EXAMPLE_CLASSES {
            for example in sorted.counts.examples.remove(&id).unwrap_or_default() {
                class.examples.push(lookup.dictionary.iri(example)?);
            }
        }
        classes.push(class);
    }
    let (languages, languages_more, datatypes, datatypes_more, namespaces, namespaces_more) = term_stats.finish(&parse_stats.prefixes);
    let mut card = Card {
        rete_version: env!("CARGO_PKG_VERSION").into(),
        title: metadata.title,
        description: metadata.description,
        license: metadata.license,
        source: metadata.source,
        publisher: metadata.publisher,
        base_iri: metadata.base_iri,
        built_at: built_at(&input_paths)?,
        quads: counts.quads,
        terms: counts.terms,
        graphs: counts.graphs,
        subjects: sorted.counts.subjects,
        objects: sorted.counts.objects,
        predicates,
        predicates_more: sorted.counts.predicate_counts.more,
        classes,
        classes_more: sorted.counts.class_counts.more,
        languages,
        languages_more,
        datatypes,
        datatypes_more,
        namespaces,
        namespaces_more,
        // Only the file name: the same data built from another directory gives the same file.
        sources: options.inputs.iter().map(|i| SourceFile { name: i.file_name(), bytes: i.size_bytes() }).collect(),
        search: search_card,
        extra: Default::default(),
    };
    let card_sealed = seal_card(&mut card)?;
    let class_ids: Vec<(TermId, u64)> = sorted.counts.class_counts.top.iter().map(|&(count, id)| (id, count)).collect();
    let summary = super::summary::build(summary_inputs, &class_ids, first_blank_id, &mut lookup, &SummaryOptions { pyramid: options.pyramid, memory_bytes: work.memory })?;
    let axioms = super::axioms::build(&mut lookup, first_blank_id)?;
    Ok(Described { card: card_sealed, summary, axioms, flags })
}

/// INDEX, sealed: flat (FORMAT.md §4.1), or, when a root would list more
/// blocks than FORMAT.md §4.3's writer guidance allows (or `layout` forces
/// nodes), the roots of a directory of the least depth, with its DIRECTORY
/// section (the sealed nodes) and node count.
fn directories(index: &Index, layout: BlockLayout) -> Result<(Vec<u8>, Option<(Vec<u8>, usize)>)> {
    let [permutation_root, dictionary_root] = layout.node_entries.map_or(ROOT_ENTRIES, |n| [n, n]);
    let node_entries = layout.node_entries.unwrap_or(NODE_ENTRIES);
    // Flat files hold up to 2 × 128 blocks in an order (`lookup_block_quads`)
    // and a block more in the dictionary per predicate and class (`heads.rs`).
    let flat = layout.node_entries.is_none()
        && index.dictionary.entries.len() <= dictionary_root + 2 * MAX_HEADS_OF_A_KIND
        && index.permutations.iter().all(|body| body.entries.len() as u64 <= 2 * PERMUTATION_BLOCKS);
    if flat {
        return Ok((block::compress_first_read(&index.encode(&IndexSections::default()))?, None));
    }
    let mut directory = Vec::new();
    let (dictionary, mut nodes) = build_tree((*index.dictionary).clone(), node_entries, dictionary_root, true, &mut directory)?;
    let mut permutations: [Arc<Body<Key>>; 6] = Default::default();
    for (root, body) in permutations.iter_mut().zip(&index.permutations) {
        let (tree, count) = build_tree((**body).clone(), node_entries, permutation_root, false, &mut directory)?;
        *root = Arc::new(tree);
        nodes += count;
    }
    let roots = Index { dictionary: Arc::new(dictionary), graphs: index.graphs.clone(), permutations };
    // Ranges are relative to their sections: the sections' offsets are 0 here.
    let sections = IndexSections { directory: Some(ByteRange { offset: 0, length: directory.len() as u64 }), ..IndexSections::default() };
    Ok((block::compress_first_read(&roots.encode(&sections))?, Some((directory, nodes))))
}

/// Every section of the file, sealed, in memory or in its temporary file.
struct Sections {
    index: Vec<u8>,
    /// DIRECTORY (its sealed nodes) and its node count, with a directory.
    directory: Option<(Vec<u8>, usize)>,
    described: Described,
    /// SEARCH's root, SEARCH BLOCKS' bytes and summary.
    search: Option<(Vec<u8>, Section, SectionSummary)>,
    dictionary: (SectionSummary, Section),
    permutations: ([SectionSummary; 6], Vec<Section>),
}

/// Phase 6: header, then every section in FORMAT.md §1's order into a
/// temporary file beside the output, hashed as written; the content hash
/// stamped into the header; renamed into place. Returns the file's length.
fn assemble(output_path: &Path, counts: Counts, required_features: u64, sections: Sections, work: &Workspace) -> Result<u64> {
    let Sections { index, directory, described, search, dictionary: (dictionary_summary, mut dictionary_file), permutations: (permutation_summaries, permutation_files) } = sections;
    let Described { card, summary, axioms, flags } = described;
    let (members_file, members_summary) = match summary.members {
        Some((file, summary)) => (Some(file), Some(summary)),
        None => (None, None),
    };
    let mut header = layout_with_directory(
        counts,
        plain_summary(&index),
        plain_summary(&card),
        axioms.each_ref().map(|a| a.as_deref().map(plain_summary)),
        Some(plain_summary(&summary.summary)),
        directory.as_ref().map(|(nodes, count)| SectionSummary { item_count: *count as u64, ..plain_summary(nodes) }),
        dictionary_summary,
        permutation_summaries,
        members_summary,
        search.as_ref().map(|(root, _, blocks)| [super::search::root_summary(root), *blocks]),
    );
    header.flags = flags;
    header.require(required_features);
    let mut header_bytes = header.encode();
    let mut output = tempfile::Builder::new().prefix(".rete-").suffix(".partial").tempfile_in(&work.output_dir).with_context(|| format!("cannot write in {}", work.output_dir.display()))?;
    let mut hasher = ContentHasher::default();
    {
        let mut writer = HashingWriter { inner: BufWriter::with_capacity(1 << 20, output.as_file_mut()), hasher: &mut hasher };
        writer.write_all(&header_bytes)?;
        writer.write_all(&index)?;
        writer.write_all(&card)?;
        if let Some((root, _, _)) = &search {
            writer.write_all(root)?;
        }
        for axioms in axioms.iter().flatten() {
            writer.write_all(axioms)?;
        }
        writer.write_all(&summary.summary)?;
        if let Some((nodes, _)) = &directory {
            writer.write_all(nodes)?;
        }
        dictionary_file.copy_to(&mut writer)?;
        for mut section in permutation_files.into_iter().chain(members_file).chain(search.map(|(_, blocks, _)| blocks)) {
            section.copy_to(&mut writer)?;
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
    output.persist(output_path).with_context(|| format!("cannot create {}", output_path.display()))?;
    Ok(file_bytes)
}

fn plain_summary(bytes: &[u8]) -> SectionSummary {
    SectionSummary { length: bytes.len() as u64, item_count: 0, checksum: xxhash_rust::xxh3::xxh3_64(bytes) }
}

/// Seals blocks on all cores, keeping their order.
fn seal_all(raws: Vec<&[u8]>) -> Result<Vec<Vec<u8>>> {
    Ok(raws.into_par_iter().map(block::seal).collect::<std::io::Result<Vec<_>>>()?)
}

/// Appends sealed blocks to a section (in memory while small, else a temporary file).
struct BlockWriter {
    writer: SectionWriter,
    hasher: Xxh3,
    summary: SectionSummary,
}

impl BlockWriter {
    fn new(dir: &Path) -> Self {
        Self { writer: SectionWriter::new(dir), hasher: Xxh3::new(), summary: SectionSummary::default() }
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

    fn finish(self) -> Result<Section> {
        self.writer.finish()
    }
}

/// Dictionary blocks and blocks per permutation the writer aims at (FORMAT.md
/// §8): their directories then fit the first read at any size, so the open is
/// one read, and a dictionary block's id range spans about one block of a
/// permutation, so a pattern's quad blocks can be read with its terms'
/// dictionary blocks (docs/READ-PATH.md, "Why the bounds hold").
const DICTIONARY_BLOCKS: u64 = 256;
const PERMUTATION_BLOCKS: u64 = 128;

/// FORMAT.md §8: 1/256 of the terms' plain bytes (4 KiB–1 MiB front-coded), or
/// 1/256 of the terms once a block has 4 KiB (terms that front-code to a few
/// bytes each would otherwise make a few huge blocks, each spanning many
/// permutation blocks: LUBM(10)'s IRIs made 53 blocks of ~6,000 ids, five SPO
/// blocks each, when the count cut waited for 32 KiB). The 4 KiB keep small
/// files' blocks from being a few terms each.
fn dictionary_target(term_count: u64, term_bytes: u64) -> BlockTarget {
    BlockTarget { bytes: (term_bytes / DICTIONARY_BLOCKS).clamp(4 << 10, 1 << 20) as usize, terms: term_count.div_ceil(DICTIONARY_BLOCKS), min_bytes: 4 << 10 }
}

/// FORMAT.md §4.3 (with fixed permutation blocks): at least as many
/// dictionary blocks as blocks per permutation, each at most 16 KiB of
/// front-coded terms, so that a dictionary block's id range spans about one
/// permutation block and a pattern's quad blocks can be speculated.
fn fixed_dictionary_target(term_count: u64, term_bytes: u64, permutation_blocks: u64) -> BlockTarget {
    let blocks = permutation_blocks.max(DICTIONARY_BLOCKS);
    BlockTarget { bytes: (term_bytes / blocks).clamp(1 << 10, 16 << 10) as usize, terms: term_count.div_ceil(blocks), min_bytes: 0 }
}

/// FORMAT.md §8: 1/128 of the quads per block rounded up to a power of two,
/// between 1,024 and 65,536 quads; past 8.4M quads, 1/128 of the quads (128
/// blocks), up to 524,288 quads (at most 21 MiB decompressed even with 10-byte
/// varints, under the 32 MiB limit). Past 67M quads there are more than 128.
fn block_quads(quad_count: u64) -> usize {
    let share = quad_count.div_ceil(PERMUTATION_BLOCKS);
    share.next_power_of_two().clamp(1024, 1 << 16).max(share).min(1 << 19) as usize
}

/// FORMAT.md §8: the orders a bound lookup reads (SPO for a subject, POS for
/// a predicate and object, OSP for an object) take blocks of half
/// [`block_quads`] while those are 2,048–32,768 quads (131,073 to 4.2M
/// quads): a cold DESCRIBE or selective pattern reads one or two of them, so
/// halving them halves its bytes (LUBM(10): ~21 KB → ~11 KB), for 3 × 128
/// more INDEX entries (~2 KB, inside the first read; the other three orders
/// keep theirs). Past 32,768 quads a block the file is too large for a
/// DESCRIBE to stay within 64 KB anyway, and INDEX keeps its room.
fn lookup_block_quads(permutation: Permutation, block_quads: usize) -> usize {
    let lookup = matches!(permutation, Permutation::Spo | Permutation::Pos | Permutation::Osp);
    if lookup && (2048..=32_768).contains(&block_quads) { block_quads / 2 } else { block_quads }
}

/// Bytes of blocks being encoded and compressed at once, on top of `--mem`.
const BATCH_BYTES: usize = 16 << 20;

/// How many blocks of about `block_bytes` (in memory while being sealed) to
/// seal at once: enough to keep every core busy, within `budget_bytes`.
fn batch_blocks(block_bytes: usize, budget_bytes: usize) -> usize {
    (budget_bytes / block_bytes.max(1)).clamp(1, 4 * rayon::current_num_threads())
}

/// A quad or key of four ids below 2^32 packed into one integer whose order is
/// the order of the key: the in-memory path sorts half the bytes of `[u64; 4]`
/// with a cheaper comparison.
type Packed = u128;

fn pack(key: Key) -> Option<Packed> {
    key.iter().all(|&id| id <= u64::from(u32::MAX)).then(|| key.iter().fold(0, |packed, &id| (packed << 32) | Packed::from(id)))
}

fn unpack(packed: Packed) -> Key {
    [(packed >> 96) as u64, (packed >> 64) as u32 as u64, (packed >> 32) as u32 as u64, packed as u32 as u64]
}

/// Temporary-id quads as parsed: packed in memory up to a budget, else (or
/// when an id needs more than 32 bits) appended to a file.
struct QuadSpool {
    dir: PathBuf,
    capacity: usize,
    quads: Vec<Packed>,
    file: Option<RecordWriter<4>>,
}

enum SpooledQuads {
    Memory(Vec<Packed>),
    Disk(TempRecords<4>),
}

impl QuadSpool {
    fn new(dir: &Path, budget_bytes: usize) -> Self {
        Self { dir: dir.to_owned(), capacity: (budget_bytes / size_of::<Packed>()).max(1024), quads: Vec::new(), file: None }
    }

    fn push(&mut self, quad: Key) -> Result<()> {
        if let Some(writer) = &mut self.file {
            return writer.push(&quad);
        }
        let Some(packed) = pack(quad) else {
            self.spill()?;
            return self.push(quad);
        };
        if self.quads.len() == self.quads.capacity() {
            if self.quads.len() >= self.capacity {
                self.spill()?;
                return self.push(quad);
            }
            // Grow by doubling, but never past the budget.
            self.quads.reserve_exact(self.quads.len().max(1 << 12).min(self.capacity - self.quads.len()));
        }
        self.quads.push(packed);
        Ok(())
    }

    /// From now on, quads go to the file.
    fn spill(&mut self) -> Result<()> {
        let mut writer = RecordWriter::new(&self.dir)?;
        for &quad in &self.quads {
            writer.push(&unpack(quad))?;
        }
        self.quads = Vec::new();
        self.file = Some(writer);
        Ok(())
    }

    fn finish(self) -> Result<SpooledQuads> {
        Ok(match self.file {
            None => SpooledQuads::Memory(self.quads),
            Some(writer) => SpooledQuads::Disk(writer.finish()?),
        })
    }
}

impl SpooledQuads {
    fn into_records(self, dir: &Path) -> Result<TempRecords<4>> {
        match self {
            Self::Disk(records) => Ok(records),
            Self::Memory(quads) => {
                let mut writer = RecordWriter::new(dir)?;
                for &quad in &quads {
                    writer.push(&unpack(quad))?;
                }
                writer.finish()
            }
        }
    }
}

/// What the card takes from the six orders while they are written.
#[derive(Default)]
struct OrderCounts {
    quad_count: u64,
    graphs: BTreeMap<TermId, u64>,
    predicate_counts: TopCounts,
    class_counts: TopCounts,
    /// A few instances of each class still in `class_counts`' top.
    examples: HashMap<TermId, Vec<TermId>>,
    /// Distinct subjects (runs of SPO's first id) and objects (of OSP's).
    subjects: u64,
    objects: u64,
}

/// The six permutation sections, written from sorted keys, and the counts the card needs.
struct Orders<'a> {
    dir: &'a Path,
    progress: &'a Progress,
    rdf_type_id: Option<TermId>,
    /// Quads per block, chosen from the number of distinct quads.
    layout: BlockLayout,
    block_quads: usize,
    counts: OrderCounts,
    last_first_id: Option<(Permutation, TermId)>,
    /// Type pairs and links for the summary, fed from SPO.
    summary_inputs: SummaryInputs,
    /// Entries, summary and bytes of each permutation written so far.
    sections: Vec<(Vec<PermutationEntry>, SectionSummary, Section)>,
}

impl<'a> Orders<'a> {
    fn new(dir: &'a Path, progress: &'a Progress, rdf_type_id: Option<TermId>, summary_inputs: SummaryInputs, layout: BlockLayout) -> Self {
        Self {
            dir,
            layout,
            progress,
            rdf_type_id,
            block_quads: 0,
            counts: OrderCounts::default(),
            last_first_id: None,
            summary_inputs,
            sections: Vec::new(),
        }
    }

    fn set_quad_count(&mut self, quad_count: u64) {
        self.counts.quad_count = quad_count;
        self.block_quads = self.layout.fixed_block_quads(quad_count).unwrap_or_else(|| block_quads(quad_count));
    }

    /// FORMAT.md §6.1: the blocks of a file with fixed-size blocks (those
    /// past 8.4M quads, which have a directory and are 2.x already) carry
    /// coding bytes; flat files' blocks stay as 1.x readers read them.
    fn key_layout(&self) -> permutation::BlockLayout {
        match self.layout.fixed_block_quads(self.counts.quad_count) {
            Some(_) => permutation::BlockLayout::Coded,
            None => permutation::BlockLayout::Raw,
        }
    }

    /// All quads fit in memory: sort and deduplicate in place, then reorder the
    /// same vector for each permutation, so no more memory is needed. An order
    /// that shares its first component with the previous one (SOP after SPO,
    /// POS after PSO, OPS after OSP) only needs each run of equal first ids sorted.
    fn sort_in_memory(&mut self, mut keys: Vec<Packed>) -> Result<()> {
        self.progress.phase("sorting SPO", 0);
        keys.par_sort_unstable();
        keys.dedup();
        self.set_quad_count(keys.len() as u64);
        // Raw and sealed bytes of a block: a few bytes per quad, plus the unpacked keys.
        let batch = self.block_quads * batch_blocks(self.block_quads * 48, BATCH_BYTES);
        let mut previous = Permutation::Spo;
        for permutation in Permutation::ALL {
            self.progress.phase(&format!("sorting {}", permutation.name()), self.counts.quad_count);
            if permutation != previous {
                // The ids came packed, so they pack again.
                let rekey = |key: &mut Packed| *key = pack(permutation.key(previous.quad(unpack(*key)))).unwrap_or(0);
                keys.par_iter_mut().for_each(rekey);
                if permutation.key([1, 2, 3, 0])[0] == previous.key([1, 2, 3, 0])[0] {
                    keys.par_chunk_by_mut(|x, y| x >> 96 == y >> 96).for_each(|run| {
                        if run.len() > 1 << 16 { run.par_sort_unstable() } else { run.sort_unstable() }
                    });
                } else {
                    keys.par_sort_unstable();
                }
                previous = permutation;
            }
            let mut section = BlockWriter::new(self.dir);
            let mut entries = Vec::new();
            for keys in keys.chunks(batch) {
                let keys: Vec<Key> = keys.par_iter().map(|&key| unpack(key)).collect();
                self.write(permutation, &keys, &mut section, &mut entries)?;
            }
            self.sections.push((entries, section.summary(), section.finish()?));
        }
        Ok(())
    }

    /// Quads on disk, in final ids in `spo` (its runs written): their SPO
    /// merge, deduplicated, is a compact spool (FORMAT.md's orders follow from
    /// it one after another, each an external sort within half the budget).
    /// Every run and the spool are released once read.
    fn sort_on_disk(&mut self, spo: ExternalSorter<4>, memory_bytes: usize) -> Result<()> {
        self.progress.phase("sorting SPO", 0);
        let mut sorted = spo.finish()?;
        let mut unique = RecordWriter::<4>::new(self.dir)?;
        while let Some(quad) = sorted.next_record()? {
            unique.push(&quad)?;
        }
        drop(sorted);
        let unique = unique.finish()?;
        let quad_count = unique.records();
        self.set_quad_count(quad_count);
        // The keys of a batch are copied out of the merge: 32 bytes each, plus the block.
        let batch = self.block_quads * batch_blocks(self.block_quads * 48, BATCH_BYTES.max(memory_bytes / 4));
        let mut pending = Vec::with_capacity(batch);
        let mut unique = Some(unique);
        for permutation in Permutation::ALL {
            self.progress.phase(&format!("sorting {}", permutation.name()), quad_count);
            // The last order takes the spool, which goes once read.
            let spool: &TempRecords<4> = unique.as_ref().context("internal error: the quad spool is gone")?;
            let mut reader = if permutation == Permutation::Ops { unique.take().map(TempRecords::into_reader) } else { Some(spool.reader()?) }.context("internal error: no quad spool")?;
            let mut section = BlockWriter::new(self.dir);
            let mut entries = Vec::new();
            let mut sorted = None;
            if permutation != Permutation::Spo {
                let mut sorter = ExternalSorter::<4>::new(self.dir, memory_bytes / 2, quad_count);
                while let Some(quad) = reader.next_record()? {
                    sorter.push(permutation.key(quad))?;
                }
                sorted = Some(sorter.finish()?);
            }
            loop {
                let key = match &mut sorted {
                    Some(sorted) => sorted.next_record()?,
                    None => reader.next_record()?,
                };
                let Some(key) = key else { break };
                pending.push(key);
                if pending.len() == batch {
                    self.write(permutation, &pending, &mut section, &mut entries)?;
                    pending.clear();
                }
            }
            self.write(permutation, &pending, &mut section, &mut entries)?;
            pending.clear();
            self.sections.push((entries, section.summary(), section.finish()?));
        }
        Ok(())
    }

    /// Counts `keys` for the card and seals them into blocks (in parallel, in
    /// order); `keys` is a whole number of blocks unless it ends the section.
    fn write(&mut self, permutation: Permutation, keys: &[Key], section: &mut BlockWriter, entries: &mut Vec<PermutationEntry>) -> Result<()> {
        // Distinct first ids: subjects in SPO, objects in OSP.
        let mut distinct_firsts = 0;
        if matches!(permutation, Permutation::Spo | Permutation::Osp) {
            for key in keys {
                if self.last_first_id != Some((permutation, key[0])) {
                    distinct_firsts += 1;
                    self.last_first_id = Some((permutation, key[0]));
                }
            }
        }
        match permutation {
            Permutation::Spo => {
                for key in keys.iter().filter(|key| key[3] != 0) {
                    *self.counts.graphs.entry(key[3]).or_default() += 1;
                }
                self.counts.subjects += distinct_firsts;
                self.summary_inputs.spo(keys)?;
            }
            Permutation::Pso => keys.iter().for_each(|key| _ = self.counts.predicate_counts.add(key[0])),
            Permutation::Pos => {
                if let Some(rdf_type) = self.rdf_type_id {
                    for key in keys.iter().filter(|key| key[0] == rdf_type) {
                        if let Some(dropped) = self.counts.class_counts.add(key[1]) {
                            self.counts.examples.remove(&dropped);
                        }
                        let examples = self.counts.examples.entry(key[1]).or_default();
                        if examples.len() < CARD_EXAMPLES && examples.last() != Some(&key[2]) {
                            examples.push(key[2]);
                        }
                    }
                }
            }
            Permutation::Osp => self.counts.objects += distinct_firsts,
            _ => {}
        }
        let coded = self.key_layout() == permutation::BlockLayout::Coded;
        let seal = |block: &[Key]| block::seal(&if coded { encode_coded_block(block)? } else { encode_block(block) });
        // A batch is whole blocks of `block_quads`, so of its halves too.
        let block_quads = match self.layout.fixed_block_quads(self.counts.quad_count) {
            Some(fixed) => fixed,
            None => lookup_block_quads(permutation, self.block_quads),
        };
        let sealed: Vec<Vec<u8>> = keys.par_chunks(block_quads).map(seal).collect::<std::io::Result<_>>()?;
        for (block, sealed) in keys.chunks(block_quads).zip(sealed) {
            let range = section.write_block(&sealed)?;
            entries.push(PermutationEntry { range, quad_count: block.len() as u64, first_key: block[0] });
        }
        self.progress.bar.inc(keys.len() as u64);
        Ok(())
    }
}

/// Counts runs of equal ids (they arrive grouped) and keeps the largest.
struct TopCounts {
    runs: Runs<TermId>,
    more: u64,
    top: Vec<(u64, TermId)>,
}

impl Default for TopCounts {
    fn default() -> Self {
        Self { runs: Runs::new(CARD_LIST_CAP), more: 0, top: Vec::new() }
    }
}

impl TopCounts {
    /// Counts one more `id`; returns an id that fell out of the top, if any.
    fn add(&mut self, id: TermId) -> Option<TermId> {
        self.runs.add(&id)
    }

    /// Sorted by count descending, then id (= IRI order).
    fn finish(&mut self) {
        self.runs.close();
        let runs = std::mem::replace(&mut self.runs, Runs::new(0));
        self.more = runs.top.more;
        self.top = runs.top.into_sorted().into_iter().map(|(id, count)| (count, id)).collect();
    }
}

/// Seals the card, halving its list caps until it fits FORMAT.md §7's bound
/// (the `_more` counts keep what was cut); a build never fails for its card.
fn seal_card(card: &mut Card) -> Result<Vec<u8>> {
    let mut cap = CARD_LIST_CAP;
    loop {
        card.truncate_lists(cap);
        let sealed = block::compress_first_read(&serde_json::to_vec(&card)?)?;
        if sealed.len() as u64 <= rete_core::format::MAX_CARD_BYTES {
            return Ok(sealed);
        }
        if cap == 0 {
            // Only the descriptive strings are left: shorten them.
            for text in [&mut card.title, &mut card.description, &mut card.license, &mut card.source, &mut card.publisher, &mut card.base_iri].into_iter().flatten() {
                if text.len() > 1024 {
                    let end = (0..=1024).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
                    text.truncate(end);
                    text.push('…');
                }
            }
            let sealed = block::compress_first_read(&serde_json::to_vec(&card)?)?;
            if sealed.len() as u64 > rete_core::format::MAX_CARD_BYTES {
                bail!("the card is {} bytes even with empty lists, over the 32 KiB limit (FORMAT.md §7)", sealed.len());
            }
            return Ok(sealed);
        }
        cap /= 2;
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
        // A hidden bar draws nothing: parsing a template and formatting a message for it was a
        // few percent of a small build (docs/RELIABILITY.md "Throughput").
        if self.bar.is_hidden() {
            return;
        }
        let template = if total > 0 { "{msg:>14} [{bar:30}] {percent:>3}% {elapsed}" } else { "{msg:>14} {spinner} {elapsed}" };
        if let Ok(style) = ProgressStyle::with_template(template) {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.set_message(name.to_owned());
        // indicatif starts a ticker thread even for a hidden bar: one per phase, a dozen per
        // build, most of a small build's system time (docs/RELIABILITY.md "Throughput").
        self.bar.enable_steady_tick(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_keys_sort_like_keys() {
        let mut keys = vec![[1, 2, 3, 0], [1, 2, 3, 4], [0, 9, 9, 9], [1, 3, 0, 0], [u64::from(u32::MAX), 0, 1, 2], [2, 0, 0, 0]];
        let mut packed: Vec<Packed> = keys.iter().map(|&key| pack(key).unwrap()).collect();
        keys.sort_unstable();
        packed.sort_unstable();
        assert_eq!(packed.into_iter().map(unpack).collect::<Vec<_>>(), keys);
        assert_eq!(pack([1, 1 << 32, 0, 0]), None);
    }

    #[test]
    fn blocks_per_permutation_stay_at_most_128_up_to_67m_quads() {
        for (quads, expected) in [(0, 1024), (50_000, 1024), (1_185_609, 16_384), (8_388_608, 65_536), (17_684_507, 138_161), (100_000_000, 1 << 19)] {
            assert_eq!(block_quads(quads), expected, "{quads} quads");
        }
        for quads in [1u64 << 20, 8_388_609, 17_684_507, 67_108_864] {
            assert!(quads.div_ceil(block_quads(quads) as u64) <= PERMUTATION_BLOCKS, "{quads} quads");
        }
    }

    #[test]
    fn lookup_orders_have_half_blocks_from_2048_to_32768_quads() {
        for (quads, spo, sop) in [(50_000, 1024, 1024), (200_000, 1024, 2048), (1_557_734, 8192, 16_384), (4_194_304, 16_384, 32_768), (4_194_305, 65_536, 65_536)] {
            let coarse = block_quads(quads);
            assert_eq!((lookup_block_quads(Permutation::Spo, coarse), lookup_block_quads(Permutation::Sop, coarse)), (spo, sop), "{quads} quads");
            assert_eq!(lookup_block_quads(Permutation::Pos, coarse), lookup_block_quads(Permutation::Osp, coarse));
            assert!(quads.div_ceil(lookup_block_quads(Permutation::Spo, coarse) as u64) <= 2 * PERMUTATION_BLOCKS, "{quads} quads");
        }
    }
}
