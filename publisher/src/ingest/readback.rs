//! Reading back the sections `rete build` has just written (in memory, or
//! in temporary files when large), before the output is assembled: term
//! strings for the card's IRIs and labels, and quads by key prefix for
//! labels, dataset descriptions and the subclass hierarchy. Keeps the last
//! decoded block, since lookups come mostly in id order.

use super::sort::Section;
use anyhow::{Context, Result};
use rete_core::format::block;
use rete_core::format::dictionary::DictionaryBlock;
use rete_core::format::directory::{Body, Entry};
use rete_core::format::permutation::{BlockLayout, Key, decode_block};
use rete_core::{ByteRange, TermId};

fn read_sealed(section: &mut Section, range: ByteRange) -> Result<Vec<u8>> {
    Ok(block::open(&section.read(range)?, &|| "temporary section".into(), range.offset)?)
}

/// Terms of the dictionary section being written.
pub struct TempDictionary<'a> {
    file: &'a mut Section,
    entries: &'a [Entry<Vec<u8>>],
    last: Option<(usize, DictionaryBlock)>,
}

impl<'a> TempDictionary<'a> {
    /// Over the section and its entries (ranges relative to the section).
    pub fn new(file: &'a mut Section, directory: &'a Body<Vec<u8>>) -> Self {
        Self { file, entries: &directory.entries, last: None }
    }

    /// The term of an id.
    pub fn term(&mut self, id: TermId) -> Result<oxrdf::Term> {
        let number = self.entries.partition_point(|e| e.first_item <= id).saturating_sub(1);
        let entry = self.entries.get(number).context("term id outside the dictionary")?;
        if self.last.as_ref().is_none_or(|(n, _)| *n != number) {
            let raw = read_sealed(self.file, entry.range)?;
            self.last = Some((number, DictionaryBlock::decode(&raw, "temporary dictionary", 0)?));
        }
        let (_, block) = self.last.as_ref().context("no block")?;
        let term = block.get((id - entry.first_item) as usize).context("term id outside its block")?;
        Ok(rete_core::decode_term(term)?)
    }

    /// The id of an encoded term, `None` when the dictionary does not hold it.
    pub fn id(&mut self, encoded: &[u8]) -> Result<Option<TermId>> {
        let Some(number) = self.entries.partition_point(|e| e.head.as_slice() <= encoded).checked_sub(1) else { return Ok(None) };
        let Some(entry) = self.entries.get(number) else { return Ok(None) };
        let block = DictionaryBlock::decode(&read_sealed(self.file, entry.range)?, "temporary dictionary", 0)?;
        Ok(block.find(encoded).map(|position| entry.first_item + position as u64))
    }

    /// The IRI of an id (other terms in N-Triples form).
    pub fn iri(&mut self, id: TermId) -> Result<String> {
        Ok(match self.term(id)? {
            oxrdf::Term::NamedNode(node) => node.into_string(),
            other => other.to_string(),
        })
    }
}

/// Quads of one permutation section being written.
pub struct TempQuads<'a> {
    file: &'a mut Section,
    entries: &'a [Entry<Key>],
    layout: BlockLayout,
    last: Option<(usize, Vec<Key>)>,
}

impl<'a> TempQuads<'a> {
    /// Over the section and its entries (ranges relative to the section),
    /// whose blocks are laid out as `layout` (FORMAT.md §6.1).
    pub fn new(file: &'a mut Section, directory: &'a Body<Key>, layout: BlockLayout) -> Self {
        Self { file, entries: &directory.entries, layout, last: None }
    }

    /// Calls `visit` with every key starting with `prefix`, in order, a block at a time.
    pub fn visit(&mut self, prefix: &[TermId], mut visit: impl FnMut(&[Key]) -> Result<()>) -> Result<()> {
        let mut number = self.entries.partition_point(|e| e.head[..prefix.len()] < *prefix).saturating_sub(1);
        while let Some(entry) = self.entries.get(number) {
            if entry.head[..prefix.len()] > *prefix {
                break;
            }
            let keys = decode_block(&read_sealed(self.file, entry.range)?, self.layout, "temporary permutation", 0)?;
            let start = keys.partition_point(|key| key[..prefix.len()] < *prefix);
            let end = keys.partition_point(|key| key[..prefix.len()] <= *prefix);
            visit(&keys[start..end])?;
            number += 1;
        }
        Ok(())
    }

