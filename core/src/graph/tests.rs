//! The graph machines against plain computations over the quads themselves,
//! on a generated graph with cycles, self-loops, blank nodes, named graphs
//! and unreachable parts, stored in small blocks so that every level reads
//! several of them; and the rounds they take.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::check::{Check, FindingKind, Tier};
use super::path::{Path, PathOptions};
use super::reach::{Reach, ReachOptions};
use super::{Direction, Machine, run};
use crate::read::{BlockCache, RoundOptions, RoundStats, open_in_rounds};
use crate::sparql::tests::fixture;
use crate::{ByteRange, RangeSource, ReadError};
use oxrdf::{BlankNode, GraphName, NamedNode, NamedOrBlankNode, Quad, Term};
use std::collections::{HashMap, HashSet, VecDeque};

const NODES: u64 = 600;

fn node(i: u64) -> Term {
    // One node in seven is a blank node.
    if i % 7 == 3 { BlankNode::new_unchecked(format!("b{i}")).into() } else { NamedNode::new_unchecked(format!("http://ex.org/n{i}")).into() }
}

fn predicate(name: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("http://ex.org/{name}"))
}

/// Nodes 0..600 linked by `next` and `link` (a pseudo-random graph with
/// self-loops and cycles; one quad in five in a named graph, some repeated
/// in two graphs), nodes 500.. only linked among themselves.
fn quads() -> Vec<Quad> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut random = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut quads = Vec::new();
    for i in 0..NODES {
        let edges = random(4);
        for e in 0..edges {
            let island = i >= 500;
            let target = if island { 500 + random(NODES - 500) } else if e == 0 && i % 11 == 0 { i } else { random(500) };
            let p = if random(3) == 0 { "link" } else { "next" };
            let subject: NamedOrBlankNode = match node(i) {
                Term::NamedNode(n) => n.into(),
                Term::BlankNode(b) => b.into(),
                _ => unreachable!(),
            };
            let graph = match random(5) {
                0 => GraphName::NamedNode(predicate("g1")),
                1 => {
                    quads.push(Quad::new(subject.clone(), predicate(p), node(target), GraphName::NamedNode(predicate("g2"))));
                    GraphName::DefaultGraph
                }
                _ => GraphName::DefaultGraph,
            };
            quads.push(Quad::new(subject, predicate(p), node(target), graph));
        }
        quads.push(Quad::new(predicate(&format!("n{i}")), predicate("label"), oxrdf::Literal::new_simple_literal(format!("node {i}")), GraphName::DefaultGraph));
    }
    quads
}

/// Plain adjacency over the quads: (neighbour, the triple as stored).
fn adjacency(quads: &[Quad], predicates: &[&str], direction: Direction) -> HashMap<Term, Vec<(Term, [Term; 3])>> {
    let mut next: HashMap<Term, Vec<(Term, [Term; 3])>> = HashMap::new();
    for q in quads {
        if !predicates.is_empty() && !predicates.iter().any(|p| q.predicate.as_str() == format!("http://ex.org/{p}")) {
            continue;
        }
        let (s, o) = (Term::from(q.subject.clone()), q.object.clone());
        let triple = [s.clone(), Term::from(q.predicate.clone()), o.clone()];
        if direction != Direction::Inverse {
            next.entry(s.clone()).or_default().push((o.clone(), triple.clone()));
        }
        if direction != Direction::Forward {
            next.entry(o).or_default().push((s, triple));
        }
    }
    next
}

/// Plain BFS distances from `seed`.
fn distances(next: &HashMap<Term, Vec<(Term, [Term; 3])>>, seed: &Term, max_depth: Option<u32>) -> HashMap<Term, u32> {
    let mut seen = HashMap::from([(seed.clone(), 0u32)]);
    let mut queue = VecDeque::from([seed.clone()]);
    while let Some(current) = queue.pop_front() {
        let d = seen[&current];
        if max_depth.is_some_and(|m| d >= m) {
            continue;
        }
        for (n, _) in next.get(&current).into_iter().flatten() {
            if !seen.contains_key(n) {
                seen.insert(n.clone(), d + 1);
                queue.push_back(n.clone());
            }
        }
    }
    seen
}

