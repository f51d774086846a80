//! Coherence checks in tiers, each finding proved by stored triples.
//!
//! - Tier 0 reads only the schema axioms (the AXIOMS section, FORMAT.md §13:
//!   a few KB whatever the number of instances): unsatisfiable classes (a
//!   class under two disjoint classes, through `rdfs:subClassOf` and
//!   `owl:equivalentClass`) and `rdfs:subClassOf` cycles.
//! - Tier 1 adds the instances, reading only what the schema points at: the
//!   `rdf:type` quads of the classes under a disjointness, and the quads of
//!   functional properties and of properties whose domain or range is such a
//!   class. Findings: instances typed (or, through domain and range, implied)
//!   into disjoint classes, and functional properties with two values.
//! - Tier 2 finds the same over the whole graph: the schema is read from the
//!   quads themselves (not the section) and every quad is scanned once, a
//!   batch of blocks per round, released as it is done.
//!
//! Files without an AXIOMS section take the schema from the quads at every
//! tier. Every tier's findings include the lower tiers'.

use super::{Machine, collect_or_missing, term_ids, terms_of};
use crate::format::axioms::{self, SchemaAxioms};
use crate::read::{Block, BlockKey, Directory, GraphFilter, QuadPattern};
use crate::{Permutation, RangeSource, ReadError, Store, TermId};
use oxrdf::{NamedNode, Term};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::hash::Hash;

/// How much of the file a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// Schema axioms only.
    Schema = 0,
    /// The slice of instances the schema points at.
    Selective = 1,
    /// Every quad.
    WholeGraph = 2,
}

impl Tier {
    /// The tier of a number (0, 1 or 2).
    pub fn from_number(number: u8) -> Option<Self> {
        Some(match number {
            0 => Self::Schema,
            1 => Self::Selective,
            2 => Self::WholeGraph,
            _ => return None,
        })
    }
}

/// What a finding says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingKind {
    /// A class under two disjoint classes: it can have no instance.
    UnsatisfiableClass,
    /// `rdfs:subClassOf` goes round in a cycle.
    SubclassCycle,
    /// An instance of two disjoint classes.
    DisjointInstance,
    /// A functional property with two values for one subject.
    FunctionalProperty,
}

impl FindingKind {
    /// The name in JSON: `unsatisfiable-class`, `subclass-cycle`, `disjoint-instance`, `functional-property`.
    pub fn name(self) -> &'static str {
        match self {
            Self::UnsatisfiableClass => "unsatisfiable-class",
            Self::SubclassCycle => "subclass-cycle",
            Self::DisjointInstance => "disjoint-instance",
            Self::FunctionalProperty => "functional-property",
        }
    }
}

/// One incoherence and the stored triples that prove it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding<T> {
    /// What is wrong.
    pub kind: FindingKind,
    /// The class, instance or subject it is about.
    pub subject: T,
    /// Triples of the dataset (subject, predicate, object) that prove it.
    pub evidence: Vec<[T; 3]>,
}

/// The predicates and class the checks use, as terms of the space `T`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocabulary<T> {
    /// `rdf:type`.
    pub rdf_type: T,
    /// `rdfs:subClassOf`.
    pub sub_class_of: T,
    /// `owl:equivalentClass`.
    pub equivalent_class: T,
    /// `owl:disjointWith`.
    pub disjoint_with: T,
    /// `owl:FunctionalProperty`.
    pub functional_property: T,
    /// `rdfs:domain`.
    pub domain: T,
    /// `rdfs:range`.
    pub range: T,
}

impl Vocabulary<String> {
    /// The RDF, RDFS and OWL IRIs.
    pub fn iris() -> Self {
        Self {
            rdf_type: axioms::RDF_TYPE.into(),
            sub_class_of: axioms::RDFS_SUB_CLASS_OF.into(),
            equivalent_class: axioms::OWL_EQUIVALENT_CLASS.into(),
            disjoint_with: axioms::OWL_DISJOINT_WITH.into(),
            functional_property: axioms::OWL_FUNCTIONAL_PROPERTY.into(),
            domain: axioms::RDFS_DOMAIN.into(),
            range: axioms::RDFS_RANGE.into(),
        }
    }

