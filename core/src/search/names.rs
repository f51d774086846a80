//! Names for IRIs as people read them, for resource pages and result tables
//! (README "Names"): a label from the data (the literal of a label
//! predicate, found through PSO), else a prefixed name from the card's
//! namespaces, else the IRI itself. Pages show the name and keep the full
//! IRI in the link and on hover, as LodView and Pubby pages do.
//!
//! A lookup is bounded like every read of the core: it reads at most
//! [`MAX_PSO_BLOCKS`] PSO blocks and [`MAX_TERM_BLOCKS`] dictionary blocks
//! for the labels' texts, and says it was `cut` when some IRIs were left
//! unnamed for that reason. It runs over a [`Store`] that may miss blocks,
//! recording every block a run needs before it fails, so a host reads them
//! in rounds: the label predicates' ids, the PSO blocks, the labels' texts.

use crate::format::card::{Card, Namespace};
use crate::format::permutation::Permutation;
use crate::read::{RangeSource, Store};
use crate::{ReadError, TermId};
use oxrdf::{NamedNodeRef, Term, TermRef};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// Most PSO blocks one lookup reads.
pub const MAX_PSO_BLOCKS: usize = 16;
/// Most dictionary blocks one lookup reads for the labels' texts.
pub const MAX_TERM_BLOCKS: usize = 16;
/// Labels read per (IRI, predicate) to choose a language from.
const MAX_CANDIDATES: usize = 8;

/// Predicates that name a resource, the preferred first (FORMAT.md §12's
/// label predicates, ordered as LodView and Pubby choose a title).
pub const LABEL_PREDICATES: [&str; 8] = [
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://schema.org/name",
    "https://schema.org/name",
    "http://purl.org/dc/terms/title",
    "http://xmlns.com/foaf/0.1/name",
    "http://www.w3.org/2004/02/skos/core#altLabel",
    "http://purl.org/dc/elements/1.1/title",
];

/// Prefixes every page knows even when the card does not list them.
const WELL_KNOWN: [(&str, &str); 5] = [
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("owl", "http://www.w3.org/2002/07/owl#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
    ("skos", "http://www.w3.org/2004/02/skos/core#"),
];

/// A label found for an IRI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    /// The label's text.
    pub text: String,
    /// Its language tag, `""` when it has none.
    pub lang: String,
}

/// Labels of term ids, from [`find_labels`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// The label of each id that has one (within the bounds).
    pub by_id: HashMap<TermId, Label>,
    /// Whether some ids were not looked up because of the bounds.
    pub cut: bool,
}

/// The label predicates a lookup reads, in order of preference: those of
/// [`LABEL_PREDICATES`] the card lists as predicates (all of them when the
/// card's list was cut), then the other label predicates the file's search
/// index was built with (`rete build --label-predicate`).
pub fn label_predicate_iris(card: &Card) -> Vec<String> {
    let used = |iri: &str| card.predicates_more > 0 || card.predicates.iter().any(|p| p.iri == iri);
    let mut iris: Vec<String> = LABEL_PREDICATES.iter().filter(|iri| used(iri)).map(|iri| (*iri).to_owned()).collect();
    if let Some(search) = &card.search {
        for iri in &search.label_predicates {
            if !iris.contains(iri) && used(iri) {
                iris.push(iri.clone());
            }
        }
    }
    iris
}

/// The ids of `iris` in the file, in the same order, those absent left out.
/// Every lookup is tried before a miss is reported, so one round reads all
/// their dictionary blocks.
pub fn term_ids<S: RangeSource>(store: &Store<S>, iris: &[String]) -> Result<Vec<Option<TermId>>, ReadError> {
    let mut ids = Vec::with_capacity(iris.len());
    let mut first_error = None;
    for iri in iris {
        match NamedNodeRef::new(iri) {
            Ok(node) => match store.term_id(TermRef::NamedNode(node)) {
                Ok(id) => ids.push(id),
                Err(error) => {
                    ids.push(None);
                    first_error = first_error.or(Some(error));
                }
            },
            Err(_) => ids.push(None),
        }
    }
    first_error.map_or(Ok(ids), Err)
}