fn file() -> Vec<u8> {
    fixture::build_with(&quads(), 64, 256)
}

/// Runs a machine in rounds over the in-memory file; the open counted.
fn in_rounds<M: Machine>(file: &[u8], machine: &mut M) -> (M::Output, RoundStats) {
    let fetch = |ranges: &[ByteRange]| -> Result<Vec<Vec<u8>>, ReadError> { file.read_ranges(ranges) };
    let (store, opened) = open_in_rounds(fetch, BlockCache::new(64 << 20)).unwrap();
    let (output, stats) = run(&store, &RoundOptions { max_rounds: 10_000, ..RoundOptions::default() }, fetch, machine).unwrap();
    (output, opened + stats)
}

#[test]
fn reach_counts_and_members_equal_a_plain_bfs_per_seed() {
    let file = file();
    let quads = quads();
    // 150 seeds: three words of 64; one seed twice, one not in the data.
    let mut seeds: Vec<Term> = (0..148).map(|i| node(i * 4 % NODES)).collect();
    seeds.push(node(8));
    seeds.push(NamedNode::new_unchecked("http://ex.org/absent").into());
    for (predicates, direction, max_depth) in [(&["next"][..], Direction::Forward, None), (&["next", "link"][..], Direction::Inverse, None), (&["link"][..], Direction::Both, Some(2)), (&["next", "link"][..], Direction::Both, None)] {
        let next = adjacency(&quads, predicates, direction);
        let options = ReachOptions { predicates: predicates.iter().map(|p| predicate(p)).collect(), direction, max_depth, members: true, parallel: false };
        let (serial, stats) = in_rounds(&file, &mut Reach::new(seeds.clone(), options.clone()));
        let (parallel, _) = in_rounds(&file, &mut Reach::new(seeds.clone(), ReachOptions { parallel: true, ..options }));
        assert_eq!(serial, parallel, "parallel equals serial");
        let mut deepest = 0;
        for (seed, result) in seeds.iter().zip(&serial) {
            let found = distances(&next, seed, max_depth);
            deepest = deepest.max(found.values().copied().max().unwrap_or(0));
            let expected: HashSet<Term> = found.into_keys().filter(|n| n != seed).collect();
            let members: HashSet<Term> = result.members.clone().unwrap().into_iter().collect();
            assert_eq!(result.reached, expected.len() as u64, "{seed} {predicates:?} {direction:?}");
            assert_eq!(members, expected, "{seed}");
        }
        // The open, the seeds' dictionary blocks, one round a level, the members' terms.
        assert!(stats.rounds <= u64::from(deepest) + 4, "{} rounds for depth {deepest}", stats.rounds);
    }
}

#[test]
fn shortest_paths_have_the_plain_bfs_length_and_are_stored_triples() {
    let file = file();
    let quads = quads();
    let stored: HashSet<[Term; 3]> = quads.iter().map(|q| [q.subject.clone().into(), q.predicate.clone().into(), q.object.clone()]).collect();
    let mut found_some = (0, 0);
    for undirected in [false, true] {
        let direction = if undirected { Direction::Both } else { Direction::Forward };
        let next = adjacency(&quads, &[], direction);
        for k in 0..40u64 {
            let (from, to) = (node(k * 37 % NODES), node((k * 53 + 11) % NODES));
            let expected = distances(&next, &from, None).get(&to).copied();
            for unidirectional in [false, true] {
                let options = PathOptions { predicates: Vec::new(), undirected, max_depth: None, unidirectional };
                let (found, _) = in_rounds(&file, &mut Path::new(from.clone(), to.clone(), options));
                let path = found.path.clone();
                assert_eq!(path.as_ref().map(|p| p.len() as u32), expected, "{from} → {to} undirected={undirected}");
                let Some(path) = path else {
                    found_some.1 += 1;
                    continue;
                };
                found_some.0 += 1;
                let mut at = from.clone();
                for [s, p, o] in &path {
                    assert!(stored.contains(&[s.clone(), p.clone(), o.clone()]), "{s} {p} {o} is stored");
                    at = if *s == at { o.clone() } else if undirected && *o == at { s.clone() } else { panic!("step {s} {p} {o} does not leave {at}") };
                }
                assert_eq!(at, to);
            }
            // Within a depth shorter than the path: none.
            if let Some(length) = expected.filter(|&l| l > 1) {
                let options = PathOptions { undirected, max_depth: Some(length - 1), ..PathOptions::default() };
                assert_eq!(in_rounds(&file, &mut Path::new(from.clone(), to.clone(), options)).0.path, None);
            }
        }
    }
    assert!(found_some.0 > 20 && found_some.1 > 4, "paths found / not found: {found_some:?}");
}