    fn list(&self) -> [&String; 7] {
        [&self.rdf_type, &self.sub_class_of, &self.equivalent_class, &self.disjoint_with, &self.functional_property, &self.domain, &self.range]
    }
}

impl<T> Vocabulary<T> {
    /// From the terms in the order of [`Vocabulary::iris`]' `list`.
    fn from_list([rdf_type, sub_class_of, equivalent_class, disjoint_with, functional_property, domain, range]: [T; 7]) -> Self {
        Self { rdf_type, sub_class_of, equivalent_class, disjoint_with, functional_property, domain, range }
    }
}

/// A term space the analysis runs in: IRIs or term ids.
pub trait Space: Ord + Clone + Hash + std::fmt::Debug {}
impl<T: Ord + Clone + Hash + std::fmt::Debug> Space for T {}

/// The class hierarchy: for each class, its direct superclasses with the
/// triple saying so (`owl:equivalentClass` goes both ways).
struct Hierarchy<T> {
    up: BTreeMap<T, Vec<(T, [T; 3])>>,
}

/// A class's ancestors (itself included), each with the class one step
/// below it and the triple between them (`None` for the class itself).
type Ancestors<T> = BTreeMap<T, Option<(T, [T; 3])>>;

impl<T: Space> Hierarchy<T> {
    fn new(schema: &SchemaAxioms<T>, vocabulary: &Vocabulary<T>) -> Self {
        let mut up: BTreeMap<T, Vec<(T, [T; 3])>> = BTreeMap::new();
        for [sub, superclass] in &schema.subclass_of {
            up.entry(sub.clone()).or_default().push((superclass.clone(), [sub.clone(), vocabulary.sub_class_of.clone(), superclass.clone()]));
        }
        for [a, b] in &schema.equivalent_class {
            let triple = [a.clone(), vocabulary.equivalent_class.clone(), b.clone()];
            up.entry(a.clone()).or_default().push((b.clone(), triple.clone()));
            up.entry(b.clone()).or_default().push((a.clone(), triple));
        }
        for edges in up.values_mut() {
            edges.sort();
        }
        Self { up }
    }

    /// Breadth first, so each ancestor is reached by a shortest chain.
    fn ancestors(&self, class: &T) -> Ancestors<T> {
        let mut found: Ancestors<T> = BTreeMap::from([(class.clone(), None)]);
        let mut queue = VecDeque::from([class.clone()]);
        while let Some(current) = queue.pop_front() {
            for (superclass, triple) in self.up.get(&current).into_iter().flatten() {
                if !found.contains_key(superclass) {
                    found.insert(superclass.clone(), Some((current.clone(), triple.clone())));
                    queue.push_back(superclass.clone());
                }
            }
        }
        found
    }
}

/// The triples leading from the class of `ancestors` up to `ancestor`.
fn chain<T: Space>(ancestors: &Ancestors<T>, ancestor: &T) -> Vec<[T; 3]> {
    let mut triples = Vec::new();
    let mut current = ancestor;
    while let Some(Some((below, triple))) = ancestors.get(current) {
        triples.push(triple.clone());
        current = below;
    }
    triples.reverse();
    triples
}

/// What the instance tiers need of the schema: every class's ancestors,
/// and which classes and properties matter.
struct Analysis<'a, T> {
    schema: &'a SchemaAxioms<T>,
    vocabulary: &'a Vocabulary<T>,
    /// Ancestors of every class the schema names.
    ancestors: BTreeMap<T, Ancestors<T>>,
    /// Classes with a disjoint class among their ancestors (themselves included).
    relevant: BTreeSet<T>,
}

impl<'a, T: Space> Analysis<'a, T> {
    fn new(schema: &'a SchemaAxioms<T>, vocabulary: &'a Vocabulary<T>) -> Self {
        let hierarchy = Hierarchy::new(schema, vocabulary);
        let mut classes: BTreeSet<T> = hierarchy.up.keys().cloned().collect();
        classes.extend(schema.disjoint_with.iter().flatten().cloned());
        classes.extend(schema.domain.iter().chain(&schema.range).map(|[_, class]| class.clone()));
        let ancestors: BTreeMap<T, Ancestors<T>> = classes.into_iter().map(|c| (c.clone(), hierarchy.ancestors(&c))).collect();
        let disjoint: BTreeSet<&T> = schema.disjoint_with.iter().flatten().collect();
        let relevant = ancestors.iter().filter(|(_, up)| up.keys().any(|a| disjoint.contains(a))).map(|(c, _)| c.clone()).collect();
        Self { schema, vocabulary, ancestors, relevant }
    }