/// Whether `id` may be an IRI: its dictionary block starts with an IRI
/// (FORMAT.md §5.1: terms sort by kind, IRIs first), so ids of blocks of
/// literals are not looked up for nothing.
fn may_be_iri<S: RangeSource>(store: &Store<S>, id: TermId) -> bool {
    // FORMAT.md §5.1: the kind byte of an IRI.
    const IRI_KIND: u8 = 0x01;
    // From what is in memory: an id whose directory node is not read yet may be an IRI.
    match store.dictionary_head_for_id(id) {
        Some(head) => head.first() == Some(&IRI_KIND),
        None => true,
    }
}

/// The objects of the first of `predicates` (preferred first) that has
/// some for each of `ids`, at most `max_objects` each, read through PSO
/// within [`MAX_PSO_BLOCKS`] (ids earlier in `ids` first); and whether some
/// (predicate, id) pairs were left unread for that bound. Ids whose
/// dictionary block holds no IRI are skipped.
pub fn objects_through_pso<S: RangeSource>(store: &Store<S>, predicates: &[TermId], ids: &[TermId], max_objects: usize) -> Result<(HashMap<TermId, Vec<TermId>>, bool), ReadError> {
    let mut ids: Vec<TermId> = ids.iter().copied().filter(|&id| may_be_iri(store, id)).collect();
    let mut seen = BTreeSet::new();
    ids.retain(|id| seen.insert(*id));
    let mut cut = false;

    // Which (predicate, id) pairs to read: predicate-major, so that the
    // preferred predicate is read for every id before the next one.
    let mut blocks = BTreeSet::new();
    let mut lookups = Vec::new();
    // Planning may need directory nodes (FORMAT.md §4.3): every one is asked for in one round.
    let mut missing = None;
    for (rank, &predicate) in predicates.iter().enumerate() {
        for &id in &ids {
            let wanted = match store.blocks_for_prefix(Permutation::Pso, &[predicate, id]) {
                Ok(wanted) => wanted,
                Err(error @ ReadError::Missing(_)) => {
                    missing = Some(error);
                    continue;
                }
                Err(error) => return Err(error),
            };
            let new = wanted.clone().filter(|n| !blocks.contains(n)).count();
            if blocks.len() + new > MAX_PSO_BLOCKS {
                cut = true;
                continue;
            }
            blocks.extend(wanted);
            lookups.push((rank, id, predicate));
        }
    }

    if let Some(error) = missing {
        return Err(error);
    }
    let mut found: HashMap<TermId, (usize, Vec<TermId>)> = HashMap::new();
    let mut first_error = None;
    for (rank, id, predicate) in lookups {
        if found.get(&id).is_some_and(|(best, _)| *best < rank) {
            continue;
        }
        match pso_objects(store, predicate, id, max_objects) {
            Ok(objects) if !objects.is_empty() => _ = found.insert(id, (rank, objects)),
            Ok(_) => {}
            Err(error) => first_error = first_error.or(Some(error)),
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok((found.into_iter().map(|(id, (_, objects))| (id, objects)).collect(), cut)),
    }
}

/// The objects of `(subject, predicate)` in PSO order (graphs merged), at most `max`.
fn pso_objects<S: RangeSource>(store: &Store<S>, predicate: TermId, subject: TermId, max: usize) -> Result<Vec<TermId>, ReadError> {
    let prefix = [predicate, subject];
    let mut objects = Vec::new();
    for number in store.blocks_for_prefix(Permutation::Pso, &prefix)? {
        let keys = store.permutation_block(Permutation::Pso, number)?;
        let mut cursor = keys.seek(&prefix);
        while let Some(key) = cursor.next(&keys) {
            if key[..2] != prefix || objects.len() >= max {
                return Ok(objects);
            }
            // A triple in several graphs is listed once (its quads are adjacent).
            if objects.last() != Some(&key[2]) {
                objects.push(key[2]);
            }
        }
    }
    Ok(objects)
}

/// Decodes the terms of each id's objects, ids in the order of `order`,
/// within [`MAX_TERM_BLOCKS`] dictionary blocks; and whether some were left
/// out for that bound.
fn decode_objects<S: RangeSource>(store: &Store<S>, order: &[TermId], objects: &HashMap<TermId, Vec<TermId>>) -> Result<(Vec<(TermId, Vec<Term>)>, bool), ReadError> {
    let mut blocks = BTreeSet::new();
    let mut decoded = Vec::new();
    let mut cut = false;
    let mut first_error = None;
    let mut done = BTreeSet::new();
    for &id in order {
        let Some(object_ids) = objects.get(&id) else { continue };
        if !done.insert(id) {
            continue;
        }
        let wanted: BTreeSet<usize> = object_ids.iter().filter_map(|&o| store.dictionary_block_for_id(o)).collect();
        if blocks.union(&wanted).count() > MAX_TERM_BLOCKS {
            cut = true;
            continue;
        }
        blocks.extend(wanted);
        let mut terms = Vec::with_capacity(object_ids.len());
        for &object in object_ids {
            match store.term(object) {
                Ok(term) => terms.push(term),
                Err(error) => first_error = first_error.or(Some(error)),
            }
        }
        decoded.push((id, terms));
    }
    first_error.map_or(Ok((decoded, cut)), Err)
}

/// Finds a label for each of `ids` through the PSO order of `predicates`
/// (ids of label predicates, preferred first): for each id, the labels of
/// the first predicate that has some, in the language asked for, else
/// English, else without a tag, else any ([`best_label`]). Within
/// [`MAX_PSO_BLOCKS`] and [`MAX_TERM_BLOCKS`], ids earlier in `ids` first.
pub fn find_labels<S: RangeSource>(store: &Store<S>, predicates: &[TermId], ids: &[TermId], lang: Option<&str>) -> Result<Labels, ReadError> {
    let (objects, pso_cut) = objects_through_pso(store, predicates, ids, MAX_CANDIDATES)?;
    let (decoded, terms_cut) = decode_objects(store, ids, &objects)?;
    let mut labels = Labels { by_id: HashMap::new(), cut: pso_cut || terms_cut };
    for (id, terms) in decoded {
        let literals: Vec<oxrdf::Literal> = terms.into_iter().filter_map(|t| if let Term::Literal(l) = t { Some(l) } else { None }).collect();
        if let Some(best) = best_label(&literals, lang) {
            labels.by_id.insert(id, Label { text: best.value().to_owned(), lang: best.language().unwrap_or_default().to_owned() });
        }
    }
    Ok(labels)
}

/// The types (`rdf:type` objects that are IRIs) of each of `ids`, at most
/// `max_types` each, within the same bounds as [`find_labels`]; `rdf_type`
/// is `rdf:type`'s id. Returns them by id, and whether some were left out.
pub fn find_types<S: RangeSource>(store: &Store<S>, rdf_type: TermId, ids: &[TermId], max_types: usize) -> Result<(HashMap<TermId, Vec<String>>, bool), ReadError> {
    let (objects, pso_cut) = objects_through_pso(store, &[rdf_type], ids, max_types)?;
    let (decoded, terms_cut) = decode_objects(store, ids, &objects)?;
    let types = decoded
        .into_iter()
        .map(|(id, terms)| (id, terms.into_iter().filter_map(|t| if let Term::NamedNode(n) = t { Some(n.into_string()) } else { None }).collect()))
        .collect();
    Ok((types, pso_cut || terms_cut))
}

/// The label to show: in `lang` (a tag or its prefix: `en` takes `en-GB`),
/// else English, else without a tag, else the first.
pub fn best_label<'a>(literals: &'a [oxrdf::Literal], lang: Option<&str>) -> Option<&'a oxrdf::Literal> {
    let matches = |literal: &oxrdf::Literal, wanted: &str| {
        let tag = literal.language().unwrap_or_default();
        tag.eq_ignore_ascii_case(wanted) || (tag.len() > wanted.len() && tag.as_bytes()[wanted.len()] == b'-' && tag[..wanted.len()].eq_ignore_ascii_case(wanted))
    };
    let wanted = lang.filter(|l| !l.is_empty());
    wanted
        .and_then(|l| literals.iter().find(|x| matches(x, l)))
        .or_else(|| literals.iter().find(|x| matches(x, "en")))
        .or_else(|| literals.iter().find(|x| x.language().is_none()))
        .or_else(|| literals.first())
}