#[test]
fn bidirectional_search_visits_fewer_nodes_than_plain_bfs_in_total() {
    let file = file();
    let (mut both, mut one) = (0, 0);
    for k in 0..40u64 {
        let (from, to) = (node(k * 37 % 500), node((k * 53 + 11) % 500));
        for (unidirectional, total) in [(false, &mut both), (true, &mut one)] {
            let options = PathOptions { undirected: true, unidirectional, ..PathOptions::default() };
            *total += in_rounds(&file, &mut Path::new(from.clone(), to.clone(), options)).0.visited;
        }
    }
    assert!(both < one, "bidirectional visited {both}, unidirectional {one}");
}

#[test]
fn tier_one_and_tier_two_agree_and_cite_stored_triples() {
    let trig = r#"@prefix : <http://ex.org/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
        :A rdfs:subClassOf :B , :C . :B owl:disjointWith :C . :K owl:equivalentClass :B . :L rdfs:subClassOf :K .
        :D rdfs:subClassOf :E . :E rdfs:subClassOf :D . :S rdfs:subClassOf :S .
        :age a owl:FunctionalProperty . :worksAt rdfs:domain :B . :employs rdfs:range :C .
        :x a :B , :C . :y a :A . :u a :L ; :age 1 . :u a :C . :z :worksAt :org . :acme :employs :z .
        :w :age 3 , 4 . :v :age 5 . :ok a :B .
        GRAPH :g { :w :age 3 . :q a :B . :q a :C . }"#;
    let file = fixture::from_trig(trig);
    let mut reports = Vec::new();
    for tier in [Tier::Schema, Tier::Selective, Tier::WholeGraph] {
        let (report, _) = in_rounds(&file, &mut Check::new(tier));
        let summary: Vec<(FindingKind, String)> = report.findings.iter().map(|f| (f.kind, f.subject.to_string())).collect();
        reports.push((summary, report.findings));
    }
    let ex = |n: &str| format!("<http://ex.org/{n}>");
    let schema = vec![(FindingKind::UnsatisfiableClass, ex("A")), (FindingKind::SubclassCycle, ex("D"))];
    assert_eq!(reports[0].0, schema);
    let mut instances = schema.clone();
    instances.extend([(FindingKind::DisjointInstance, ex("q")), (FindingKind::DisjointInstance, ex("u")), (FindingKind::DisjointInstance, ex("x")), (FindingKind::DisjointInstance, ex("y")), (FindingKind::DisjointInstance, ex("z"))]);
    instances.push((FindingKind::FunctionalProperty, ex("w")));
    assert_eq!(reports[1].0, instances);
    assert_eq!(reports[1].1, reports[2].1, "tier 2 finds what tier 1 does");
    // u is an L, L ≡ K ≡ B, and a C: the chain goes through the equivalence.
    let u = reports[1].1.iter().find(|f| f.subject.to_string() == ex("u")).unwrap();
    let cited: Vec<String> = u.evidence.iter().map(|t| format!("{} {} {}", t[0], t[1], t[2])).collect();
    assert!(cited.contains(&format!("{} <http://www.w3.org/2002/07/owl#equivalentClass> {}", ex("K"), ex("B"))), "{cited:?}");
}