    /// Keys starting with `prefix`, in order, at most `limit` of them.
    pub fn scan(&mut self, prefix: &[TermId], limit: usize) -> Result<Vec<Key>> {
        let starts_with = |key: &Key| key[..prefix.len()] == *prefix;
        let mut number = self.entries.partition_point(|e| e.head[..prefix.len()] < *prefix).saturating_sub(1);
        let mut found = Vec::new();
        while let Some(entry) = self.entries.get(number) {
            if entry.head[..prefix.len()] > *prefix || found.len() >= limit {
                break;
            }
            if self.last.as_ref().is_none_or(|(n, _)| *n != number) {
                let raw = read_sealed(self.file, entry.range)?;
                self.last = Some((number, decode_block(&raw, self.layout, "temporary permutation", 0)?));
            }
            let (_, keys) = self.last.as_ref().context("no block")?;
            found.extend(keys.iter().filter(|key| starts_with(key)).take(limit - found.len()));
            number += 1;
        }
        Ok(found)
    }
}

/// Label predicates, most preferred first.
const LABELS: [&str; 5] = [
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name",
    "https://schema.org/name",
    "http://xmlns.com/foaf/0.1/name",
];

/// Term strings, labels and dataset descriptions over the sections being written.
pub struct Lookup<'a> {
    /// Terms.
    pub dictionary: TempDictionary<'a>,
    /// SPO quads.
    pub spo: TempQuads<'a>,
    /// PSO quads.
    pub pso: TempQuads<'a>,
    /// POS quads.
    pub pos: TempQuads<'a>,
    /// Ids of [`super::stats::VOCABULARY`] terms present in the data.
    pub vocabulary: &'a std::collections::BTreeMap<&'static str, TermId>,
}

impl Lookup<'_> {
    /// The id of a vocabulary IRI, when the data holds it.
    pub fn id(&self, iri: &str) -> Option<TermId> {
        self.vocabulary.get(iri).copied()
    }

    /// The label of a term in the data: the first label predicate that has
    /// one, preferring English or untagged literals.
    pub fn label(&mut self, id: TermId) -> Result<Option<String>> {
        for predicate in LABELS {
            let Some(p) = self.id(predicate) else { continue };
            let mut best: Option<(u8, String)> = None;
            for key in self.spo.scan(&[id, p], 64)? {
                if let oxrdf::Term::Literal(literal) = self.dictionary.term(key[2])? {
                    let rank = match literal.language() {
                        None => 0,
                        Some(tag) if tag == "en" || tag.starts_with("en-") => 0,
                        Some(_) => 1,
                    };
                    if best.as_ref().is_none_or(|(r, _)| rank < *r) {
                        best = Some((rank, literal.value().to_owned()));
                    }
                }
            }
            if let Some((_, label)) = best {
                return Ok(Some(label));
            }
        }
        Ok(None)
    }

    /// The first value of the first of `predicates` the subject has: a
    /// literal's lexical form or an IRI.
    pub fn value(&mut self, subject: TermId, predicates: &[&str]) -> Result<Option<String>> {
        for predicate in predicates {
            let Some(p) = self.id(predicate) else { continue };
            if let Some(key) = self.spo.scan(&[subject, p], 1)?.first() {
                return Ok(Some(match self.dictionary.term(key[2])? {
                    oxrdf::Term::Literal(literal) => literal.value().to_owned(),
                    oxrdf::Term::NamedNode(node) => node.into_string(),
                    other => other.to_string(),
                }));
            }
        }
        Ok(None)
    }

    /// The first subject typed with one of `classes` (in that order).
    pub fn first_instance(&mut self, classes: &[&str]) -> Result<Option<TermId>> {
        let Some(rdf_type) = self.id("http://www.w3.org/1999/02/22-rdf-syntax-ns#type") else { return Ok(None) };
        for class in classes {
            let Some(class) = self.id(class) else { continue };
            if let Some(key) = self.pos.scan(&[rdf_type, class], 1)?.first() {
                return Ok(Some(key[2]));
            }
        }
        Ok(None)
    }
}

/// The last segment of an IRI (after `#` or `/`), or the whole term.
pub fn local_name(iri: &str) -> String {
    match iri.trim_end_matches(['/', '#']).rsplit_once(['#', '/']) {
        Some((_, name)) if !name.is_empty() => name.to_owned(),
        _ => iri.to_owned(),
    }
}
