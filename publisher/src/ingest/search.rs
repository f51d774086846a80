//! Building the label search index (FORMAT.md §12) from the sections `rete
//! build` has just written: the literals of the label predicates (PSO), each
//! subject's links in and out (SPO, OSP) for its weight, and the label texts
//! (dictionary). Postings go through an external sort, so what stays in memory
//! is one entry per label and per distinct word, not per posting.

use super::readback::{TempDictionary, TempQuads};
use super::sort::{ExternalSorter, RecordWriter, Section, SectionWriter, TempRecords};
use anyhow::Result;
use rete_core::format::block;
use rete_core::format::search::{BlockEncoder, KeyPostings, LanguageRange, PREFIX_LIST_MARK, Posting, SEARCH_VERSION, SearchBlockEntry, SearchRoot};
use rete_core::format::write::SectionSummary;
use rete_core::search::normalize;
use rete_core::{ByteRange, TermId};
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

/// Predicates whose literals are labels unless the build names more (FORMAT.md §12).
pub const DEFAULT_LABEL_PREDICATES: [&str; 8] = [
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://www.w3.org/2004/02/skos/core#altLabel",
    "http://schema.org/name",
    "https://schema.org/name",
    "http://purl.org/dc/terms/title",
    "http://xmlns.com/foaf/0.1/name",
    "http://www.w3.org/2008/05/skos-xl#literalForm",
];

/// FORMAT.md §12.3 (writer guidance): the most postings a prefix list keeps.
pub const PREFIX_LIST_LENGTH: usize = 100;
/// Posting blocks are cut at this many decompressed bytes, or larger ones
/// when there would be more than [`MAX_BLOCKS`] (FORMAT.md §12.6).
const BLOCK_TARGET_BYTES: u64 = 32 << 10;
/// An index estimated at most this large (a vocabulary, say) is cut at
/// [`SMALL_INDEX_BLOCK_BYTES`] instead, into at most about 4 blocks: a label's
/// words then mostly share a block, which gives the label's subject, weight
/// and length once (layout 3); a search still reads one or two blocks.
const SMALL_INDEX_BYTES: u64 = 512 << 10;
const SMALL_INDEX_BLOCK_BYTES: u64 = 128 << 10;
/// The root names at most about this many blocks, so it stays a few KiB.
const MAX_BLOCKS: u64 = 512;
/// Bytes a posting takes in a block, about (four varints; for the estimates).
const POSTING_BYTES: u64 = 8;
/// Memory per label pair while building (pair, subject tables, word table share).
const BYTES_PER_LABEL: usize = 96;

/// The sections the index is built from.
struct SearchInputs<'a> {
    /// Terms.
    dictionary: TempDictionary<'a>,
    /// SPO quads.
    spo: TempQuads<'a>,
    /// PSO quads.
    pso: TempQuads<'a>,
    /// OSP quads.
    osp: TempQuads<'a>,
    /// Ids from here on are blank nodes or literals: not subjects a search returns.
    first_blank_id: TermId,
    /// Ids from here on are literals.
    first_literal_id: TermId,
}

/// The built sections and what the card says about them.
struct BuiltSearch {
    /// The SEARCH section: the root, one zstd frame.
    root: Vec<u8>,
    /// The SEARCH BLOCKS section and its summary.
    blocks: (Section, SectionSummary),
    /// The card's `search` member.
    card: rete_core::format::card::CardSearch,
}

/// What `rete build` gets: the sections to write (none with `--no-search` or
/// when the labels do not fit `--mem`) and the card's `search` member.
pub struct SearchOutcome {
    /// The SEARCH and SEARCH BLOCKS sections.
    pub sections: Option<(Vec<u8>, Section, SectionSummary)>,
    /// The card's member (absent with `--no-search`).
    pub card: Option<rete_core::format::card::CardSearch>,
}