/// How a page shows IRIs: labels found for some, prefixed names from the
/// card's namespaces for the rest.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Labels by IRI.
    labels: HashMap<String, Label>,
    /// (prefix, namespace IRI), longest namespace first.
    namespaces: Vec<(String, String)>,
    /// Whether the lookup left IRIs unnamed because of its bounds.
    pub cut: bool,
}

impl Names {
    /// Names from a card's namespaces (and [`WELL_KNOWN`] ones it lacks), no labels yet.
    pub fn new(namespaces: &[Namespace]) -> Self {
        let mut list: Vec<(String, String)> = namespaces.iter().map(|n| (n.prefix.clone(), n.iri.clone())).collect();
        for (prefix, iri) in WELL_KNOWN {
            if !list.iter().any(|(p, i)| p == prefix || i == iri) {
                list.push((prefix.to_owned(), iri.to_owned()));
            }
        }
        list.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        Self { labels: HashMap::new(), namespaces: list, cut: false }
    }

    /// Adds the labels found for `terms` (their ids' labels in `labels`).
    pub fn add_labels<'a>(&mut self, terms: impl IntoIterator<Item = (TermId, &'a Term)>, labels: &Labels) {
        for (id, term) in terms {
            if let (Term::NamedNode(node), Some(label)) = (term, labels.by_id.get(&id)) {
                self.labels.insert(node.as_str().to_owned(), label.clone());
            }
        }
        self.cut |= labels.cut;
    }

    /// Adds one IRI's label.
    pub fn insert_label(&mut self, iri: &str, label: Label) {
        self.labels.insert(iri.to_owned(), label);
    }

    /// The label found for `iri`.
    pub fn label(&self, iri: &str) -> Option<&Label> {
        self.labels.get(iri)
    }

    /// `iri` as a prefixed name (`rdfs:label`), when a namespace holds it and
    /// the rest is a local name SPARQL and Turtle accept without escapes.
    pub fn prefixed(&self, iri: &str) -> Option<String> {
        self.namespaces.iter().find_map(|(prefix, namespace)| {
            let local = iri.strip_prefix(namespace.as_str())?;
            is_plain_local(local).then(|| format!("{prefix}:{local}"))
        })
    }

    /// How a resource is shown: its label, else its prefixed name.
    pub fn resource(&self, iri: &str) -> Option<String> {
        self.label(iri).map(|l| l.text.clone()).or_else(|| self.prefixed(iri))
    }

    /// How a predicate is shown: its prefixed name (the vocabulary's own
    /// word, as LodView shows predicates), else its label.
    pub fn predicate(&self, iri: &str) -> Option<String> {
        self.prefixed(iri).or_else(|| self.label(iri).map(|l| l.text.clone()))
    }
}

