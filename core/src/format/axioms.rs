//! The AXIOMS section (FORMAT.md §13): the schema axioms coherence checks
//! need (subclass, equivalent and disjoint classes, functional properties,
//! domains and ranges) apart from the instances, so that the schema-only
//! check reads one small section whatever the dataset's size. JSON in one
//! zstd frame, IRIs listed once and referred to by position.

use super::block;
use super::header::{Header, Section, SectionKind};
use crate::FormatError;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

/// FORMAT.md §13: the largest AXIOMS section.
pub const MAX_AXIOMS_BYTES: u64 = 256 * 1024;

/// `rdf:type`.
pub const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
/// `rdfs:subClassOf`.
pub const RDFS_SUB_CLASS_OF: &str = "http://www.w3.org/2000/01/rdf-schema#subClassOf";
/// `rdfs:domain`.
pub const RDFS_DOMAIN: &str = "http://www.w3.org/2000/01/rdf-schema#domain";
/// `rdfs:range`.
pub const RDFS_RANGE: &str = "http://www.w3.org/2000/01/rdf-schema#range";
/// `owl:equivalentClass`.
pub const OWL_EQUIVALENT_CLASS: &str = "http://www.w3.org/2002/07/owl#equivalentClass";
/// `owl:disjointWith`.
pub const OWL_DISJOINT_WITH: &str = "http://www.w3.org/2002/07/owl#disjointWith";
/// `owl:FunctionalProperty`.
pub const OWL_FUNCTIONAL_PROPERTY: &str = "http://www.w3.org/2002/07/owl#FunctionalProperty";

/// The decoded AXIOMS section: pairs of positions in `terms`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axioms {
    /// Every IRI the axioms use, ascending.
    pub terms: Vec<String>,
    /// `sub rdfs:subClassOf super`.
    #[serde(default)]
    pub subclass_of: Vec<[u32; 2]>,
    /// `a owl:equivalentClass b`.
    #[serde(default)]
    pub equivalent_class: Vec<[u32; 2]>,
    /// `a owl:disjointWith b`.
    #[serde(default)]
    pub disjoint_with: Vec<[u32; 2]>,
    /// `p rdf:type owl:FunctionalProperty`.
    #[serde(default)]
    pub functional: Vec<u32>,
    /// `p rdfs:domain class`.
    #[serde(default)]
    pub domain: Vec<[u32; 2]>,
    /// `p rdfs:range class`.
    #[serde(default)]
    pub range: Vec<[u32; 2]>,
}

/// The axioms with their terms in place: IRIs (`T = String`, from the
/// section or for the writer) or term ids (read from the quads). Each entry
/// is one quad of the dataset, without its graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaAxioms<T> {
    /// `[sub, super]` of `rdfs:subClassOf`.
    pub subclass_of: Vec<[T; 2]>,
    /// `[a, b]` of `owl:equivalentClass`.
    pub equivalent_class: Vec<[T; 2]>,
    /// `[a, b]` of `owl:disjointWith`.
    pub disjoint_with: Vec<[T; 2]>,
    /// Functional properties.
    pub functional: Vec<T>,
    /// `[p, class]` of `rdfs:domain`.
    pub domain: Vec<[T; 2]>,
    /// `[p, class]` of `rdfs:range`.
    pub range: Vec<[T; 2]>,
}

impl<T> Default for SchemaAxioms<T> {
    fn default() -> Self {
        Self { subclass_of: Vec::new(), equivalent_class: Vec::new(), disjoint_with: Vec::new(), functional: Vec::new(), domain: Vec::new(), range: Vec::new() }
    }
}

impl<T> SchemaAxioms<T> {
    /// Every term the axioms name.
    pub fn terms(&self) -> impl Iterator<Item = &T> {
        let pairs = self.subclass_of.iter().chain(&self.equivalent_class).chain(&self.disjoint_with).chain(&self.domain).chain(&self.range);
        pairs.flatten().chain(&self.functional)
    }

    /// The same axioms with each term mapped; an axiom with a term mapped to
    /// `None` is left out.
    pub fn map<U>(&self, mut f: impl FnMut(&T) -> Option<U>) -> SchemaAxioms<U> {
        let mut pairs = |list: &[[T; 2]]| list.iter().filter_map(|[a, b]| Some([f(a)?, f(b)?])).collect::<Vec<_>>();
        SchemaAxioms {
            subclass_of: pairs(&self.subclass_of),
            equivalent_class: pairs(&self.equivalent_class),
            disjoint_with: pairs(&self.disjoint_with),
            domain: pairs(&self.domain),
            range: pairs(&self.range),
            functional: self.functional.iter().filter_map(&mut f).collect(),
        }
    }
}

impl Axioms {
    /// Lists IRI axioms the FORMAT.md §13 way: terms once, ascending; pairs
    /// sorted, without duplicates or reflexive subclass/equivalence pairs.
    pub fn from_triples(triples: &SchemaAxioms<String>) -> Self {
        let mut terms: Vec<&str> = triples.terms().map(String::as_str).collect();
        terms.sort_unstable();
        terms.dedup();
        let position = |iri: &str| terms.binary_search(&iri).unwrap_or_default() as u32;
        let pairs = |list: &[[String; 2]], reflexive: bool| {
            let mut out: Vec<[u32; 2]> = list.iter().map(|[a, b]| [position(a), position(b)]).filter(|[a, b]| reflexive || a != b).collect();
            out.sort_unstable();
            out.dedup();
            out
        };
        let mut functional: Vec<u32> = triples.functional.iter().map(|p| position(p)).collect();
        functional.sort_unstable();
        functional.dedup();
        Self {
            subclass_of: pairs(&triples.subclass_of, false),
            equivalent_class: pairs(&triples.equivalent_class, false),
            disjoint_with: pairs(&triples.disjoint_with, true),
            functional,
            domain: pairs(&triples.domain, true),
            range: pairs(&triples.range, true),
            terms: terms.into_iter().map(str::to_owned).collect(),
        }
    }

