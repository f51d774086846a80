//! Card statistics gathered from the dictionary as `rete build` writes it:
//! the ids of the vocabulary the card and summary look up, where literals
//! start, literal languages and datatypes, and IRI namespaces. Terms arrive
//! in id (byte) order, so every count is a run or a stack and memory stays
//! bounded by the caps, whatever the number of terms.

use rete_core::TermId;
use rete_core::format::term::{self, TRIPLE_TERM};
use rete_core::format::card::{CARD_LIST_CAP, DatatypeCount, LanguageCount, Namespace};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// IRIs whose ids the card and the summary need, sorted by encoded form.
pub const VOCABULARY: [&str; 26] = [
    "http://purl.org/dc/elements/1.1/title",
    "http://purl.org/dc/terms/description",
    "http://purl.org/dc/terms/license",
    "http://purl.org/dc/terms/publisher",
    "http://purl.org/dc/terms/source",
    "http://purl.org/dc/terms/title",
    "http://rdfs.org/ns/void#Dataset",
    "http://schema.org/Dataset",
    "http://schema.org/description",
    "http://schema.org/license",
    "http://schema.org/name",
    "http://schema.org/publisher",
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
    "http://www.w3.org/2000/01/rdf-schema#domain",
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://www.w3.org/2000/01/rdf-schema#range",
    "http://www.w3.org/2000/01/rdf-schema#subClassOf",
    "http://www.w3.org/2000/01/rdf-schema#subPropertyOf",
    "http://www.w3.org/2002/07/owl#FunctionalProperty",
    "http://www.w3.org/2002/07/owl#disjointWith",
    "http://www.w3.org/2002/07/owl#equivalentClass",
    "http://www.w3.org/2002/07/owl#sameAs",
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://www.w3.org/ns/dcat#Dataset",
    "http://xmlns.com/foaf/0.1/name",
    "https://schema.org/name",
];

