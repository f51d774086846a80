//! The terms a dictionary block starts with whatever its size (FORMAT.md §8):
//! every predicate and every class (object of `rdf:type`), in a file with few
//! of them. A reader that has not read a term's dictionary block yet bounds
//! its id by the block's id range and speculates the quad blocks of that range
//! (docs/READ-PATH.md, "Speculation"). A block holding several predicates or
//! classes makes that range reach all of their quads: LUBM's first block held
//! every `ub:` predicate and class with the first 1,200 IRIs of a department,
//! so `?x ub:takesCourse <…GraduateCourse0>` speculated 248 KB of POS for a
//! 5-row answer. With a block cut before each, a block holds at most one
//! predicate and one class, and POS's first component (predicates) or second
//! under `rdf:type` (classes) narrows to that one.
//!
//! Gathered while parsing, from the encoded terms: a small cache of recent
//! temporary ids keeps the cost to one comparison for most quads.

use rustc_hash::FxHashSet;

/// More predicates (classes) than this, and none of them starts a block: a
/// cut per term would add too many dictionary heads to INDEX, which must stay
/// inside the open's 16 KiB (at most 2 × 64 heads, ~1 KB).
pub const MAX_HEADS_OF_A_KIND: usize = 64;

const CACHE_SLOTS: usize = 256;
const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// Predicates and classes seen so far (encoded, FORMAT.md §5.1).
pub struct BlockHeads {
    rdf_type: Vec<u8>,
    predicates: Kind,
    classes: Kind,
    /// Temporary ids of recent predicates, and whether each is `rdf:type`.
    recent_predicates: [(u64, bool); CACHE_SLOTS],
    recent_classes: [u64; CACHE_SLOTS],
}

#[derive(Default)]
struct Kind {
    terms: FxHashSet<Vec<u8>>,
    too_many: bool,
}

impl Kind {
    fn add(&mut self, term: &[u8]) {
        if !self.too_many && !self.terms.contains(term) {
            self.terms.insert(term.to_vec());
            if self.terms.len() > MAX_HEADS_OF_A_KIND {
                self.too_many = true;
                self.terms = FxHashSet::default();
            }
        }
    }
}

impl Default for BlockHeads {
    fn default() -> Self {
        Self {
            rdf_type: rete_core::format::term::encode_term(oxrdf::NamedNodeRef::new_unchecked(RDF_TYPE)),
            predicates: Kind::default(),
            classes: Kind::default(),
            recent_predicates: [(u64::MAX, false); CACHE_SLOTS],
            recent_classes: [u64::MAX; CACHE_SLOTS],
        }
    }
}

impl BlockHeads {
    /// Notes a quad's predicate and object, encoded, with their temporary ids.
    pub fn add(&mut self, predicate: (&[u8], u64), object: (&[u8], u64)) {
        let slot = &mut self.recent_predicates[predicate.1 as usize % CACHE_SLOTS];
        if slot.0 != predicate.1 {
            *slot = (predicate.1, predicate.0 == self.rdf_type.as_slice());
            self.predicates.add(predicate.0);
        }
        if slot.1 {
            let class = &mut self.recent_classes[object.1 as usize % CACHE_SLOTS];
            if *class != object.1 {
                *class = object.1;
                self.classes.add(object.0);
            }
        }
    }

    /// Whether `term` (encoded) starts a dictionary block.
    pub fn starts_block(&self, term: &[u8]) -> bool {
        self.predicates.terms.contains(term) || self.classes.terms.contains(term)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rete_core::format::term::encode_term;

    fn iri(text: &str) -> Vec<u8> {
        encode_term(oxrdf::NamedNodeRef::new_unchecked(text))
    }

    #[test]
    fn predicates_and_classes_start_blocks_while_few() {
        let mut heads = BlockHeads::default();
        let (knows, person, alice) = (iri("http://e/knows"), iri("http://e/Person"), iri("http://e/alice"));
        heads.add((&knows, 1), (&alice, 2));
        heads.add((&iri(RDF_TYPE), 3), (&person, 4));
        assert!(heads.starts_block(&knows) && heads.starts_block(&person) && heads.starts_block(&iri(RDF_TYPE)));
        assert!(!heads.starts_block(&alice), "an object of another predicate is no class");
        // The same terms under other temporary ids (after a spill) are still found.
        heads.add((&iri(RDF_TYPE), 300), (&alice, 301));
        assert!(heads.starts_block(&alice));
    }

    #[test]
    fn too_many_of_a_kind_start_none() {
        let mut heads = BlockHeads::default();
        let class = iri("http://e/Class");
        heads.add((&iri(RDF_TYPE), 0), (&class, 1));
        for i in 0..=MAX_HEADS_OF_A_KIND as u64 {
            heads.add((&iri(&format!("http://e/p{i}")), 10 + i), (&iri("http://e/o"), 5));
        }
        assert!(!heads.starts_block(&iri("http://e/p0")) && !heads.starts_block(&iri(RDF_TYPE)));
        assert!(heads.starts_block(&class), "the classes are still few");
    }
}