/// The index of a build, from the temporary dictionary and permutation
/// sections (in [`rete_core::Permutation`] order) and the build's settings.
#[allow(clippy::too_many_arguments)]
pub fn build_section(
    dictionary: &mut Section,
    index: &rete_core::format::index::Index,
    permutations: &mut [Section],
    key_layout: rete_core::format::permutation::BlockLayout,
    first_blank_id: TermId,
    first_literal_id: TermId,
    settings: &super::metadata::Metadata,
    dir: &Path,
    memory_bytes: usize,
) -> Result<SearchOutcome> {
    if settings.search == Some(false) {
        return Ok(SearchOutcome { sections: None, card: None });
    }
    let [spo, _, pso, _, osp, _] = permutations else { anyhow::bail!("internal error: six permutations expected") };
    let mut inputs = SearchInputs {
        dictionary: TempDictionary::new(dictionary, &index.dictionary),
        spo: TempQuads::new(spo, &index.permutations[0], key_layout),
        pso: TempQuads::new(pso, &index.permutations[2], key_layout),
        osp: TempQuads::new(osp, &index.permutations[4], key_layout),
        first_blank_id,
        first_literal_id,
    };
    let extra = settings.label_predicates.clone().unwrap_or_default();
    Ok(match build(&mut inputs, &extra, dir, memory_bytes)? {
        Ok(built) => SearchOutcome { sections: Some((built.root, built.blocks.0, built.blocks.1)), card: Some(built.card) },
        Err(note) => SearchOutcome { sections: None, card: Some(rete_core::format::card::CardSearch { note: Some(note), ..Default::default() }) },
    })
}

/// Builds the index over the label predicates (defaults and `extra`
/// IRIs), or `None` with a note when its labels would not fit `memory_bytes`.
fn build(inputs: &mut SearchInputs, extra: &[String], dir: &Path, memory_bytes: usize) -> Result<std::result::Result<BuiltSearch, String>> {
    let mut predicate_iris: Vec<&str> = DEFAULT_LABEL_PREDICATES.iter().copied().chain(extra.iter().map(String::as_str)).collect();
    predicate_iris.sort_unstable();
    predicate_iris.dedup();
    let mut predicates = Vec::new();
    let mut used = Vec::new();
    for iri in &predicate_iris {
        let encoded = rete_core::encode_term(oxrdf::TermRef::NamedNode(oxrdf::NamedNodeRef::new_unchecked(iri)));
        if let Some(id) = inputs.dictionary.id(&encoded)? {
            predicates.push(id);
            used.push((*iri).to_owned());
        }
    }
    predicates.sort_unstable();
    let pairs = label_pairs(inputs, &predicates, memory_bytes)?;
    let Some(pairs) = pairs else {
        return Ok(Err(format!("search index left out: its labels would not fit --mem ({} MiB); raise --mem", memory_bytes >> 20)));
    };
    let weights = weights(inputs, &pairs)?;
    let mut words = WordTable::default();
    let labelled = cut_labels(inputs, &pairs, &weights, &mut words, dir)?;
    let order = words.sorted();
    let sorted = sort_postings(labelled.records, &order.rank, dir, memory_bytes)?;
    let total_bytes: u64 = order.words.iter().map(|w| w.text.len() as u64 + 8 + w.postings * POSTING_BYTES).sum();
    let target = if total_bytes <= SMALL_INDEX_BYTES { SMALL_INDEX_BLOCK_BYTES } else { BLOCK_TARGET_BYTES.max(total_bytes / MAX_BLOCKS) };
    let max_key_postings = (target / POSTING_BYTES) as usize;
    let hot = hot_prefixes(&order.words, target, max_key_postings);
    let lists = prefix_lists(&sorted, &order.words, &hot)?;
    let (blocks, section) = write_blocks(&sorted, &order.words, lists, target, max_key_postings, dir)?;
    let root = SearchRoot {
        layout: SEARCH_VERSION,
        entry_count: labelled.entries,
        word_count: order.words.len() as u64,
        posting_count: order.words.iter().map(|w| w.postings).sum(),
        prefix_list_length: PREFIX_LIST_LENGTH as u64,
        predicates,
        languages: labelled.languages,
        blocks,
    };
    let root = block::compress(&root.encode())?;
    let card = rete_core::format::card::CardSearch { label_predicates: used, labels: labelled.entries, words: order.words.len() as u64, note: None };
    Ok(Ok(BuiltSearch { root, blocks: section, card }))
}

