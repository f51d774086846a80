//! Builds small `.rete` files in memory for the tests, with tiny blocks so
//! that lookups cross block boundaries, and coding bytes (FORMAT.md §6.1). The real writer is `rete build`; this
//! one uses the same format encoders without its disk-backed sorting.

use crate::format::block;
use crate::format::card::{Card, DatatypeCount, LanguageCount};
use crate::format::dictionary::{BlockTarget, DictionaryEncoder};
use crate::format::index::{DictionaryEntry, GraphEntry, Index, PermutationEntry, Sections};
use crate::format::permutation::encode_coded_block;
use crate::format::write::{ContentHasher, Counts, SectionSummary, layout, stamp_content_hash};
use crate::read::{BlockCache, RoundOptions, Unfetched, run_in_rounds};
use crate::{ByteRange, Permutation, RangeSource, Store, TermId, encode_term};
use oxrdf::vocab::xsd;
use oxrdf::{GraphName, Literal, NamedNode, Quad, Term};
use oxrdfio::{RdfFormat, RdfParser};
use std::collections::{BTreeMap, BTreeSet};
use xxhash_rust::xxh3::xxh3_64;

/// The quads of a TriG document.
pub fn quads_of(trig: &str) -> Vec<Quad> {
    RdfParser::from_format(RdfFormat::TriG).for_slice(trig.as_bytes()).collect::<Result<Vec<_>, _>>().expect("valid TriG")
}

/// The bytes of a file holding the quads of a TriG document.
pub fn from_trig(trig: &str) -> Vec<u8> {
    let quads = quads_of(trig);
    build(&quads, 5)
}

/// The same with `block_quads` quads per permutation block and these header `flags`.
pub fn from_trig_with_flags(trig: &str, block_quads: usize, flags: u64) -> Vec<u8> {
    let quads = quads_of(trig);
    build_flagged(&quads, block_quads, 48, flags)
}

/// `subjects` subjects `:s{i}`, each with a `:n` integer (0–999,999) and a
/// `:d` date (1700–1999) drawn from a hash of `i`: values scattered over
/// many blocks, for the tests that count what a range or a top-k reads.
pub fn numbers_and_dates(subjects: u64) -> Vec<Quad> {
    let iri = |name: &str| NamedNode::new_unchecked(format!("http://example.org/{name}"));
    let mut quads = Vec::new();
    for i in 0..subjects {
        let h = xxh3_64(&i.to_le_bytes());
        let number = Literal::new_typed_literal((h % 1_000_000).to_string(), xsd::INTEGER);
        let date = Literal::new_typed_literal(format!("{}-{:02}-{:02}", 1700 + (h >> 20) % 300, 1 + (h >> 30) % 12, 1 + (h >> 40) % 28), xsd::DATE);
        quads.push(Quad::new(iri(&format!("s{i}")), iri("n"), number, GraphName::DefaultGraph));
        quads.push(Quad::new(iri(&format!("s{i}")), iri("d"), date, GraphName::DefaultGraph));
    }
    quads
}

/// Runs `attempt` cold: on a store over `file` that holds only what
/// `opened` read at the open (header and index) and fetches the rest in
/// rounds. Returns what the last attempt returned and the bytes fetched.
pub fn read_cold<R>(file: &[u8], opened: &Store<Vec<u8>>, attempt: impl FnMut(&Store<Unfetched>) -> R) -> (R, u64) {
    let store = Store::from_parts(Unfetched, opened.header().clone(), opened.index().clone(), BlockCache::new(64 << 20));
    let (outcome, stats) = run_in_rounds(&store, &RoundOptions::default(), |ranges| file.read_ranges(ranges), attempt).expect("the file reads");
    (outcome, stats.bytes)
}

fn graph_term(graph: &GraphName) -> Option<Term> {
    match graph {
        GraphName::NamedNode(node) => Some(node.clone().into()),
        GraphName::BlankNode(node) => Some(node.clone().into()),
        GraphName::DefaultGraph => None,
    }
}

/// The card's language tags and datatypes (FORMAT.md §7) of the literals
/// among `quads`' objects, by distinct literal count as the writer lists them.
fn literal_kinds(quads: &[Quad]) -> (Vec<LanguageCount>, Vec<DatatypeCount>) {
    let literals: std::collections::HashSet<&Literal> = quads.iter().filter_map(|q| if let Term::Literal(l) = &q.object { Some(l) } else { None }).collect();
    let mut languages: BTreeMap<String, u64> = BTreeMap::new();
    let mut datatypes: BTreeMap<String, u64> = BTreeMap::new();
    for literal in literals {
        if let Some(language) = literal.language() {
            let tag = match literal.direction() {
                Some(oxrdf::BaseDirection::Ltr) => format!("{language}--ltr"),
                Some(oxrdf::BaseDirection::Rtl) => format!("{language}--rtl"),
                None => language.to_owned(),
            };
            *languages.entry(tag).or_default() += 1;
            *datatypes.entry(oxrdf::vocab::rdf::LANG_STRING.as_str().to_owned()).or_default() += 1;
        } else {
            *datatypes.entry(literal.datatype().as_str().to_owned()).or_default() += 1;
        }
    }
    (languages.into_iter().map(|(tag, literals)| LanguageCount { tag, literals }).collect(), datatypes.into_iter().map(|(iri, literals)| DatatypeCount { iri, literals }).collect())
}

/// Encodes `quads` with at most `block_quads` quads per permutation block
/// and tiny dictionary blocks.
pub fn build(quads: &[Quad], block_quads: usize) -> Vec<u8> {
    build_with(quads, block_quads, 48)
}