    /// Tier 0: unsatisfiable classes, then subclass cycles.
    fn schema_findings(&self) -> Vec<Finding<T>> {
        let mut findings = Vec::new();
        for (class, up) in &self.ancestors {
            if let Some([a, b]) = self.schema.disjoint_with.iter().find(|[a, b]| up.contains_key(a) && up.contains_key(b)) {
                let mut evidence = chain(up, a);
                evidence.extend(chain(up, b));
                evidence.push([a.clone(), self.vocabulary.disjoint_with.clone(), b.clone()]);
                findings.push(Finding { kind: FindingKind::UnsatisfiableClass, subject: class.clone(), evidence: distinct(evidence) });
            }
        }
        findings.extend(subclass_cycles(&self.schema.subclass_of, &self.vocabulary.sub_class_of));
        findings
    }

    /// Tier 1 and 2: disjoint instances, then functional properties with two values.
    fn instance_findings(&self, facts: &mut Facts<T>) -> Vec<Finding<T>> {
        facts.types.sort();
        facts.types.dedup();
        facts.values.sort();
        facts.values.dedup();
        let mut findings = Vec::new();
        let mut start = 0;
        while start < facts.types.len() {
            let instance = &facts.types[start].instance;
            let end = start + facts.types[start..].partition_point(|f| &f.instance == instance);
            findings.extend(self.disjoint_instance(&facts.types[start..end]));
            start = end;
        }
        let mut start = 0;
        while start < facts.values.len() {
            let [s, p, o1] = &facts.values[start];
            let end = start + facts.values[start..].partition_point(|[s2, p2, _]| s2 == s && p2 == p);
            // Sorted and distinct: a group of two or more holds two values.
            if let Some([_, _, o2]) = facts.values[start..end].get(1) {
                let declared = [p.clone(), self.vocabulary.rdf_type.clone(), self.vocabulary.functional_property.clone()];
                findings.push(Finding { kind: FindingKind::FunctionalProperty, subject: s.clone(), evidence: vec![declared, [s.clone(), p.clone(), o1.clone()], [s.clone(), p.clone(), o2.clone()]] });
            }
            start = end;
        }
        findings
    }

    /// The first disjoint pair one instance's types fall under, if any.
    fn disjoint_instance(&self, types: &[TypeFact<T>]) -> Option<Finding<T>> {
        let itself = BTreeMap::new();
        // Each class the instance is in, with the first fact that puts it there.
        let mut under: BTreeMap<&T, (&TypeFact<T>, &Ancestors<T>)> = BTreeMap::new();
        for fact in types {
            let up = self.ancestors.get(&fact.class).unwrap_or(&itself);
            under.entry(&fact.class).or_insert((fact, up));
            for ancestor in up.keys() {
                under.entry(ancestor).or_insert((fact, up));
            }
        }
        let [a, b] = self.schema.disjoint_with.iter().find(|[a, b]| under.contains_key(a) && under.contains_key(b))?;
        let mut evidence = Vec::new();
        for class in [a, b] {
            let (fact, up) = under[class];
            evidence.extend(fact.evidence.iter().cloned());
            evidence.extend(chain(up, class));
        }
        evidence.push([a.clone(), self.vocabulary.disjoint_with.clone(), b.clone()]);
        Some(Finding { kind: FindingKind::DisjointInstance, subject: types[0].instance.clone(), evidence: distinct(evidence) })
    }

    /// Properties whose domain (or range) is a relevant class, with that class.
    fn typing_properties(&self, list: &[[T; 2]]) -> BTreeMap<T, Vec<T>> {
        let mut map: BTreeMap<T, Vec<T>> = BTreeMap::new();
        for [p, class] in list {
            if self.relevant.contains(class) {
                map.entry(p.clone()).or_default().push(class.clone());
            }
        }
        map
    }
}

/// Keeps the first of repeated triples.
fn distinct<T: Space>(triples: Vec<[T; 3]>) -> Vec<[T; 3]> {
    let mut seen = BTreeSet::new();
    triples.into_iter().filter(|t| seen.insert(t.clone())).collect()
}

