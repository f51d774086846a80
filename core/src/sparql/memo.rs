//! Per-query memos of decoded terms. spareval asks the dataset for a
//! term's value every time an expression reads a variable: `isLiteral(?o)`
//! then `DATATYPE(?o)` decode the same id twice, an `ORDER BY ?label`
//! decodes both sides of every comparison (n log n decodes of n terms), and a
//! `GROUP BY (LANG(?l))` looks the same computed key up in the dictionary
//! once per row. Decoding is a dictionary-block lookup, a front-coded walk
//! of up to 15 entries, a UTF-8 check and the literal's parse; a memo hit is
//! a clone. Each memo is bounded by entries and starts empty (a selective
//! query pays nothing for it); when full it is cleared and refilled, which
//! keeps the recently used terms of a long scan without an LRU's upkeep.
//! A term is kept only when it is asked for a second time (a scan that reads
//! each literal once, `GROUP BY (LANG(?l))` over every label, would pay a
//! clone and an insert per row for nothing).

use super::dataset::InternalTerm;
use crate::TermId;
use oxrdf::Term;
use rustc_hash::FxHashMap;
use spareval::ExpressionTerm;
use std::borrow::Borrow;
use std::cell::{Cell, RefCell};
use std::hash::Hash;

/// Most entries per memo…
const MAX_ENTRIES: usize = 1 << 14;
/// … and most bytes of term text, so that a Worker's isolate stays bounded
/// whatever the query (five memos: at most 20 MiB of text, and the
/// entries' fixed size, ~2.5 MiB).
const MAX_BYTES: u64 = 4 << 20;

/// A bounded map that is cleared when full.
pub(crate) struct Memo<K, V> {
    entries: RefCell<FxHashMap<K, V>>,
    bytes: Cell<u64>,
}

impl<K: Hash + Eq, V: Clone> Memo<K, V> {
    pub(crate) fn new() -> Self {
        Self { entries: RefCell::default(), bytes: Cell::new(0) }
    }

    pub(crate) fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.entries.borrow().get(key).cloned()
    }

    /// Keeps `value`, whose text takes `bytes`.
    pub(crate) fn insert(&self, key: K, value: V, bytes: u64) {
        let mut entries = self.entries.borrow_mut();
        if entries.len() >= MAX_ENTRIES || self.bytes.get().saturating_add(bytes) > MAX_BYTES {
            entries.clear();
            self.bytes.set(0);
        }
        if bytes <= MAX_BYTES {
            entries.insert(key, value);
            self.bytes.set(self.bytes.get() + bytes);
        }
    }
}

/// Slots of the table of ids seen once.
const SEEN_SLOTS: usize = 1 << 10;

/// A memo of stored terms by id that keeps a term the second time it is
/// offered: the first time only its id is noted, in a direct-mapped table
/// (one slot per id hash, overwritten).
pub(crate) struct IdMemo<V> {
    seen: RefCell<Vec<TermId>>,
    /// The id offered last: asked for again right away (`isLiteral(?o)`
    /// then `LANG(?o)` on one row), it is not counted as seen twice, since
    /// the dataset's term reader decodes it again for nothing.
    last: Cell<TermId>,
    entries: Memo<TermId, V>,
}

impl<V: Clone> IdMemo<V> {
    pub(crate) fn new() -> Self {
        Self { seen: RefCell::default(), last: Cell::new(0), entries: Memo::new() }
    }

    pub(crate) fn get(&self, id: TermId) -> Option<V> {
        self.entries.get(&id)
    }

    /// Offers the decoded value of `id`, whose text takes `bytes`, kept if
    /// `id` was offered before.
    pub(crate) fn offer(&self, id: TermId, value: &V, bytes: u64) {
        if self.last.replace(id) == id {
            return;
        }
        let mut seen = self.seen.borrow_mut();
        if seen.is_empty() {
            seen.resize(SEEN_SLOTS, 0);
        }
        // Fibonacci hashing: consecutive ids land far apart.
        let slot = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SEEN_SLOTS.trailing_zeros())) as usize;
        if seen[slot] == id {
            self.entries.insert(id, value.clone(), bytes);
        } else {
            seen[slot] = id;
        }
    }
}

/// The memos of one query run.
pub(crate) struct TermMemos {
    /// Stored terms by id, as `externalize_term` builds them.
    pub(crate) terms: IdMemo<Term>,
    /// Stored terms by id, as expressions see them (numbers and dates parsed).
    pub(crate) values: IdMemo<ExpressionTerm>,
    /// Computed values already looked up in the dictionary.
    pub(crate) computed: Memo<Term, InternalTerm>,
    /// LANG of stored literals, by tag, as the term the tag internalizes
    /// to (`StoreDataset::internal_function_term`).
    pub(crate) languages: Memo<Box<str>, InternalTerm>,
    /// DATATYPE of stored literals, by the datatype's IRI, as the term the
    /// IRI internalizes to (`StoreDataset::internal_function_term`).
    pub(crate) datatypes: Memo<Box<str>, InternalTerm>,
}

impl TermMemos {
    pub(crate) fn new() -> Self {
        Self { terms: IdMemo::new(), values: IdMemo::new(), computed: Memo::new(), languages: Memo::new(), datatypes: Memo::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memo_is_bounded_and_keeps_what_came_last() {
        let memo: Memo<u64, u64> = Memo::new();
        for i in 0..(MAX_ENTRIES as u64 * 3 + 5) {
            memo.insert(i, i * 2, 8);
            assert_eq!(memo.get(&i), Some(i * 2));
        }
        assert!(memo.entries.borrow().len() <= MAX_ENTRIES);
        assert_eq!(memo.get(&0), None);
        memo.insert(1, 1, MAX_BYTES - 8);
        memo.insert(2, 2, 16);
        assert_eq!((memo.get(&1), memo.get(&2)), (None, Some(2)), "over the byte bound: cleared");
        memo.insert(3, 3, MAX_BYTES + 1);
        assert_eq!(memo.get(&3), None, "larger than the bound: not kept");
    }

    #[test]
    fn id_memo_keeps_what_is_asked_for_twice() {
        let memo: IdMemo<String> = IdMemo::new();
        memo.offer(7, &"seven".to_owned(), 5);
        assert_eq!(memo.get(7), None);
        memo.offer(7, &"seven".to_owned(), 5);
        assert_eq!(memo.get(7), None, "asked for again right away: not kept");
        memo.offer(9, &"nine".to_owned(), 4);
        memo.offer(7, &"seven".to_owned(), 5);
        assert_eq!(memo.get(7).as_deref(), Some("seven"));
        assert_eq!(memo.get(8), None);
    }
}
