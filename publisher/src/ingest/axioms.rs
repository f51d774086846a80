//! The CLASS AXIOMS and PROPERTY AXIOMS sections (FORMAT.md §13): the schema axioms coherence checks
//! read, gathered from the PSO and POS orders just written (one prefix scan
//! per axiom predicate), between IRIs only. Its own file so that `rete
//! build` calls it in one line, beside the card and the summary.

use super::readback::Lookup;
use anyhow::Result;
use rete_core::TermId;
use rete_core::format::axioms::{self, Axioms, MAX_AXIOMS_BYTES, SchemaAxioms};
use rete_core::format::block;

/// The sealed CLASS AXIOMS and PROPERTY AXIOMS sections; `None` for one
/// that would not fit its bound (readers then take it from the quads).
pub fn build(lookup: &mut Lookup, first_blank_id: TermId) -> Result<[Option<Vec<u8>>; 2]> {
    let is_iri = |id: TermId| id < first_blank_id;
    let mut pairs = |predicate: &str, reflexive: bool| -> Result<Vec<[String; 2]>> {
        let Some(p) = lookup.id(predicate) else { return Ok(Vec::new()) };
        let keys = lookup.pso.scan(&[p], usize::MAX)?;
        let mut out = Vec::new();
        for [_, s, o, _] in keys {
            if is_iri(s) && is_iri(o) && (reflexive || s != o) {
                out.push([lookup.dictionary.iri(s)?, lookup.dictionary.iri(o)?]);
            }
        }
        Ok(out)
    };
    let mut triples = SchemaAxioms {
        subclass_of: pairs(axioms::RDFS_SUB_CLASS_OF, false)?,
        equivalent_class: pairs(axioms::OWL_EQUIVALENT_CLASS, false)?,
        disjoint_with: pairs(axioms::OWL_DISJOINT_WITH, true)?,
        domain: pairs(axioms::RDFS_DOMAIN, true)?,
        range: pairs(axioms::RDFS_RANGE, true)?,
        functional: Vec::new(),
    };
    if let (Some(rdf_type), Some(functional)) = (lookup.id(axioms::RDF_TYPE), lookup.id(axioms::OWL_FUNCTIONAL_PROPERTY)) {
        for [_, _, s, _] in lookup.pos.scan(&[rdf_type, functional], usize::MAX)? {
            if is_iri(s) {
                triples.functional.push(lookup.dictionary.iri(s)?);
            }
        }
    }
    let SchemaAxioms { subclass_of, equivalent_class, disjoint_with, functional, domain, range } = triples;
    let classes = SchemaAxioms { subclass_of, equivalent_class, disjoint_with, ..SchemaAxioms::default() };
    let properties = SchemaAxioms { functional, domain, range, ..SchemaAxioms::default() };
    Ok([seal(&classes, "class")?, seal(&properties, "property")?])
}

/// One section, or `None` (with a warning) when it would pass its bound.
fn seal(axioms: &SchemaAxioms<String>, what: &str) -> Result<Option<Vec<u8>>> {
    let sealed = block::compress(&serde_json::to_vec(&Axioms::from_triples(axioms))?)?;
    if sealed.len() as u64 > MAX_AXIOMS_BYTES {
        eprintln!("rete: warning: the schema's {what} axioms take {} bytes, over the section's {MAX_AXIOMS_BYTES}: left out; checks will read them from the quads", sealed.len());
        return Ok(None);
    }
    Ok(Some(sealed))
}