/// One finding per strongly connected group of two or more classes: its
/// smallest class, and a shortest cycle through it.
fn subclass_cycles<T: Space>(pairs: &[[T; 2]], sub_class_of: &T) -> Vec<Finding<T>> {
    let mut nodes: Vec<&T> = pairs.iter().flatten().collect();
    nodes.sort();
    nodes.dedup();
    let position = |t: &T| nodes.binary_search(&t).unwrap_or(0);
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for [a, b] in pairs {
        next[position(a)].push(position(b));
    }
    let mut findings = Vec::new();
    for group in strongly_connected(&next).into_iter().filter(|g| g.len() > 1) {
        let start = group.iter().copied().min().unwrap_or(0);
        let inside: BTreeSet<usize> = group.into_iter().collect();
        // Breadth first from `start` inside the group, back to `start`.
        let mut parent: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        'search: while let Some(current) = queue.pop_front() {
            for &n in &next[current] {
                if !inside.contains(&n) || parent.contains_key(&n) {
                    continue;
                }
                parent.insert(n, current);
                if n == start {
                    break 'search;
                }
                queue.push_back(n);
            }
        }
        let mut cycle = Vec::new();
        let mut current = start;
        while let Some(&p) = parent.get(&current) {
            cycle.push([nodes[p].clone(), sub_class_of.clone(), nodes[current].clone()]);
            current = p;
            if current == start {
                break;
            }
        }
        cycle.reverse();
        findings.push(Finding { kind: FindingKind::SubclassCycle, subject: nodes[start].clone(), evidence: cycle });
    }
    findings.sort_by(|a, b| a.subject.cmp(&b.subject));
    findings
}

/// Tarjan's strongly connected components, without recursion.
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = next.len();
    let (mut index, mut low, mut on_stack) = (vec![UNSEEN; n], vec![0; n], vec![false; n]);
    let (mut stack, mut groups, mut counter) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        let mut calls = vec![(root, 0usize)];
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&(v, i)) = calls.last() {
            if let Some(&w) = next[v].get(i) {
                if let Some(call) = calls.last_mut() {
                    call.1 += 1;
                }
                if index[w] == UNSEEN {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(u, _)) = calls.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut group = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    group.push(w);
                    if w == v {
                        break;
                    }
                }
                groups.push(group);
            }
        }
    }
    groups
}

/// An instance in a class, and the triples that say so.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct TypeFact<T> {
    instance: T,
    class: T,
    evidence: Vec<[T; 3]>,
}

/// What the instance tiers gather from the quads.
#[derive(Debug, Default)]
struct Facts<T> {
    types: Vec<TypeFact<T>>,
    /// `(s, p, o)` of functional properties.
    values: Vec<[T; 3]>,
}

/// Which quads feed the instance facts, by predicate.
struct Feeds {
    rdf_type: TermId,
    relevant: BTreeSet<TermId>,
    domain: BTreeMap<TermId, Vec<TermId>>,
    range: BTreeMap<TermId, Vec<TermId>>,
    functional: BTreeSet<TermId>,
    vocabulary: Vocabulary<TermId>,
}

impl Feeds {
    fn new(analysis: &Analysis<'_, TermId>) -> Self {
        Self {
            rdf_type: analysis.vocabulary.rdf_type,
            relevant: analysis.relevant.clone(),
            domain: analysis.typing_properties(&analysis.schema.domain),
            range: analysis.typing_properties(&analysis.schema.range),
            functional: analysis.schema.functional.iter().copied().collect(),
            vocabulary: analysis.vocabulary.clone(),
        }
    }

    /// The facts one quad gives.
    fn quad(&self, [s, p, o, _]: [TermId; 4], facts: &mut Facts<TermId>) {
        if p == self.rdf_type && self.relevant.contains(&o) {
            facts.types.push(TypeFact { instance: s, class: o, evidence: vec![[s, p, o]] });
        }
        for &class in self.domain.get(&p).into_iter().flatten() {
            facts.types.push(TypeFact { instance: s, class, evidence: vec![[s, p, o], [p, self.vocabulary.domain, class]] });
        }
        for &class in self.range.get(&p).into_iter().flatten() {
            facts.types.push(TypeFact { instance: o, class, evidence: vec![[s, p, o], [p, self.vocabulary.range, class]] });
        }
        if self.functional.contains(&p) {
            facts.values.push([s, p, o]);
        }
    }