/// The JSON of `GET /{ds}/labels?iri=…` (README "Names"): how each IRI
/// asked for is shown, in the order asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamesOutput {
    /// One entry per distinct IRI asked for.
    pub names: Vec<NameEntry>,
    /// Whether some IRIs went without a label lookup because of the bounds.
    pub cut: bool,
}

/// How one IRI is shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NameEntry {
    /// The IRI.
    pub iri: String,
    /// Its label, when one was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The label's language tag (`""`: none), with the label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// Its prefixed name, when a namespace of the card holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefixed: Option<String>,
}

impl NamesOutput {
    /// The entries of `iris` (duplicates once) as `names` shows them.
    pub fn new(iris: &[String], names: &Names) -> Self {
        let mut seen = std::collections::HashSet::new();
        let entries = iris
            .iter()
            .filter(|iri| seen.insert(iri.as_str()))
            .map(|iri| {
                let label = names.label(iri);
                NameEntry { iri: iri.clone(), label: label.map(|l| l.text.clone()), lang: label.map(|l| l.lang.clone()), prefixed: names.prefixed(iri) }
            })
            .collect();
        Self { names: entries, cut: names.cut }
    }
}

/// Names `iris` in a store: the card's namespaces, and labels through
/// [`find_labels`]. Rounds: the IRIs' and the label predicates' dictionary
/// blocks, the PSO blocks, the labels' texts.
pub fn name_iris<S: RangeSource>(store: &Store<S>, iris: &[String], lang: Option<&str>) -> Result<Names, ReadError> {
    let card = store.card()?;
    let predicate_ids = term_ids(store, &label_predicate_iris(&card));
    let ids = term_ids(store, iris);
    let (predicate_ids, ids) = (predicate_ids?, ids?);
    let predicates: Vec<TermId> = predicate_ids.into_iter().flatten().collect();
    let found: Vec<TermId> = ids.iter().flatten().copied().collect();
    let labels = find_labels(store, &predicates, &found, lang)?;
    let mut names = Names::new(&card.namespaces);
    for (iri, id) in iris.iter().zip(&ids) {
        if let Some(label) = id.and_then(|id| labels.by_id.get(&id)) {
            names.insert_label(iri, label.clone());
        }
    }
    names.cut = labels.cut;
    Ok(names)
}