/// (subject, label) pairs of the label predicates, sorted, IRI subjects and
/// plain or language-tagged literals only; `None` when too many for the budget.
fn label_pairs(inputs: &mut SearchInputs, predicates: &[TermId], memory_bytes: usize) -> Result<Option<Vec<(TermId, TermId)>>> {
    let max_pairs = memory_bytes / 2 / BYTES_PER_LABEL;
    let first_non_iri = inputs.first_blank_id.min(inputs.first_literal_id);
    let first_literal = inputs.first_literal_id;
    let mut pairs = Vec::new();
    for &p in predicates {
        inputs.pso.visit(&[p], |keys| {
            pairs.extend(keys.iter().filter(|k| k[1] < first_non_iri && k[2] >= first_literal).map(|k| (k[1], k[2])));
            Ok(())
        })?;
        if pairs.len() > max_pairs {
            return Ok(None);
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    Ok(Some(pairs))
}

/// FORMAT.md §12.4: each subject's weight from its links, in and out.
/// `16 log2(1 + in + out/4)`, at most 255: a resource many others point to
/// (a class, a place, a person cited often) comes before one that is only
/// described, and doubling the links in adds 16.
fn weights(inputs: &mut SearchInputs, pairs: &[(TermId, TermId)]) -> Result<HashMap<TermId, u64>> {
    let mut subjects: Vec<TermId> = pairs.iter().map(|&(s, _)| s).collect();
    subjects.dedup();
    let mut links = vec![[0u64; 2]; subjects.len()];
    for (column, quads) in [&mut inputs.osp, &mut inputs.spo].into_iter().enumerate() {
        let mut i = 0;
        quads.visit(&[], |keys| {
            for key in keys {
                while i < subjects.len() && subjects[i] < key[0] {
                    i += 1;
                }
                if i < subjects.len() && subjects[i] == key[0] {
                    links[i][column] += 1;
                }
            }
            Ok(())
        })?;
    }
    Ok(subjects.into_iter().zip(links).map(|(s, [links_in, links_out])| (s, weight(links_in, links_out))).collect())
}

fn weight(links_in: u64, links_out: u64) -> u64 {
    let links = 1.0 + links_in as f64 + links_out as f64 / 4.0;
    (16.0 * links.log2()).round().min(255.0) as u64
}

/// Distinct words, numbered in order of appearance, with their posting counts.
#[derive(Default)]
struct WordTable {
    ids: HashMap<String, u32>,
    postings: Vec<u64>,
}

/// A word in key order.
struct Word {
    text: String,
    postings: u64,
}

/// Words in key order, and each temporary id's rank in it.
struct WordOrder {
    words: Vec<Word>,
    rank: Vec<u32>,
}

impl WordTable {
    fn id(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.ids.insert(word.to_owned(), id);
        self.postings.push(0);
        id
    }

    fn sorted(self) -> WordOrder {
        let mut words: Vec<(String, u32)> = self.ids.into_iter().collect();
        words.sort_unstable();
        let mut rank = vec![0u32; words.len()];
        for (position, (_, id)) in words.iter().enumerate() {
            rank[*id as usize] = position as u32;
        }
        let words = words.into_iter().map(|(text, id)| Word { text, postings: self.postings[id as usize] }).collect();
        WordOrder { words, rank }
    }
}

/// What cutting the labels gave: postings with temporary word ids in a file.
struct Labelled {
    records: TempRecords<4>,
    entries: u64,
    languages: Vec<LanguageRange>,
}

/// Reads every label once (in id order, so dictionary blocks are read in
/// turn), cuts it into words and writes one record per (word, subject, label):
/// `[word id, rank, subject, label]`, rank = `(255 - weight) << 32 | length`.
fn cut_labels(inputs: &mut SearchInputs, pairs: &[(TermId, TermId)], weights: &HashMap<TermId, u64>, words: &mut WordTable, dir: &Path) -> Result<Labelled> {
    let mut by_label: Vec<(TermId, TermId)> = pairs.iter().map(|&(s, o)| (o, s)).collect();
    by_label.sort_unstable();
    let mut records = RecordWriter::new(dir)?;
    let mut languages: BTreeMap<String, (TermId, TermId)> = BTreeMap::new();
    let mut entries = 0;
    for run in by_label.chunk_by(|a, b| a.0 == b.0) {
        let label = run[0].0;
        let oxrdf::Term::Literal(literal) = inputs.dictionary.term(label)? else { continue };
        let tag = match literal.language() {
            Some(tag) => tag.to_owned(),
            None if literal.datatype() == oxrdf::vocab::xsd::STRING => String::new(),
            None => continue,
        };
        let mut label_words = normalize::words(literal.value());
        label_words.sort_unstable();
        label_words.dedup();
        if label_words.is_empty() {
            continue;
        }
        let range = languages.entry(tag).or_insert((label, label));
        range.1 = label;
        let length = normalize::normalize(literal.value()).chars().count().min(1023) as u64;
        for word in &label_words {
            let id = words.id(word);
            words.postings[id as usize] += run.len() as u64;
            for &(_, subject) in run {
                let weight = weights.get(&subject).copied().unwrap_or(0);
                records.push(&[u64::from(id), ((255 - weight) << 32) | length, subject, label])?;
            }
        }
        entries += run.len() as u64;
    }
    let records = records.finish()?;
    let languages = languages.into_iter().map(|(tag, (first, last))| LanguageRange { tag, labels: first..=last }).collect();
    Ok(Labelled { records, entries, languages })
}

/// The records with word ranks instead of temporary ids, sorted: by word,
/// then best posting first. Written to a file, read once per pass.
fn sort_postings(records: TempRecords<4>, rank: &[u32], dir: &Path, memory_bytes: usize) -> Result<TempRecords<4>> {
    let mut sorter = ExternalSorter::<4>::new(dir, memory_bytes / 4, records.records());
    let mut reader = records.into_reader();
    while let Some([word, order, subject, label]) = reader.next_record()? {
        sorter.push([u64::from(rank[word as usize]), order, subject, label])?;
    }
    drop(reader);
    let mut sorted = sorter.finish()?;
    let mut file = RecordWriter::new(dir)?;
    while let Some(record) = sorted.next_record()? {
        file.push(&record)?;
    }
    file.finish()
}

fn posting(record: &[u64; 4]) -> Posting {
    Posting { subject: record[2], label: record[3], weight: 255 - (record[1] >> 32), length: record[1] & 0xFFFF_FFFF }
}

/// Reads the sorted postings a word at a time: `(word rank, postings)`.
fn for_each_word(sorted: &TempRecords<4>, mut visit: impl FnMut(usize, &[Posting]) -> Result<()>) -> Result<()> {
    let mut reader = sorted.reader()?;
    let mut current: Option<u64> = None;
    let mut postings = Vec::new();
    loop {
        let record = reader.next_record()?;
        if record.map(|r| r[0]) != current {
            if let Some(word) = current {
                visit(word as usize, &postings)?;
            }
            postings.clear();
            current = record.map(|r| r[0]);
        }
        match record {
            Some(record) => postings.push(posting(&record)),
            None => return Ok(()),
        }
    }
}

/// FORMAT.md §12.3: the prefixes whose words' postings would take more than
/// `target` bytes of blocks, so that a lookup of them reads their prefix list
/// instead. Prefixes end at character boundaries. Walks the words in order
/// with a stack of the current word's prefixes and their byte totals so far.
fn hot_prefixes(words: &[Word], target: u64, max_key_postings: usize) -> HashSet<String> {
    let mut hot = HashSet::new();
    let mut stack: Vec<(String, u64)> = Vec::new();
    let close = |(prefix, total): (String, u64), hot: &mut HashSet<String>| {
        if total > target {
            hot.insert(prefix);
        }
    };
    for word in words {
        let text = &word.text;
        while stack.last().is_some_and(|(prefix, _)| !text.starts_with(prefix.as_str())) {
            close(stack.pop().unwrap_or_default(), &mut hot);
        }
        let known = stack.last().map_or(0, |(prefix, _)| prefix.len());
        for (i, c) in text.char_indices().filter(|&(i, _)| i >= known) {
            stack.push((text[..i + c.len_utf8()].to_owned(), 0));
        }
        let bytes = text.len() as u64 + 8 + word.postings.min(max_key_postings as u64) * POSTING_BYTES;
        stack.iter_mut().for_each(|(_, total)| *total += bytes);
    }
    while let Some(entry) = stack.pop() {
        close(entry, &mut hot);
    }
    hot
}

/// The best postings of a hot prefix, at most [`PREFIX_LIST_LENGTH`], each
/// (subject, label) once; the worst kept on top of the heap.
#[derive(Default)]
struct PrefixList {
    best: BinaryHeap<(std::cmp::Reverse<u64>, u64, TermId, TermId)>,
    kept: HashSet<(TermId, TermId)>,
    total: u64,
}

impl PrefixList {
    /// Offers a word's postings (best first); stops at the first one not kept.
    fn offer(&mut self, postings: &[Posting]) {
        self.total += postings.len() as u64;
        for posting in postings {
            if self.kept.contains(&(posting.subject, posting.label)) {
                continue;
            }
            let rank = posting.rank_key();
            if self.best.len() >= PREFIX_LIST_LENGTH {
                match self.best.peek() {
                    Some(worst) if rank < *worst => {
                        if let Some((_, _, s, o)) = self.best.pop() {
                            self.kept.remove(&(s, o));
                        }
                    }
                    _ => return,
                }
            }
            self.best.push(rank);
            self.kept.insert((posting.subject, posting.label));
        }
    }

    fn into_key(self, prefix: &str) -> KeyPostings {
        let mut key = prefix.as_bytes().to_vec();
        key.push(PREFIX_LIST_MARK);
        let mut postings: Vec<Posting> = self.best.into_iter().map(|(std::cmp::Reverse(weight), length, subject, label)| Posting { subject, label, weight, length }).collect();
        postings.sort_unstable_by_key(|p| (p.label, p.subject));
        KeyPostings { key, total: self.total, postings }
    }
}

/// Every hot prefix's list, by key.
fn prefix_lists(sorted: &TempRecords<4>, words: &[Word], hot: &HashSet<String>) -> Result<BTreeMap<Vec<u8>, KeyPostings>> {
    let mut lists: HashMap<&str, PrefixList> = hot.iter().map(|p| (p.as_str(), PrefixList::default())).collect();
    for_each_word(sorted, |rank, postings| {
        let text = &words[rank].text;
        for (i, c) in text.char_indices() {
            if let Some(list) = lists.get_mut(&text[..i + c.len_utf8()]) {
                list.offer(postings);
            }
        }
        Ok(())
    })?;
    Ok(lists.into_iter().map(|(prefix, list)| list.into_key(prefix)).map(|key| (key.key.clone(), key)).collect())
}

/// Posting blocks being cut and written to the SEARCH BLOCKS file.
struct BlockCutter {
    target: u64,
    /// The block being filled, and its first key.
    block: BlockEncoder,
    head: Vec<u8>,
    writer: SectionWriter,
    hasher: Xxh3,
    length: u64,
    entries: Vec<SearchBlockEntry>,
}

impl BlockCutter {
    fn add(&mut self, key: KeyPostings) -> Result<()> {
        if self.block.is_empty() {
            self.head.clone_from(&key.key);
        }
        self.block.push(&key)?;
        if self.block.len() >= self.target {
            self.cut()?;
        }
        Ok(())
    }

    /// Writes the keys so far as one block (FORMAT.md §12.3, layout 3), with
    /// zstd's block splitter (§12.6).
    fn cut(&mut self) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let block = std::mem::take(&mut self.block);
        let key_count = block.key_count();
        let sealed = block::seal_split(&block.finish())?;
        self.writer.write_all(&sealed)?;
        self.hasher.update(&sealed);
        let range = ByteRange { offset: self.length, length: sealed.len() as u64 };
        self.length += range.length;
        self.entries.push(SearchBlockEntry { range, key_count, head: std::mem::take(&mut self.head) });
        Ok(())
    }
}

/// FORMAT.md §12.3: every word's postings (the best `max_key_postings` of a
/// longer list) and every prefix list, in key order, cut into blocks of
/// about `target` bytes.
fn write_blocks(sorted: &TempRecords<4>, words: &[Word], mut lists: BTreeMap<Vec<u8>, KeyPostings>, target: u64, max_key_postings: usize, dir: &Path) -> Result<(Vec<SearchBlockEntry>, (Section, SectionSummary))> {
    let mut cutter = BlockCutter {
        target,
        block: BlockEncoder::default(),
        head: Vec::new(),
        writer: SectionWriter::new(dir),
        hasher: Xxh3::new(),
        length: 0,
        entries: Vec::new(),
    };
    for_each_word(sorted, |rank, postings| {
        let key = words[rank].text.as_bytes();
        while let Some(entry) = lists.first_entry().filter(|e| e.key().as_slice() < key) {
            cutter.add(entry.remove())?;
        }
        let mut stored = postings[..postings.len().min(max_key_postings)].to_vec();
        stored.sort_unstable_by_key(|p| (p.label, p.subject));
        cutter.add(KeyPostings { key: key.to_vec(), total: postings.len() as u64, postings: stored })
    })?;
    while let Some((_, list)) = lists.pop_first() {
        cutter.add(list)?;
    }
    cutter.cut()?;
    let summary = SectionSummary { length: cutter.length, item_count: cutter.entries.len() as u64, checksum: cutter.hasher.digest() };
    Ok((cutter.entries, (cutter.writer.finish()?, summary)))
}

/// The checksum summary of the root section.
pub fn root_summary(root: &[u8]) -> SectionSummary {
    SectionSummary { length: root.len() as u64, item_count: 0, checksum: xxh3_64(root) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str, postings: u64) -> Word {
        Word { text: text.into(), postings }
    }

    #[test]
    fn hot_prefixes_are_those_over_the_target() {
        // 10 + 8 + 10 × 8 = 98 bytes for each 10-byte word of 10 postings.
        let words = [word("lincolnabc", 10), word("lincolnxyz", 10), word("lindsayabc", 10), word("zzzzzzzzzz", 10)];
        let hot = hot_prefixes(&words, 200, 1000);
        let mut hot: Vec<&str> = hot.iter().map(String::as_str).collect();
        hot.sort_unstable();
        assert_eq!(hot, ["l", "li", "lin"], "three words (294 bytes) start with l, li and lin; two (196) with linc");
        assert!(hot_prefixes(&words, 400, 1000).is_empty());
    }

    #[test]
    fn prefix_lists_keep_the_best_once() {
        let mut list = PrefixList::default();
        let posting = |subject, weight| Posting { subject, label: subject + 100, weight, length: 5 };
        let many: Vec<Posting> = (0..150).map(|s| posting(s, 200 - s)).collect();
        list.offer(&many);
        list.offer(&many[..10]);
        list.offer(&[posting(500, 255)]);
        let key = list.into_key("li");
        assert_eq!(key.key, b"li\0");
        assert_eq!(key.postings.len(), PREFIX_LIST_LENGTH);
        assert!(key.postings.iter().any(|p| p.subject == 500));
        assert!(key.postings.iter().all(|p| p.subject < 100 || p.subject == 500), "the best 99 of the 150, and 500");
        assert_eq!(key.total, 161);
        assert!(!key.is_complete());
    }

    #[test]
    fn weights_grow_with_links_in_most() {
        assert_eq!(weight(0, 0), 0);
        assert!(weight(10, 0) > weight(0, 10));
        assert_eq!(weight(1 << 30, 0), 255);
    }
}