    /// Tier 1: the patterns that hold every quad [`Feeds::quad`] uses.
    fn patterns(&self) -> Vec<QuadPattern> {
        let any = |subject, predicate, object| QuadPattern { subject, predicate, object, graph: GraphFilter::Any };
        let mut patterns: Vec<QuadPattern> = self.relevant.iter().map(|&class| any(None, Some(self.rdf_type), Some(class))).collect();
        let properties: BTreeSet<TermId> = self.domain.keys().chain(self.range.keys()).chain(&self.functional).copied().collect();
        patterns.extend(properties.into_iter().map(|p| any(None, Some(p), None)));
        patterns
    }
}

/// The quads of a pattern, or `Ok(None)` when a block was missing (the
/// scan has asked for it and for the blocks after it).
fn scan<S: RangeSource>(store: &Store<S>, pattern: QuadPattern) -> Result<Option<Vec<[TermId; 4]>>, ReadError> {
    collect_or_missing(store.quads(pattern))
}

/// What a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Findings, lower tiers' first.
    pub findings: Vec<Finding<Term>>,
    /// Whether the schema came from the AXIOMS section (else from the quads).
    pub from_section: bool,
}

/// The coherence check (a [`Machine`]).
pub struct Check {
    tier: Tier,
    phase: Phase,
}

enum Phase {
    /// The axiom sections the tier needs, when the file has them.
    Axioms,
    /// Tier 0 over the section's IRIs; tier 1 resolves them to ids first.
    Section(SchemaAxioms<String>),
    /// The schema from the quads.
    ReadSchema,
    /// Instance facts, by patterns (tier 1) or by a scan of every quad (tier 2).
    Facts { schema: SchemaAxioms<TermId>, vocabulary: Vocabulary<TermId>, scan: WholeScan, from_section: bool },
    Decode { findings: Vec<Finding<TermId>>, from_section: bool },
    Done,
}

impl Check {
    /// A check of `tier`. Tiers 0 and 1 read the schema from the axiom
    /// sections (`Store::axioms`) when the file has them, tier 2 and files
    /// without them from the quads.
    pub fn new(tier: Tier) -> Self {
        let phase = if tier < Tier::WholeGraph { Phase::Axioms } else { Phase::ReadSchema };
        Self { tier, phase }
    }
}

impl Machine for Check {
    type Output = Report;

