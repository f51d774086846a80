//! The CARD section (FORMAT.md §7): a small JSON description of the dataset.
//! Kept as JSON so the edge can serve it with no translation. Every list is
//! capped and the writer shrinks the caps until the sealed section fits its
//! 32 KiB bound, so reading the card costs the same whatever the dataset size.

use serde::{Deserialize, Serialize};

/// The card's members known to this build; unknown members are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Card {
    /// Version of rete that wrote the file.
    pub rete_version: String,
    /// Title (flag, card.toml, or the data's own dataset description).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Licence (an IRI or a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// Where the data comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Who publishes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// IRI under which the dataset's resources live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_iri: Option<String>,
    /// Build date, RFC 3339 (SOURCE_DATE_EPOCH, else the newest input's modification time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built_at: Option<String>,
    /// Distinct quads.
    pub quads: u64,
    /// Distinct terms.
    pub terms: u64,
    /// Named graphs.
    pub graphs: u64,
    /// Distinct subjects.
    #[serde(default)]
    pub subjects: u64,
    /// Distinct objects.
    #[serde(default)]
    pub objects: u64,
    /// Predicates by quad count.
    pub predicates: Vec<PredicateCount>,
    /// Predicates left out of `predicates`.
    #[serde(default)]
    pub predicates_more: u64,
    /// Classes by instance count.
    pub classes: Vec<ClassCount>,
    /// Classes left out of `classes`.
    #[serde(default)]
    pub classes_more: u64,
    /// Language tags of literals, by distinct literal count.
    #[serde(default)]
    pub languages: Vec<LanguageCount>,
    /// Language tags left out of `languages`.
    #[serde(default)]
    pub languages_more: u64,
    /// Datatypes of literals, by distinct literal count.
    #[serde(default)]
    pub datatypes: Vec<DatatypeCount>,
    /// Datatypes left out of `datatypes`.
    #[serde(default)]
    pub datatypes_more: u64,
    /// IRI namespaces by distinct IRI count, with a suggested prefix.
    #[serde(default)]
    pub namespaces: Vec<Namespace>,
    /// Namespaces left out of `namespaces`.
    #[serde(default)]
    pub namespaces_more: u64,
    /// Input files.
    #[serde(default)]
    pub sources: Vec<SourceFile>,
    /// The label search index (FORMAT.md §12), when the file has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<CardSearch>,
    /// Members this build does not know.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// What the card says about the label search index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardSearch {
    /// The label predicates indexed that the data uses.
    pub label_predicates: Vec<String>,
    /// (subject, label) pairs indexed.
    pub labels: u64,
    /// Distinct words.
    pub words: u64,
    /// Why the index was left out, when it was (the file then has no SEARCH section).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A predicate and the quads using it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredicateCount {
    /// Predicate IRI.
    pub iri: String,
    /// Its rdfs:label or skos:prefLabel in the data, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Quads with that predicate.
    pub quads: u64,
}

/// A class and its instances.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassCount {
    /// Class IRI.
    pub iri: String,
    /// Its rdfs:label or skos:prefLabel in the data, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Distinct (subject, graph) pairs typed with it.
    pub instances: u64,
    /// A few instances (the first in term order), top classes only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// A language tag and the distinct literals carrying it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LanguageCount {
    /// Language tag as written (lowercased by the parser).
    pub tag: String,
    /// Distinct literals with that tag.
    pub literals: u64,
}

/// A datatype and the distinct literals of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatatypeCount {
    /// Datatype IRI (`xsd:string` for simple literals, `rdf:langString` for tagged ones).
    pub iri: String,
    /// Distinct literals of that datatype.
    pub literals: u64,
}

/// An IRI namespace (the IRI up to its last `#` or `/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Namespace {
    /// Suggested prefix.
    pub prefix: String,
    /// Namespace IRI.
    pub iri: String,
    /// Distinct IRIs in it.
    pub terms: u64,
}

/// An input file of the build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    /// File name as given.
    pub name: String,
    /// Size in bytes (0 when unknown, e.g. stdin).
    pub bytes: u64,
}

/// FORMAT.md §7: lists start capped at this many entries (the writer lowers it until the card fits).
pub const CARD_LIST_CAP: usize = 1000;
/// FORMAT.md §7: example instances kept per class.
pub const CARD_EXAMPLES: usize = 3;
/// FORMAT.md §7: classes that get examples (the first ones of `classes`).
pub const CARD_EXAMPLE_CLASSES: usize = 20;

impl Card {
    /// Cuts every list to at most `cap` entries, adding what it drops to the
    /// matching `_more` count (lists are sorted most frequent first).
    pub fn truncate_lists(&mut self, cap: usize) {
        fn cut<T>(list: &mut Vec<T>, more: &mut u64, cap: usize) {
            if list.len() > cap {
                *more += (list.len() - cap) as u64;
                list.truncate(cap);
            }
        }
        cut(&mut self.predicates, &mut self.predicates_more, cap);
        cut(&mut self.classes, &mut self.classes_more, cap);
        cut(&mut self.languages, &mut self.languages_more, cap);
        cut(&mut self.datatypes, &mut self.datatypes_more, cap);
        cut(&mut self.namespaces, &mut self.namespaces_more, cap);
        let mut sources_more = 0;
        cut(&mut self.sources, &mut sources_more, cap);
        if sources_more > 0 {
            self.extra.insert("sources_more".into(), sources_more.into());
        }
        for class in self.classes.iter_mut().skip(cap.min(CARD_EXAMPLE_CLASSES)) {
            class.examples.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncating_keeps_the_more_counts_right() {
        let mut card = Card {
            predicates: (0..10).map(|i| PredicateCount { iri: format!("p{i}"), label: None, quads: 10 - i }).collect(),
            predicates_more: 5,
            languages: vec![LanguageCount { tag: "en".into(), literals: 1 }],
            ..Card::default()
        };
        card.truncate_lists(4);
        assert_eq!(card.predicates.len(), 4);
        assert_eq!(card.predicates_more, 11);
        assert_eq!(card.languages.len(), 1);
        assert_eq!(card.languages_more, 0);
    }

    #[test]
    fn old_cards_still_parse() {
        let json = r#"{"rete_version":"0.1.0","quads":1,"terms":3,"graphs":0,"predicates":[{"iri":"p","quads":1}],"classes":[],"future":true}"#;
        let card: Card = serde_json::from_str(json).unwrap();
        assert_eq!(card.predicates[0].label, None);
        assert_eq!(card.subjects, 0);
        assert_eq!(card.extra.get("future"), Some(&serde_json::Value::Bool(true)));
    }
}
