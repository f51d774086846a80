//! Batch reachability: from many seeds at once, how many distinct nodes each
//! reaches along some predicates. One breadth-first search serves every seed
//! (MS-BFS, Then et al., VLDB 2015): a node carries one bit per seed that
//! has reached it, in words of 64 seeds, so a level reads the blocks of the
//! union of all seeds' frontiers in one round and each edge is walked once
//! per word, not once per seed. Words are independent: with the `parallel`
//! feature (native builds only) they are advanced on all cores, with the same
//! result as one after the other.

use super::frontier::{Direction, Edges, Level, read_level};
use super::{Machine, resolve, terms_of};
use crate::{RangeSource, ReadError, Store, TermId};
use oxrdf::{NamedNode, Term};
use rustc_hash::FxHashMap;

/// What to follow, how far, and what to return.
#[derive(Debug, Clone)]
pub struct ReachOptions {
    /// Predicates to follow (at least one).
    pub predicates: Vec<NamedNode>,
    /// Which way.
    pub direction: Direction,
    /// Most hops from a seed; `None` for no limit.
    pub max_depth: Option<u32>,
    /// Also list the nodes each seed reaches.
    pub members: bool,
    /// Advance groups of 64 seeds on all cores (only with the `parallel`
    /// feature; ignored otherwise). The result is the same.
    pub parallel: bool,
}

/// What one seed reaches (the seed itself is never counted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedReach {
    /// Distinct nodes reached.
    pub reached: u64,
    /// Those nodes in term order, when asked for.
    pub members: Option<Vec<Term>>,
}

/// The reachability computation (a [`Machine`]).
pub struct Reach {
    seeds: Vec<Term>,
    options: ReachOptions,
    phase: Phase,
}

enum Phase {
    Resolve,
    Search(Search),
    Decode { counts: Vec<u64>, members: Vec<Vec<TermId>> },
    Done,
}

/// Seeds in words of 64 and the level reached.
struct Search {
    edges: Edges,
    words: Vec<Word>,
    depth: u32,
}

/// Up to 64 seeds searched together: bit `b` stands for seed `64 × w + b`.
#[derive(Default)]
struct Word {
    /// The word's seeds, by bit (`None`: not in the dataset).
    seeds: Vec<Option<TermId>>,
    /// Which of the word's seeds reached each node (seeds included).
    seen: FxHashMap<TermId, u64>,
    /// Nodes reached at the last level, ascending, with the seeds new to them.
    frontier: Vec<(TermId, u64)>,
    /// Nodes reached per seed bit.
    counts: Vec<u64>,
}

impl Reach {
    /// Reachability from `seeds` (IRIs or blank nodes; one not in the
    /// dataset reaches nothing).
    pub fn new(seeds: Vec<Term>, options: ReachOptions) -> Self {
        Self { seeds, options, phase: Phase::Resolve }
    }
}

impl Machine for Reach {
    type Output = Vec<SeedReach>;

    fn step<S: RangeSource>(&mut self, store: &Store<S>) -> Result<Option<Vec<SeedReach>>, ReadError> {
        loop {
            match &mut self.phase {
                Phase::Resolve => {
                    let Some((seed_ids, predicates)) = resolve(store, &self.seeds, &self.options.predicates)? else { return Ok(None) };
                    let edges = Edges { predicates: Some(predicates), direction: self.options.direction };
                    let words = seed_ids.chunks(64).map(Word::new).collect();
                    self.phase = Phase::Search(Search { edges, words, depth: 0 });
                }
                Phase::Search(search) => {
                    let done = self.options.max_depth.is_some_and(|max| search.depth >= max) || search.words.iter().all(|w| w.frontier.is_empty());
                    if done || search.edges.predicates.as_ref().is_some_and(Vec::is_empty) {
                        let (counts, members) = search.finish(self.seeds.len(), self.options.members);
                        self.phase = Phase::Decode { counts, members };
                        continue;
                    }
                    let frontier = search.union_frontier();
                    let Some(level) = read_level(store, &search.edges, &frontier, false)? else { return Ok(None) };
                    search.advance(&frontier, &level, self.options.parallel);
                    search.depth += 1;
                    // The level is done: its blocks need not stay pinned.
                    store.release_fed();
                }
                Phase::Decode { counts, members } => {
                    let mut decoded = Vec::with_capacity(counts.len());
                    if self.options.members {
                        let mut ids: Vec<TermId> = members.iter().flatten().copied().collect();
                        ids.sort_unstable();
                        ids.dedup();
                        let Some(terms) = terms_of(store, &ids)? else { return Ok(None) };
                        for (count, nodes) in counts.iter().zip(members.iter()) {
                            let list = nodes.iter().filter_map(|id| ids.binary_search(id).ok().map(|k| terms[k].clone())).collect();
                            decoded.push(SeedReach { reached: *count, members: Some(list) });
                        }
                    } else {
                        decoded.extend(counts.iter().map(|&reached| SeedReach { reached, members: None }));
                    }
                    self.phase = Phase::Done;
                    return Ok(Some(decoded));
                }
                Phase::Done => return Err(ReadError::Source("internal error: reachability stepped after it finished".into())),
            }
        }
    }
}