    fn step<S: RangeSource>(&mut self, store: &Store<S>) -> Result<Option<Report>, ReadError> {
        loop {
            match &mut self.phase {
                Phase::Axioms => {
                    self.phase = match store.axioms(self.tier >= Tier::Selective) {
                        Err(ReadError::Missing(_)) => return Ok(None),
                        result => result?.map_or(Phase::ReadSchema, Phase::Section),
                    };
                }
                Phase::Section(schema) if self.tier == Tier::Schema => {
                    let vocabulary = Vocabulary::iris();
                    let findings = Analysis::new(schema, &vocabulary).schema_findings();
                    let iri = |t: &String| Term::from(NamedNode::new_unchecked(t.clone()));
                    let findings = findings.iter().map(|f| Finding { kind: f.kind, subject: iri(&f.subject), evidence: f.evidence.iter().map(|t| [iri(&t[0]), iri(&t[1]), iri(&t[2])]).collect() }).collect();
                    self.phase = Phase::Done;
                    return Ok(Some(Report { findings, from_section: true }));
                }
                Phase::Section(schema) => {
                    let mut iris: Vec<String> = schema.terms().cloned().collect();
                    iris.extend(Vocabulary::iris().list().into_iter().cloned());
                    iris.sort_unstable();
                    iris.dedup();
                    let terms: Vec<Term> = iris.iter().map(|i| Term::from(NamedNode::new_unchecked(i.clone()))).collect();
                    let Some(ids) = term_ids(store, &terms)? else { return Ok(None) };
                    let id_of = |iri: &String| iris.binary_search(iri).ok().and_then(|k| ids[k]);
                    let vocabulary = vocabulary_ids(Vocabulary::iris().list().map(|iri| id_of(iri)));
                    let schema = schema.map(id_of);
                    self.phase = Phase::Facts { schema, vocabulary, scan: WholeScan::default(), from_section: true };
                }
                Phase::ReadSchema => {
                    let Some((schema, vocabulary)) = read_schema(store)? else { return Ok(None) };
                    self.phase = Phase::Facts { schema, vocabulary, scan: WholeScan::default(), from_section: false };
                }
                Phase::Facts { schema, vocabulary, scan: whole, from_section } => {
                    let analysis = Analysis::new(schema, vocabulary);
                    let mut findings = analysis.schema_findings();
                    if self.tier > Tier::Schema {
                        let feeds = Feeds::new(&analysis);
                        // No disjointness and no functional property: no quad can make a finding.
                        let facts = if feeds.relevant.is_empty() && feeds.functional.is_empty() {
                            Some(Facts::default())
                        } else if self.tier == Tier::Selective {
                            selective_facts(store, &feeds)?
                        } else {
                            whole.step(store, &feeds)?
                        };
                        let Some(mut facts) = facts else { return Ok(None) };
                        findings.extend(analysis.instance_findings(&mut facts));
                    }
                    self.phase = Phase::Decode { findings, from_section: *from_section };
                }
                Phase::Decode { findings, from_section } => {
                    let mut ids: Vec<TermId> = findings.iter().flat_map(|f| std::iter::once(f.subject).chain(f.evidence.iter().flatten().copied())).collect();
                    ids.sort_unstable();
                    ids.dedup();
                    let Some(terms) = terms_of(store, &ids)? else { return Ok(None) };
                    let term = |id: &TermId| terms[ids.binary_search(id).unwrap_or(0)].clone();
                    let findings = findings.iter().map(|f| Finding { kind: f.kind, subject: term(&f.subject), evidence: f.evidence.iter().map(|t| [term(&t[0]), term(&t[1]), term(&t[2])]).collect() }).collect();
                    let report = Report { findings, from_section: *from_section };
                    self.phase = Phase::Done;
                    return Ok(Some(report));
                }
                Phase::Done => return Err(ReadError::Source("internal error: check stepped after it finished".into())),
            }
        }
    }
}

/// The vocabulary's ids; a term the dataset lacks gets id 0 (no quad uses it).
fn vocabulary_ids(ids: [Option<TermId>; 7]) -> Vocabulary<TermId> {
    Vocabulary::from_list(ids.map(|id| id.unwrap_or(0)))
}

/// Tier 1: the facts from the patterns the schema points at; re-run from
/// the start each round (the blocks stay pinned until the check ends).
fn selective_facts<S: RangeSource>(store: &Store<S>, feeds: &Feeds) -> Result<Option<Facts<TermId>>, ReadError> {
    let mut facts = Facts::default();
    let mut missed = false;
    for pattern in feeds.patterns() {
        match scan(store, pattern)? {
            Some(quads) => quads.into_iter().for_each(|quad| feeds.quad(quad, &mut facts)),
            None => missed = true,
        }
    }
    Ok((!missed).then_some(facts))
}