/// Encodes `quads` with at most `block_quads` quads per permutation block
/// and dictionary blocks of about `dictionary_block_bytes` front-coded bytes.
pub fn build_with(quads: &[Quad], block_quads: usize, dictionary_block_bytes: usize) -> Vec<u8> {
    build_flagged(quads, block_quads, dictionary_block_bytes, 0)
}

fn build_flagged(quads: &[Quad], block_quads: usize, dictionary_block_bytes: usize, flags: u64) -> Vec<u8> {
    let mut terms = BTreeSet::new();
    for quad in quads {
        terms.insert(encode_term(&Term::from(quad.subject.clone())));
        terms.insert(encode_term(&quad.predicate));
        terms.insert(encode_term(&quad.object));
        if let Some(graph) = graph_term(&quad.graph_name) {
            terms.insert(encode_term(&graph));
        }
    }
    let ids: BTreeMap<Vec<u8>, TermId> = terms.iter().cloned().zip(1..).collect();

    let mut dictionary = Vec::new();
    let mut dictionary_entries = Vec::new();
    let mut encoder = DictionaryEncoder::new(BlockTarget::bytes(dictionary_block_bytes));
    let mut raws = Vec::new();
    for term in &terms {
        raws.extend(encoder.push(term));
    }
    raws.extend(encoder.finish());
    let mut first_id = 1;
    for raw in raws {
        let sealed = block::seal(&raw.raw).expect("zstd");
        dictionary_entries.push(DictionaryEntry { range: ByteRange { offset: dictionary.len() as u64, length: sealed.len() as u64 }, first_id, term_count: raw.term_count, head: raw.head });
        first_id += raw.term_count;
        dictionary.extend_from_slice(&sealed);
    }

    let id = |term: &Term| ids[&encode_term(term)];
    let spog: BTreeSet<[TermId; 4]> = quads.iter().map(|q| [id(&q.subject.clone().into()), id(&q.predicate.clone().into()), id(&q.object), graph_term(&q.graph_name).map_or(0, |g| id(&g))]).collect();
    let mut graphs: BTreeMap<TermId, u64> = BTreeMap::new();
    for quad in &spog {
        if quad[3] != 0 {
            *graphs.entry(quad[3]).or_default() += 1;
        }
    }
    let mut permutation_bytes: Vec<Vec<u8>> = Vec::new();
    let mut permutation_entries: [Vec<PermutationEntry>; 6] = Default::default();
    let mut permutation_summaries = [SectionSummary::default(); 6];
    for permutation in Permutation::ALL {
        let keys: BTreeSet<[TermId; 4]> = spog.iter().map(|&q| permutation.key(q)).collect();
        let keys: Vec<_> = keys.into_iter().collect();
        let mut bytes = Vec::new();
        let entries = &mut permutation_entries[usize::from(permutation.id())];
        for chunk in keys.chunks(block_quads) {
            let sealed = block::seal(&encode_coded_block(chunk).expect("zstd")).expect("zstd");
            entries.push(PermutationEntry { range: ByteRange { offset: bytes.len() as u64, length: sealed.len() as u64 }, quad_count: chunk.len() as u64, first_key: chunk[0] });
            bytes.extend_from_slice(&sealed);
        }
        permutation_summaries[usize::from(permutation.id())] = SectionSummary { length: bytes.len() as u64, item_count: entries.len() as u64, checksum: xxh3_64(&bytes) };
        permutation_bytes.push(bytes);
    }

    let index = Index::flat(dictionary_entries, graphs.iter().map(|(&id, &quad_count)| GraphEntry { id, quad_count }).collect(), permutation_entries);
    let index_sealed = block::compress(&index.encode(&Sections::default())).expect("zstd");
    let (languages, datatypes) = literal_kinds(quads);
    let card = Card { rete_version: "test".into(), quads: spog.len() as u64, terms: terms.len() as u64, graphs: graphs.len() as u64, languages, datatypes, ..Card::default() };
    let card_sealed = block::compress(&serde_json::to_vec(&card).expect("json")).expect("zstd");
    let plain = |bytes: &[u8]| SectionSummary { length: bytes.len() as u64, item_count: 0, checksum: xxh3_64(bytes) };
    let dictionary_summary = SectionSummary { length: dictionary.len() as u64, item_count: index.dictionary.entries.len() as u64, checksum: xxh3_64(&dictionary) };
    let mut header =
        layout(Counts { quads: spog.len() as u64, terms: terms.len() as u64, graphs: graphs.len() as u64 }, plain(&index_sealed), plain(&card_sealed), [None, None], None, dictionary_summary, permutation_summaries, None, None);
    header.flags = flags;
    // FORMAT.md §6.1: coded blocks, so that every query test reads them (the
    // real writer codes the blocks of files with a directory; flat files'
    // blocks, without the bit, are read by the examples and differential suites).
    header.require(crate::format::header::FEATURE_RESTART_CODINGS);
    // FORMAT.md §2: triple terms (kind 0x06) and value-ordered literals (§5.1.1) make the file 2.0.
    if terms.iter().any(|t| t.first() == Some(&crate::format::term::TRIPLE_TERM)) {
        header.require(crate::format::header::FEATURE_TRIPLE_TERMS);
    }
    if terms.iter().any(|t| crate::format::term::has_value_order(t)) {
        header.require(crate::format::header::FEATURE_VALUE_ORDER);
    }
    let mut file = header.encode();
    file.extend_from_slice(&index_sealed);
    file.extend_from_slice(&card_sealed);
    file.extend_from_slice(&dictionary);
    for bytes in &permutation_bytes {
        file.extend_from_slice(bytes);
    }
    let mut hasher = ContentHasher::default();
    hasher.update(&file);
    let header_length = header.header_length as usize;
    stamp_content_hash(&mut file[..header_length], hasher.finish());
    assert_eq!(file.len() as u64, header.file_length);
    file
}