impl Word {
    fn new(seeds: &[Option<TermId>]) -> Self {
        let mut word = Self { seeds: seeds.to_vec(), counts: vec![0; seeds.len()], ..Self::default() };
        for (bit, seed) in seeds.iter().enumerate() {
            if let Some(id) = *seed {
                *word.seen.entry(id).or_insert(0) |= 1 << bit;
            }
        }
        let mut frontier: Vec<(TermId, u64)> = word.seen.iter().map(|(&id, &bits)| (id, bits)).collect();
        frontier.sort_unstable();
        word.frontier = frontier;
        word
    }

    /// Walks one level: every triple leaving a frontier node gives its
    /// neighbour the seeds that reached the node and had not reached it.
    fn advance(&mut self, frontier: &[TermId], level: &Level) {
        // This word's seeds per position of the union frontier.
        let mut bits = vec![0u64; frontier.len()];
        let mut j = 0;
        for &(node, node_bits) in &self.frontier {
            j += frontier[j..].partition_point(|&n| n < node);
            if let Some(slot) = bits.get_mut(j) {
                *slot = node_bits;
            }
        }
        let mut next: Vec<(TermId, u64)> = Vec::new();
        for (&from, &to) in level.from.iter().zip(&level.to) {
            let carried = bits[from as usize];
            if carried == 0 {
                continue;
            }
            let seen = self.seen.entry(to).or_insert(0);
            let mut new = carried & !*seen;
            if new == 0 {
                continue;
            }
            *seen |= new;
            next.push((to, new));
            while new != 0 {
                self.counts[new.trailing_zeros() as usize] += 1;
                new &= new - 1;
            }
        }
        next.sort_unstable_by_key(|&(node, _)| node);
        next.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                earlier.1 |= later.1;
            }
            same
        });
        self.frontier = next;
    }
}

impl Search {
    /// Every word's frontier nodes, ascending, once.
    fn union_frontier(&self) -> Vec<TermId> {
        let mut nodes: Vec<TermId> = self.words.iter().flat_map(|w| w.frontier.iter().map(|&(node, _)| node)).collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }

    fn advance(&mut self, frontier: &[TermId], level: &Level, parallel: bool) {
        #[cfg(feature = "parallel")]
        if parallel {
            use rayon::prelude::*;
            self.words.par_iter_mut().for_each(|word| word.advance(frontier, level));
            return;
        }
        let _ = parallel;
        self.words.iter_mut().for_each(|word| word.advance(frontier, level));
    }

    /// Per seed: nodes reached, and (when asked) which, ascending.
    fn finish(&mut self, seeds: usize, members: bool) -> (Vec<u64>, Vec<Vec<TermId>>) {
        let counts: Vec<u64> = self.words.iter().flat_map(|w| w.counts.iter().copied()).collect();
        let mut lists: Vec<Vec<TermId>> = vec![Vec::new(); if members { seeds } else { 0 }];
        if members {
            for (w, word) in self.words.iter().enumerate() {
                for (&node, &bits) in &word.seen {
                    let mut bits = bits;
                    while bits != 0 {
                        let seed = 64 * w + bits.trailing_zeros() as usize;
                        lists[seed].push(node);
                        bits &= bits - 1;
                    }
                }
            }
            // The seed itself is in `seen`, never counted: take it out.
            for (list, word_seed) in lists.iter_mut().zip(self.seeds_of_words()) {
                list.sort_unstable();
                if let Some(seed) = word_seed
                    && let Ok(k) = list.binary_search(&seed)
                {
                    list.remove(k);
                }
            }
        }
        self.words.clear();
        (counts, lists)
    }

    /// Each seed's id in word order (as `Word::new` set them).
    fn seeds_of_words(&self) -> Vec<Option<TermId>> {
        self.words.iter().flat_map(|w| w.seeds.iter().copied()).collect()
    }
}
