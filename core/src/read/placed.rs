//! Blocks a store has placed before, in order, each with a weak handle on
//! its decoded block: a lookup that lands in one of them while the cache (or
//! a reader, or a scan) still holds it finds it here with a binary search,
//! instead of a directory walk and a cache lookup (issue 14: a query that
//! looks a term or a pattern up per row paid both per row). The handles keep
//! nothing alive beyond the cache's budget, and places whose block has gone
//! are dropped once they outnumber the live ones (a long-lived store, a
//! Worker's, meets blocks without end on a big file).

use std::cmp::Ordering;
use std::sync::{Arc, Weak};

/// Places `P` of blocks `B`, in the order their `place` calls give.
#[derive(Debug)]
pub(super) struct Placed<P, B> {
    places: Vec<P>,
    blocks: Vec<Weak<B>>,
    /// The length at which places of dropped blocks are swept.
    sweep_at: usize,
    /// The position [`Self::last_where_again`] found last: lookups in order land
    /// in the same block many times over (a for-loop join's, issue 14), and
    /// two comparisons there stand for the binary search. Any position is
    /// safe: it is checked before it is taken.
    last: usize,
}

impl<P, B> Default for Placed<P, B> {
    fn default() -> Self {
        Self { places: Vec::new(), blocks: Vec::new(), sweep_at: 0, last: 0 }
    }
}

impl<P, B> Placed<P, B> {
    /// The fewest places worth a sweep.
    pub(super) const SWEEP_MIN: usize = 1024;

    /// Places `block`, first dropping the places of blocks no longer in
    /// memory when there are `sweep_at` of them: amortised O(1) a place, and
    /// at most twice the live ones (or [`Self::SWEEP_MIN`]). `order` compares
    /// a place held with `place`; an equal one is replaced.
    pub(super) fn place(&mut self, place: P, block: &Arc<B>, order: impl Fn(&P) -> Ordering) {
        if self.places.len() >= self.sweep_at.max(Self::SWEEP_MIN) {
            let mut live = self.blocks.iter().map(|block| block.strong_count() > 0);
            self.places.retain(|_| live.next().unwrap_or(false));
            self.blocks.retain(|block| block.strong_count() > 0);
            self.sweep_at = 2 * self.places.len();
        }
        let at = self.places.partition_point(|p| order(p) == Ordering::Less);
        if self.places.get(at).is_some_and(|p| order(p) == Ordering::Equal) {
            self.places[at] = place;
            self.blocks[at] = Arc::downgrade(block);
        } else {
            self.places.insert(at, place);
            self.blocks.insert(at, Arc::downgrade(block));
        }
    }

    /// The position of the last place `pick` holds for (`pick` holds for a
    /// prefix of the places, in order).
    pub(super) fn last_where(&self, pick: impl Fn(&P) -> bool) -> Option<usize> {
        self.places.partition_point(pick).checked_sub(1)
    }

    /// [`Self::last_where`], trying first the position it found last time
    /// (see `last`).
    pub(super) fn last_where_again(&mut self, pick: impl Fn(&P) -> bool) -> Option<usize> {
        let last = self.last;
        if self.places.get(last).is_some_and(&pick) && !self.places.get(last + 1).is_some_and(&pick) {
            return Some(last);
        }
        let at = self.last_where(pick)?;
        self.last = at;
        Some(at)
    }

    /// The place at a position.
    pub(super) fn place_at(&mut self, at: usize) -> &mut P {
        &mut self.places[at]
    }

    /// The block placed at a position, while still in memory.
    pub(super) fn block_at(&self, at: usize) -> Option<Arc<B>> {
        self.blocks[at].upgrade()
    }

    /// The places, in order.
    pub(super) fn places(&self) -> &[P] {
        &self.places
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A long-lived store meets blocks without end: the places of blocks
    /// that left memory are swept, the live ones kept in order.
    #[test]
    fn places_stay_bounded_by_the_blocks_in_memory() {
        let mut placed = Placed::<u64, u64>::default();
        let kept: Vec<_> = (0..10).map(Arc::new).collect();
        for n in 0..100_000u64 {
            match kept.get(n as usize % 10_000) {
                Some(live) => placed.place(10 * n, live, |p| p.cmp(&(10 * n))),
                None => placed.place(10 * n, &Arc::new(n), |p| p.cmp(&(10 * n))),
            }
            assert!(placed.places().len() <= Placed::<u64, u64>::SWEEP_MIN, "{} places for at most 100 live blocks", placed.places().len());
        }
        assert!(placed.places().windows(2).all(|w| w[0] < w[1]), "places out of order");
        assert_eq!(placed.places.len(), placed.blocks.len());
        for n in (0..100_000u64).filter(|n| n % 10_000 < 10) {
            let at = placed.last_where(|&p| p <= 10 * n).unwrap();
            assert_eq!(placed.places()[at], 10 * n, "place of the live block {n} lost");
            assert!(placed.block_at(at).is_some());
        }
        // Asked again, the last position found is taken only when it is
        // still the answer, however the places moved since.
        for n in [5u64, 5, 6, 3, 99_995, 99_995, 0] {
            let pick = |&p: &u64| p <= 10 * n + 5;
            assert_eq!(placed.last_where_again(pick), placed.last_where(pick), "{n}");
        }
        assert_eq!(placed.last_where_again(|&p| p <= 5), Some(0));
        placed.place(1, &kept[0], |p| p.cmp(&1));
        assert_eq!(placed.last_where_again(|&p| p <= 5), Some(1));
        assert_eq!(placed.last_where_again(|_| false), None);
        // Placing again replaces.
        let again = Arc::new(7);
        placed.place(0, &again, |p| p.cmp(&0));
        assert_eq!(placed.places().iter().filter(|&&p| p == 0).count(), 1);
        assert_eq!(*placed.block_at(0).unwrap(), 7);
    }
}