/// A non-empty PN_LOCAL without escapes or `:`: letters, digits, `_`, `-`
/// and inner `.`, not starting with `-` or `.`.
fn is_plain_local(local: &str) -> bool {
    let Some(first) = local.chars().next() else { return false };
    first != '-' && first != '.' && !local.ends_with('.') && local.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::Literal;

    fn lit(text: &str, lang: Option<&str>) -> Literal {
        match lang {
            Some(tag) => Literal::new_language_tagged_literal_unchecked(text, tag),
            None => Literal::new_simple_literal(text),
        }
    }

    #[test]
    fn best_label_by_language() {
        let labels = [lit("Kilometer", Some("de")), lit("kilometre", Some("en-GB")), lit("km", None)];
        assert_eq!(best_label(&labels, Some("de")).map(Literal::value), Some("Kilometer"));
        assert_eq!(best_label(&labels, None).map(Literal::value), Some("kilometre"));
        assert_eq!(best_label(&labels, Some("fr")).map(Literal::value), Some("kilometre"));
        assert_eq!(best_label(&labels[..1], Some("fr")).map(Literal::value), Some("Kilometer"));
        assert_eq!(best_label(&[lit("x", Some("de")), lit("y", None)], None).map(Literal::value), Some("y"));
        assert_eq!(best_label(&[], None), None);
    }

    #[test]
    fn prefixed_names() {
        let names = Names::new(&[
            Namespace { prefix: "ex".into(), iri: "http://example.org/".into(), terms: 3 },
            Namespace { prefix: "exv".into(), iri: "http://example.org/vocab#".into(), terms: 2 },
        ]);
        assert_eq!(names.prefixed("http://example.org/vocab#knows").as_deref(), Some("exv:knows"));
        assert_eq!(names.prefixed("http://example.org/alice").as_deref(), Some("ex:alice"));
        assert_eq!(names.prefixed("http://example.org/a/b"), None, "a slash needs an escape");
        assert_eq!(names.prefixed("http://example.org/"), None, "an empty local name says nothing");
        assert_eq!(names.prefixed("http://www.w3.org/2000/01/rdf-schema#label").as_deref(), Some("rdfs:label"));
        assert_eq!(names.predicate("http://www.w3.org/2000/01/rdf-schema#label").as_deref(), Some("rdfs:label"));
    }
}