/// The schema from the quads: one pattern per axiom predicate, keeping
/// axioms between IRIs (FORMAT.md §13 lists the same ones).
fn read_schema<S: RangeSource>(store: &Store<S>) -> Result<Option<(SchemaAxioms<TermId>, Vocabulary<TermId>)>, ReadError> {
    let iris = Vocabulary::iris();
    let terms: Vec<Term> = iris.list().iter().map(|i| Term::from(NamedNode::new_unchecked((*i).clone()))).collect();
    let (Some(ids), Some(first_non_iri)) = (term_ids(store, &terms)?, first_non_iri_id(store)?) else {
        // Both lookups were tried: their blocks come in one round.
        return Ok(None);
    };
    let vocabulary = vocabulary_ids([ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6]]);
    let is_iri = |id: TermId| id > 0 && id < first_non_iri;
    let pattern = |predicate: TermId, object: Option<TermId>| QuadPattern { subject: None, predicate: Some(predicate), object, graph: GraphFilter::Any };
    let mut missed = false;
    let mut pairs = |predicate: Option<TermId>, reflexive: bool| -> Result<Vec<[TermId; 2]>, ReadError> {
        let Some(predicate) = predicate else { return Ok(Vec::new()) };
        let Some(quads) = scan(store, pattern(predicate, None))? else {
            missed = true;
            return Ok(Vec::new());
        };
        let mut out: Vec<[TermId; 2]> = quads.into_iter().map(|[s, _, o, _]| [s, o]).filter(|&[s, o]| is_iri(s) && is_iri(o) && (reflexive || s != o)).collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    };
    let subclass_of = pairs(ids[1], false)?;
    let equivalent_class = pairs(ids[2], false)?;
    let disjoint_with = pairs(ids[3], true)?;
    let domain = pairs(ids[5], true)?;
    let range = pairs(ids[6], true)?;
    let mut functional = Vec::new();
    if let (Some(rdf_type), Some(functional_property)) = (ids[0], ids[4]) {
        match scan(store, pattern(rdf_type, Some(functional_property)))? {
            Some(quads) => functional = quads.into_iter().map(|[s, ..]| s).filter(|&s| is_iri(s)).collect(),
            None => missed = true,
        }
        functional.sort_unstable();
        functional.dedup();
    }
    if missed {
        return Ok(None);
    }
    Ok(Some((SchemaAxioms { subclass_of, equivalent_class, disjoint_with, functional, domain, range }, vocabulary)))
}

/// The first id that is not an IRI (IRIs sort first, FORMAT.md §5.1), from
/// the dictionary block where blank nodes and literals begin.
fn first_non_iri_id<S: RangeSource>(store: &Store<S>) -> Result<Option<TermId>, ReadError> {
    const AFTER_IRIS: &[u8] = &[0x02];
    let located = match store.dictionary_for_term(AFTER_IRIS) {
        Ok(Some(located)) => located,
        Ok(None) => return Ok(Some(1)),
        Err(ReadError::Missing(_)) => return Ok(None),
        Err(error) => return Err(error),
    };
    match store.block(BlockKey::Dictionary(located.number)) {
        Ok(Block::Dictionary(terms)) => Ok(Some(located.first_item + terms.lower_bound(AFTER_IRIS) as u64)),
        Ok(_) => Err(ReadError::Source("cache returned the wrong block kind".into())),
        Err(ReadError::Missing(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Tier 2's scan of every quad (SPO), resumable: each round fetches a batch
/// of the next blocks (growing with what was read, as a scan's read-ahead),
/// and blocks done are released.
#[derive(Debug, Default)]
struct WholeScan {
    next_block: usize,
    read_bytes: u64,
    facts: Facts<TermId>,
}

/// Bytes of blocks the whole-graph scan asks for in its first round…
const SCAN_FIRST_BYTES: u64 = 256 << 10;
/// … and at most in any round (it doubles in between).
const SCAN_MAX_BYTES: u64 = 8 << 20;

impl WholeScan {
    fn step<S: RangeSource>(&mut self, store: &Store<S>, feeds: &Feeds) -> Result<Option<Facts<TermId>>, ReadError> {
        let blocks = store.block_count(Directory::Permutation(Permutation::Spo));
        while self.next_block < blocks {
            let key = BlockKey::Permutation(Permutation::Spo, self.next_block);
            if !store.has_block(key) {
                // Ask for the batch from here on; the first read counts the miss.
                let budget = self.read_bytes.clamp(SCAN_FIRST_BYTES, SCAN_MAX_BYTES);
                let mut bytes = 0;
                for number in self.next_block..blocks {
                    let ahead = BlockKey::Permutation(Permutation::Spo, number);
                    bytes += store.block_range(ahead).map_or(0, |r| r.length);
                    if number > self.next_block && bytes > budget {
                        break;
                    }
                    store.want(ahead);
                }
            }
            let keys = match store.permutation_block(Permutation::Spo, self.next_block) {
                Ok(keys) => keys,
                Err(ReadError::Missing(_)) => return Ok(None),
                Err(error) => return Err(error),
            };
            for key in keys.iter() {
                feeds.quad(key, &mut self.facts);
            }
            self.read_bytes += store.block_range(key).map_or(0, |r| r.length);
            self.next_block += 1;
            store.release_fed();
        }
        Ok(Some(std::mem::take(&mut self.facts)))
    }
}