    /// Decodes the section's decompressed JSON, checking every position
    /// against `terms`; `offset` names the section in errors.
    pub fn decode(raw: &[u8], offset: u64) -> Result<Self, FormatError> {
        let corrupt = |reason: String| FormatError::corrupt("axioms section", offset, reason);
        let axioms: Self = serde_json::from_slice(raw).map_err(|e| corrupt(format!("invalid JSON: {e}")))?;
        let count = axioms.terms.len() as u64;
        let positions = [&axioms.subclass_of, &axioms.equivalent_class, &axioms.disjoint_with, &axioms.domain, &axioms.range].into_iter().flatten().flatten().chain(&axioms.functional);
        if let Some(bad) = positions.copied().find(|&p| u64::from(p) >= count) {
            return Err(corrupt(format!("term position {bad} is past the {count} terms")));
        }
        Ok(axioms)
    }

    /// Checks and decodes the sealed bytes of the AXIOMS section: its bound,
    /// checksum and JSON.
    pub fn open_section(section: &Section, sealed: &[u8]) -> Result<Self, FormatError> {
        let corrupt = |reason: String| FormatError::corrupt(section.kind.name(), section.offset, reason);
        if section.length > MAX_AXIOMS_BYTES {
            return Err(corrupt(format!("{} bytes is over the {MAX_AXIOMS_BYTES}-byte limit", section.length)));
        }
        if (sealed.len() as u64) < section.length {
            return Err(corrupt(format!("read {} of {} bytes: file truncated", sealed.len(), section.length)));
        }
        if xxh3_64(sealed) != section.checksum {
            return Err(corrupt("checksum mismatch".into()));
        }
        let raw = block::decompress(sealed, MAX_AXIOMS_BYTES * 64).map_err(corrupt)?;
        Self::decode(&raw, section.offset)
    }

    /// The axioms as IRI pairs.
    pub fn triples(&self) -> SchemaAxioms<String> {
        let iri = |p: u32| self.terms.get(p as usize).cloned().unwrap_or_default();
        let pairs = |list: &[[u32; 2]]| list.iter().map(|&[a, b]| [iri(a), iri(b)]).collect();
        SchemaAxioms {
            subclass_of: pairs(&self.subclass_of),
            equivalent_class: pairs(&self.equivalent_class),
            disjoint_with: pairs(&self.disjoint_with),
            functional: self.functional.iter().map(|&p| iri(p)).collect(),
            domain: pairs(&self.domain),
            range: pairs(&self.range),
        }
    }
}

/// The axiom sections a reader needs: CLASS AXIOMS, and PROPERTY AXIOMS
/// too when `properties`; `None` when one is absent.
pub fn sections(header: &Header, properties: bool) -> Option<Vec<Section>> {
    let kinds: &[SectionKind] = if properties { &[SectionKind::ClassAxioms, SectionKind::PropertyAxioms] } else { &[SectionKind::ClassAxioms] };
    kinds.iter().map(|&kind| header.section(kind).copied()).collect()
}

/// Checks, decodes and joins the sealed bytes of axiom sections.
pub fn open_sections(sections: &[Section], bodies: &[Vec<u8>]) -> Result<SchemaAxioms<String>, FormatError> {
    let mut joined = SchemaAxioms::default();
    for (section, sealed) in sections.iter().zip(bodies) {
        let part = Axioms::open_section(section, sealed)?.triples();
        joined.subclass_of.extend(part.subclass_of);
        joined.equivalent_class.extend(part.equivalent_class);
        joined.disjoint_with.extend(part.disjoint_with);
        joined.functional.extend(part.functional);
        joined.domain.extend(part.domain);
        joined.range.extend(part.range);
    }
    Ok(joined)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn iri(name: &str) -> String {
        format!("http://ex.org/{name}")
    }

    #[test]
    fn round_trips_the_spec_example() {
        let triples = SchemaAxioms {
            subclass_of: vec![[iri("A"), iri("C")], [iri("A"), iri("B")], [iri("A"), iri("A")]],
            disjoint_with: vec![[iri("B"), iri("C")]],
            functional: vec![iri("p")],
            domain: vec![[iri("p"), iri("A")]],
            ..SchemaAxioms::default()
        };
        let axioms = Axioms::from_triples(&triples);
        let json = serde_json::to_string(&axioms).unwrap();
        assert_eq!(
            json,
            r#"{"terms":["http://ex.org/A","http://ex.org/B","http://ex.org/C","http://ex.org/p"],"subclass_of":[[0,1],[0,2]],"equivalent_class":[],"disjoint_with":[[1,2]],"functional":[3],"domain":[[3,0]],"range":[]}"#
        );
        let decoded = Axioms::decode(json.as_bytes(), 0).unwrap();
        assert_eq!(decoded, axioms);
        let back = decoded.triples();
        assert_eq!(back.subclass_of, vec![[iri("A"), iri("B")], [iri("A"), iri("C")]]);
        assert_eq!(back.functional, vec![iri("p")]);
    }

    #[test]
    fn rejects_positions_past_the_terms() {
        let error = Axioms::decode(br#"{"terms":["http://ex.org/A"],"subclass_of":[[0,1]]}"#, 77).unwrap_err();
        assert_eq!(error.to_string(), "corrupt axioms section at byte 77: term position 1 is past the 1 terms");
        assert!(Axioms::decode(b"[1]", 0).is_err());
    }
}