/// Namespaces given a conventional prefix when the input declares none.
const WELL_KNOWN: [(&str, &str); 14] = [
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("owl", "http://www.w3.org/2002/07/owl#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
    ("foaf", "http://xmlns.com/foaf/0.1/"),
    ("schema", "http://schema.org/"),
    ("dcterms", "http://purl.org/dc/terms/"),
    ("dc", "http://purl.org/dc/elements/1.1/"),
    ("skos", "http://www.w3.org/2004/02/skos/core#"),
    ("void", "http://rdfs.org/ns/void#"),
    ("dcat", "http://www.w3.org/ns/dcat#"),
    ("prov", "http://www.w3.org/ns/prov#"),
    ("geo", "http://www.w3.org/2003/01/geo/wgs84_pos#"),
    ("wd", "http://www.wikidata.org/entity/"),
];

const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";
const RDF_LANG_STRING: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";

/// The `cap` largest counts, ties kept in key order; the rest only counted.
pub struct Top<K> {
    cap: usize,
    heap: BinaryHeap<Reverse<(u64, Reverse<K>)>>,
    /// Keys left out.
    pub more: u64,
}

impl<K: Ord> Top<K> {
    /// Keeps at most `cap` keys.
    pub fn new(cap: usize) -> Self {
        Self { cap, heap: BinaryHeap::new(), more: 0 }
    }

    /// Offers a key with its final count; returns the key it pushed out, if any.
    pub fn offer(&mut self, key: K, count: u64) -> Option<K> {
        self.heap.push(Reverse((count, Reverse(key))));
        if self.heap.len() > self.cap {
            self.more += 1;
            return self.heap.pop().map(|Reverse((_, Reverse(key)))| key);
        }
        None
    }

    /// Kept keys by count descending, then key.
    pub fn into_sorted(self) -> Vec<(K, u64)> {
        let mut top: Vec<(K, u64)> = self.heap.into_iter().map(|Reverse((count, Reverse(key)))| (key, count)).collect();
        top.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        top
    }
}

/// Counts runs of equal keys (they arrive grouped) into a [`Top`].
pub struct Runs<K> {
    current: Option<(K, u64)>,
    /// The counts.
    pub top: Top<K>,
}

impl<K: Ord + Clone> Runs<K> {
    /// Keeps the `cap` longest runs.
    pub fn new(cap: usize) -> Self {
        Self { current: None, top: Top::new(cap) }
    }

    /// Counts one more `key`; returns a key pushed out of the top, if any.
    pub fn add(&mut self, key: &K) -> Option<K> {
        match &mut self.current {
            Some((current, count)) if current == key => {
                *count += 1;
                None
            }
            _ => {
                let dropped = self.close();
                self.current = Some((key.clone(), 1));
                dropped
            }
        }
    }

    /// Ends the current run.
    pub fn close(&mut self) -> Option<K> {
        let (key, count) = self.current.take()?;
        self.top.offer(key, count)
    }
}

/// What the dictionary tells the card.
pub struct TermStats {
    vocabulary_at: usize,
    /// Ids of [`VOCABULARY`] terms present in the data.
    pub vocabulary: BTreeMap<&'static str, TermId>,
    /// First id of a blank node or literal (ids below are IRIs).
    pub first_blank_id: Option<TermId>,
    /// First id of a literal (ids below are IRIs and blank nodes).
    pub first_literal_id: Option<TermId>,
    /// First id of an RDF 1.2 triple term (FORMAT.md §5.1: they sort after the literals of kinds 0x03–0x05).
    pub first_triple_term_id: Option<TermId>,
    /// Whether a term is or holds a value-ordered literal (FORMAT.md §5.1.1:
    /// the file needs `required_features` bit 2).
    pub value_order: bool,
    languages: Runs<String>,
    datatypes: Runs<String>,
    /// Literals of the datatypes that may be value-ordered: they do not come
    /// grouped by datatype (numbers of every type sort together by value, and
    /// ill-typed ones apart as kind 0x05), so they are counted here.
    value_datatypes: BTreeMap<String, u64>,
    /// Namespaces that prefix the current IRI, outermost first, with their counts.
    open_namespaces: Vec<(String, u64)>,
    namespaces: Top<String>,
}

impl Default for TermStats {
    fn default() -> Self {
        Self {
            vocabulary_at: 0,
            vocabulary: BTreeMap::new(),
            first_blank_id: None,
            first_literal_id: None,
            first_triple_term_id: None,
            value_order: false,
            languages: Runs::new(CARD_LIST_CAP),
            datatypes: Runs::new(CARD_LIST_CAP),
            value_datatypes: BTreeMap::new(),
            open_namespaces: Vec::new(),
            namespaces: Top::new(CARD_LIST_CAP),
        }
    }
}

impl TermStats {
    /// Sees the next term of the dictionary (ids in increasing order).
    pub fn add(&mut self, id: TermId, term: &[u8]) {
        let (&kind, rest) = term.split_first().unwrap_or((&0, &[]));
        match kind {
            0x01 => {
                let iri = std::str::from_utf8(rest).unwrap_or_default();
                while let Some(&wanted) = VOCABULARY.get(self.vocabulary_at) {
                    match wanted.cmp(iri) {
                        std::cmp::Ordering::Less => self.vocabulary_at += 1,
                        std::cmp::Ordering::Equal => {
                            self.vocabulary.insert(wanted, id);
                            self.vocabulary_at += 1;
                        }
                        std::cmp::Ordering::Greater => break,
                    }
                }
                self.namespace(iri);
            }
            _ => {
                self.first_blank_id.get_or_insert(id);
                if kind >= 0x03 {
                    self.first_literal_id.get_or_insert(id);
                }
                if kind == TRIPLE_TERM {
                    self.first_triple_term_id.get_or_insert(id);
                }
                self.value_order |= term::has_value_order(term);
                let before_zero = |rest: &[u8]| rest.iter().position(|&b| b == 0).map(|end| String::from_utf8_lossy(&rest[..end]).into_owned());
                if let Some(key_bytes) = term::key_length(kind) {
                    if let Some(datatype) = rest.get(key_bytes..).and_then(before_zero) {
                        *self.value_datatypes.entry(datatype).or_default() += 1;
                    }
                    return;
                }
                match kind {
                    0x03 => _ = self.datatypes.add(&XSD_STRING.to_owned()),
                    0x04 => {
                        self.datatypes.add(&RDF_LANG_STRING.to_owned());
                        if let Some(tag) = before_zero(rest) {
                            self.languages.add(&tag);
                        }
                    }
                    0x05 => match before_zero(rest) {
                        Some(datatype) if term::is_value_datatype(&datatype) => *self.value_datatypes.entry(datatype).or_default() += 1,
                        Some(datatype) => _ = self.datatypes.add(&datatype),
                        None => {}
                    },
                    _ => {}
                }
            }
        }
    }

    /// IRIs arrive sorted, so the IRIs of a namespace all come while it is a
    /// prefix of the current IRI: a namespace that stops being one is complete.
    fn namespace(&mut self, iri: &str) {
        while let Some((open, _)) = self.open_namespaces.last() {
            if iri.starts_with(open.as_str()) {
                break;
            }
            let (open, count) = self.open_namespaces.pop().unwrap_or_default();
            self.namespaces.offer(open, count);
        }
        // A namespace ends in '#' or '/' after the authority ("http://a.org" has none).
        let authority_end = iri.find("://").map_or(0, |i| i + 3);
        let Some(end) = iri.rfind(['#', '/']).map(|i| i + 1).filter(|&end| end > authority_end) else { return };
        let namespace = &iri[..end];
        match self.open_namespaces.last_mut() {
            Some((open, count)) if open == namespace => *count += 1,
            _ => self.open_namespaces.push((namespace.to_owned(), 1)),
        }
    }

    /// Languages, datatypes and namespaces (with prefixes: `declared` first,
    /// then well-known ones, else ns1, ns2…), each with its `_more` count.
    pub fn finish(mut self, declared: &[(String, String)]) -> (Vec<LanguageCount>, u64, Vec<DatatypeCount>, u64, Vec<Namespace>, u64) {
        self.languages.close();
        self.datatypes.close();
        for (datatype, count) in std::mem::take(&mut self.value_datatypes) {
            self.datatypes.top.offer(datatype, count);
        }
        while let Some((open, count)) = self.open_namespaces.pop() {
            self.namespaces.offer(open, count);
        }
        let languages_more = self.languages.top.more;
        let languages = self.languages.top.into_sorted().into_iter().map(|(tag, literals)| LanguageCount { tag, literals }).collect();
        let datatypes_more = self.datatypes.top.more;
        let datatypes = self.datatypes.top.into_sorted().into_iter().map(|(iri, literals)| DatatypeCount { iri, literals }).collect();
        let namespaces_more = self.namespaces.more;
        let mut used: Vec<String> = Vec::new();
        let mut generated = 0;
        let namespaces = self
            .namespaces
            .into_sorted()
            .into_iter()
            .map(|(iri, terms)| {
                let known = declared.iter().map(|(p, i)| (p.as_str(), i.as_str())).chain(WELL_KNOWN).find(|&(prefix, namespace)| namespace == iri && !used.iter().any(|u| u == prefix));
                let prefix = match known {
                    Some((prefix, _)) => prefix.to_owned(),
                    None => loop {
                        generated += 1;
                        let candidate = format!("ns{generated}");
                        if !used.contains(&candidate) && !declared.iter().any(|(p, _)| *p == candidate) {
                            break candidate;
                        }
                    },
                };
                used.push(prefix.clone());
                Namespace { prefix, iri, terms }
            })
            .collect();
        (languages, languages_more, datatypes, datatypes_more, namespaces, namespaces_more)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rete_core::encode_term;

    #[test]
    fn vocabulary_is_sorted() {
        assert!(VOCABULARY.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn counts_from_sorted_terms() {
        let mut terms: Vec<Vec<u8>> = vec![
            encode_term(oxrdf::NamedNodeRef::new_unchecked("http://a/x")),
            encode_term(oxrdf::NamedNodeRef::new_unchecked("http://a/x/y")),
            encode_term(oxrdf::NamedNodeRef::new_unchecked("http://a/z")),
            encode_term(oxrdf::NamedNodeRef::new_unchecked("http://www.w3.org/2000/01/rdf-schema#label")),
            encode_term(oxrdf::BlankNodeRef::new_unchecked("b")),
            encode_term(oxrdf::LiteralRef::new_simple_literal("s")),
            encode_term(oxrdf::LiteralRef::new_language_tagged_literal_unchecked("a", "en")),
            encode_term(oxrdf::LiteralRef::new_language_tagged_literal_unchecked("b", "en")),
            encode_term(oxrdf::LiteralRef::new_language_tagged_literal_unchecked("c", "fr")),
            encode_term(&oxrdf::Term::from(oxrdf::Triple::new(oxrdf::NamedNode::new_unchecked("http://a/x"), oxrdf::NamedNode::new_unchecked("http://a/z"), oxrdf::Literal::new_simple_literal("s")))),
        ];
        terms.sort();
        let mut stats = TermStats::default();
        for (i, term) in terms.iter().enumerate() {
            stats.add(i as TermId + 1, term);
        }
        assert_eq!(stats.vocabulary.get("http://www.w3.org/2000/01/rdf-schema#label"), Some(&4));
        assert_eq!((stats.first_blank_id, stats.first_literal_id, stats.first_triple_term_id), (Some(5), Some(6), Some(10)));
        let (languages, _, datatypes, _, namespaces, _) = stats.finish(&[("ex".into(), "http://a/".into())]);
        assert_eq!(languages, vec![LanguageCount { tag: "en".into(), literals: 2 }, LanguageCount { tag: "fr".into(), literals: 1 }]);
        assert_eq!(datatypes[0], DatatypeCount { iri: RDF_LANG_STRING.into(), literals: 3 });
        assert_eq!(namespaces[0], Namespace { prefix: "ex".into(), iri: "http://a/".into(), terms: 2 });
        assert_eq!(namespaces.iter().find(|n| n.iri.ends_with("rdf-schema#")).map(|n| n.prefix.as_str()), Some("rdfs"));
        assert_eq!(namespaces.iter().find(|n| n.iri == "http://a/x/").map(|n| n.prefix.as_str()), Some("ns1"));
    }
}
