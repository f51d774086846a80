//! Shortest paths by bidirectional breadth-first search: one search walks
//! forward from the source, one backward from the target, a whole level at a
//! time, always the side with the smaller frontier; the first level at which
//! a newly reached node is known to the other side gives a shortest path
//! (every such node then lies at the same total distance). Each level reads
//! only the blocks of its frontier's ids, in one round. The unidirectional
//! search (only the source side moves) is kept for comparison.

use super::frontier::{Direction, Edges, read_level};
use super::{Machine, resolve, terms_of};
use crate::{RangeSource, ReadError, Store, TermId};
use oxrdf::{NamedNode, Term};
use rustc_hash::FxHashMap;

/// What to follow and how far.
#[derive(Debug, Clone, Default)]
pub struct PathOptions {
    /// Predicates to follow; empty follows every predicate.
    pub predicates: Vec<NamedNode>,
    /// Follow triples both ways (a step may run object to subject).
    pub undirected: bool,
    /// Longest path looked for; `None` for no limit.
    pub max_depth: Option<u32>,
    /// Only the source side moves (plain BFS), for comparison.
    pub unidirectional: bool,
}

/// A shortest path, or none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundPath {
    /// Triples from the source to the target, each as stored; `None` when no
    /// path exists within the depth.
    pub path: Option<Vec<[Term; 3]>>,
    /// Nodes the searches reached (both sides, their start nodes included).
    pub visited: u64,
}

/// The path search (a [`Machine`]).
pub struct Path {
    ends: [Term; 2],
    options: PathOptions,
    phase: Phase,
}

enum Phase {
    Resolve,
    Search(Box<[Side; 2]>),
    Decode { triples: Option<Vec<[TermId; 3]>>, visited: u64 },
    Done,
}

/// One direction of the search.
struct Side {
    root: TermId,
    /// How each reached node was reached: the node one step nearer the root
    /// and the stored triple between them.
    parents: FxHashMap<TermId, (TermId, [TermId; 3])>,
    frontier: Vec<TermId>,
    depth: u32,
    edges: Edges,
}

impl Path {
    /// A shortest path from `from` to `to` (IRIs or blank nodes).
    pub fn new(from: Term, to: Term, options: PathOptions) -> Self {
        Self { ends: [from, to], options, phase: Phase::Resolve }
    }
}

impl Machine for Path {
    type Output = FoundPath;

    fn step<S: RangeSource>(&mut self, store: &Store<S>) -> Result<Option<FoundPath>, ReadError> {
        loop {
            match &mut self.phase {
                Phase::Resolve => {
                    let Some((ends, ids)) = resolve(store, &self.ends, &self.options.predicates)? else { return Ok(None) };
                    // No predicate given: every predicate.
                    let predicates = (!self.options.predicates.is_empty()).then_some(ids);
                    let direction = if self.options.undirected { Direction::Both } else { Direction::Forward };
                    self.phase = match (ends[0], ends[1]) {
                        _ if self.ends[0] == self.ends[1] => Phase::Decode { triples: Some(Vec::new()), visited: 1 },
                        (Some(from), Some(to)) if predicates.as_ref().is_none_or(|p| !p.is_empty()) => Phase::Search(Box::new([
                            Side::new(from, Edges { predicates: predicates.clone(), direction }),
                            Side::new(to, Edges { predicates, direction: direction.reversed() }),
                        ])),
                        _ => Phase::Decode { triples: None, visited: ends.iter().flatten().count() as u64 },
                    };
                }
                Phase::Search(sides) => {
                    let [source, target] = &mut **sides;
                    let visited = (source.parents.len() + target.parents.len() + 2) as u64;
                    let forward = self.options.unidirectional || source.frontier.len() <= target.frontier.len();
                    let (near, far) = if forward { (source, target) } else { (target, source) };
                    let too_long = self.options.max_depth.is_some_and(|max| near.depth + 1 + far.depth > max);
                    if near.frontier.is_empty() || too_long {
                        self.phase = Phase::Decode { triples: None, visited };
                        continue;
                    }
                    let Some(meeting) = near.expand(store, far)? else { return Ok(None) };
                    store.release_fed();
                    if let Some(node) = meeting {
                        let [source, target] = &**sides;
                        let mut triples = source.chain(node);
                        triples.reverse();
                        triples.extend(target.chain(node));
                        let visited = (source.parents.len() + target.parents.len() + 2) as u64;
                        self.phase = Phase::Decode { triples: Some(triples), visited };
                    }
                }
                Phase::Decode { triples, visited } => {
                    let path = match triples {
                        None => None,
                        Some(triples) => {
                            let ids: Vec<TermId> = triples.iter().flatten().copied().collect();
                            let Some(terms) = terms_of(store, &ids)? else { return Ok(None) };
                            Some(terms.chunks(3).map(|t| [t[0].clone(), t[1].clone(), t[2].clone()]).collect())
                        }
                    };
                    let found = FoundPath { path, visited: *visited };
                    self.phase = Phase::Done;
                    return Ok(Some(found));
                }
                Phase::Done => return Err(ReadError::Source("internal error: path search stepped after it finished".into())),
            }
        }
    }
}

impl Side {
    fn new(root: TermId, edges: Edges) -> Self {
        Self { root, parents: FxHashMap::default(), frontier: vec![root], depth: 0, edges }
    }

    fn knows(&self, node: TermId) -> bool {
        node == self.root || self.parents.contains_key(&node)
    }

    /// Walks one level. `Ok(None)`: blocks missing; `Ok(Some(meeting))`:
    /// the level is done, and `meeting` is the smallest new node the other
    /// side knows, if any.
    fn expand<S: RangeSource>(&mut self, store: &Store<S>, other: &Side) -> Result<Option<Option<TermId>>, ReadError> {
        let Some(level) = read_level(store, &self.edges, &self.frontier, true)? else { return Ok(None) };
        let mut next = Vec::new();
        let mut meeting: Option<TermId> = None;
        for k in 0..level.len() {
            let (from, to) = (self.frontier[level.from[k] as usize], level.to[k]);
            if self.knows(to) {
                continue;
            }
            let triple = if level.forward[k] { [from, level.predicate[k], to] } else { [to, level.predicate[k], from] };
            self.parents.insert(to, (from, triple));
            next.push(to);
            if other.knows(to) && meeting.is_none_or(|m| to < m) {
                meeting = Some(to);
            }
        }
        next.sort_unstable();
        self.frontier = next;
        self.depth += 1;
        Ok(Some(meeting))
    }

    /// The stored triples from `node` back to the root.
    fn chain(&self, mut node: TermId) -> Vec<[TermId; 3]> {
        let mut triples = Vec::new();
        while let Some(&(parent, triple)) = self.parents.get(&node) {
            triples.push(triple);
            node = parent;
        }
        triples
    }
}
