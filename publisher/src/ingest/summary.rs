//! The SUMMARY and MEMBERS sections (FORMAT.md §10–11). While `rete build`
//! writes SPO it hands every batch to [`SummaryInputs`], which keeps two
//! temporary files sorted by subject: `rdf:type` pairs and entity-to-entity
//! links. From them come the schema level's class→class link counts (two
//! merge joins through an external sort, so memory stays within `--mem`) and
//! the community levels (Louvain over the links, skipped with a note when the
//! graph would not fit `--mem`, or with `--no-pyramid`).

use super::community::{self, Graph, louvain};
use super::readback::{Lookup, local_name};
use super::sort::{ExternalSorter, RecordReader, RecordWriter, Section, SectionWriter, TempRecords};
use super::stats::Top;
use anyhow::{Context, Result};
use rayon::prelude::*;
use rete_core::TermId;
use rete_core::format::block;
use rete_core::format::permutation::Key;
use rete_core::format::write::SectionSummary;
use rete_core::format::summary::{
    ClassLink, Edge, Level, MAX_LEVEL_EDGES, MAX_LEVEL_NODES, MAX_LEVELS, MAX_SCHEMA_ITEMS, MAX_SUMMARY_BYTES, MEMBERS_PAGE_TERMS, MemberPages, Node, Schema, SchemaClass, SubClassOf, Summary,
    encode_directory, encode_page,
};
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Predicates that describe the schema rather than link entities.
const SCHEMA_PREDICATES: [&str; 6] = [
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
    "http://www.w3.org/2000/01/rdf-schema#subClassOf",
    "http://www.w3.org/2000/01/rdf-schema#subPropertyOf",
    "http://www.w3.org/2000/01/rdf-schema#domain",
    "http://www.w3.org/2000/01/rdf-schema#range",
    "http://www.w3.org/2002/07/owl#equivalentClass",
];

/// Distinct (class, predicate, class) kinds counted before new ones are only tallied.
const MAX_LINK_KINDS: usize = 1 << 20;

/// Type pairs and links gathered from SPO, both sorted by subject.
pub struct SummaryInputs {
    dir: PathBuf,
    rdf_type: Option<TermId>,
    excluded: Vec<TermId>,
    /// Ids below this are IRIs or blank nodes: the entities.
    first_literal_id: TermId,
    types: RecordWriter<2>,
    links: RecordWriter<3>,
    last_type: Option<[TermId; 2]>,
    /// Links written.
    pub link_count: u64,
}

impl SummaryInputs {
    /// Temporary files in `dir`; `vocabulary` gives the ids of the schema predicates.
    pub fn new(dir: &Path, vocabulary: &BTreeMap<&'static str, TermId>, first_literal_id: TermId) -> Result<Self> {
        Ok(Self {
            dir: dir.to_owned(),
            rdf_type: vocabulary.get(SCHEMA_PREDICATES[0]).copied(),
            excluded: SCHEMA_PREDICATES.iter().filter_map(|p| vocabulary.get(p).copied()).collect(),
            first_literal_id,
            types: RecordWriter::new(dir)?,
            links: RecordWriter::new(dir)?,
            last_type: None,
            link_count: 0,
        })
    }

    /// Sees the next SPO keys (in order).
    pub fn spo(&mut self, keys: &[Key]) -> Result<()> {
        for &[s, p, o, _] in keys {
            if Some(p) == self.rdf_type {
                if o < self.first_literal_id && self.last_type != Some([s, o]) {
                    self.types.push(&[s, o])?;
                    self.last_type = Some([s, o]);
                }
            } else if o < self.first_literal_id && s != o && !self.excluded.contains(&p) {
                self.links.push(&[s, p, o])?;
                self.link_count += 1;
            }
        }
        Ok(())
    }
}

/// How the summary is built.
pub struct SummaryOptions {
    /// Compute the community levels.
    pub pyramid: bool,
    /// The build's memory budget.
    pub memory_bytes: usize,
}

/// The sealed SUMMARY section and, with community levels, the MEMBERS section file.
pub struct SummarySections {
    /// The sealed SUMMARY section.
    pub summary: Vec<u8>,
    /// The MEMBERS section, when there are community levels.
    pub members: Option<(Section, SectionSummary)>,
    /// What the summary holds (for the build report and tests).
    pub levels: usize,
}

/// Builds both sections. `classes` are the card's classes (id, instances).
pub fn build(inputs: SummaryInputs, classes: &[(TermId, u64)], first_blank_id: TermId, lookup: &mut Lookup, options: &SummaryOptions) -> Result<SummarySections> {
    let SummaryInputs { dir, types, links, link_count, first_literal_id, .. } = inputs;
    let types = types.finish()?;
    let links = links.finish()?;
    let mut schema = Schema::default();
    for &(id, instances) in classes.iter().take(MAX_SCHEMA_ITEMS) {
        schema.classes.push(SchemaClass { iri: lookup.dictionary.iri(id)?, label: lookup.label(id)?, instances });
    }
    schema.classes_more = classes.len().saturating_sub(MAX_SCHEMA_ITEMS) as u64;
    if let Some(sub_class_of) = lookup.id("http://www.w3.org/2000/01/rdf-schema#subClassOf") {
        let pairs: Vec<Key> = lookup.pso.scan(&[sub_class_of], usize::MAX)?.into_iter().filter(|k| k[1] < first_blank_id && k[2] < first_blank_id && k[1] != k[2]).collect();
        let mut pairs: Vec<[TermId; 2]> = pairs.iter().map(|k| [k[1], k[2]]).collect();
        pairs.dedup();
        schema.subclass_of_more = pairs.len().saturating_sub(MAX_SCHEMA_ITEMS) as u64;
        for [sub, superclass] in pairs.into_iter().take(MAX_SCHEMA_ITEMS) {
            schema.subclass_of.push(SubClassOf { sub: lookup.dictionary.iri(sub)?, superclass: lookup.dictionary.iri(superclass)? });
        }
    }
    let (link_kinds, untallied) = class_links(&dir, &types, &links, options.memory_bytes)?;
    drop(types);
    let mut top = Top::new(MAX_SCHEMA_ITEMS);
    for (kind, count) in link_kinds {
        top.offer(kind, count);
    }
    schema.links_more = top.more + untallied;
    for ([from, predicate, to], count) in top.into_sorted() {
        schema.links.push(ClassLink { from: lookup.dictionary.iri(from)?, predicate: lookup.dictionary.iri(predicate)?, to: lookup.dictionary.iri(to)?, count });
    }

    let mut summary = Summary { schema, ..Summary::default() };
    let mut members = None;
    let entities = first_literal_id.saturating_sub(1);
    let needed = community::estimate_bytes(entities, link_count);
    if !options.pyramid {
        summary.note = Some("community levels not computed (rete build --no-pyramid)".into());
    } else if entities > u64::from(u32::MAX) || needed > options.memory_bytes as u64 {
        let note = format!("community levels skipped: {link_count} links between {entities} entities need about {} MiB, over --mem ({} MiB)", needed >> 20, options.memory_bytes >> 20);
        eprintln!("rete: warning: {note}");
        summary.note = Some(note);
    } else if link_count > 0 {
        let (levels, file) = communities(&dir, entities as usize, &links, lookup)?;
        summary.levels = levels;
        members = Some(file);
    }
    // Keep the section within its bound: drop the finest levels, then halve the schema lists.
    loop {
        let sealed = block::compress(&serde_json::to_vec(&summary)?)?;
        if sealed.len() as u64 <= MAX_SUMMARY_BYTES {
            let levels = summary.levels.len();
            if levels == 0 {
                members = None;
            }
            return Ok(SummarySections { summary: sealed, members, levels });
        }
        if summary.levels.pop().is_some() {
            summary.note = Some(format!("finer community levels left out to keep SUMMARY within {MAX_SUMMARY_BYTES} bytes"));
        } else {
            let schema = &mut summary.schema;
            let cap = schema.classes.len().max(schema.subclass_of.len()).max(schema.links.len()) / 2;
            cut(&mut schema.classes, &mut schema.classes_more, cap);
            cut(&mut schema.subclass_of, &mut schema.subclass_of_more, cap);
            cut(&mut schema.links, &mut schema.links_more, cap);
        }
    }
}

fn cut<T>(list: &mut Vec<T>, more: &mut u64, cap: usize) {
    if list.len() > cap {
        *more += (list.len() - cap) as u64;
        list.truncate(cap);
    }
}

/// Counts links by (class of subject, predicate, class of object): join the
/// links (by subject) with the types, sort by object, join again. Returns the
/// counts and the links of kinds beyond [`MAX_LINK_KINDS`].
fn class_links(dir: &Path, types: &TempRecords<2>, links: &TempRecords<3>, memory_bytes: usize) -> Result<(BTreeMap<[TermId; 3], u64>, u64)> {
    // With the subject, so that two links to one object stay two records.
    let mut by_object = ExternalSorter::<4>::new(dir, memory_bytes / 2, 0);
    let mut type_pairs = TypesOf::new(types.reader()?)?;
    let mut link_reader = links.reader()?;
    while let Some([s, p, o]) = link_reader.next_record()? {
        for &class in type_pairs.of(s)? {
            by_object.push([o, p, class, s])?;
        }
    }
    drop(link_reader);
    let mut sorted = by_object.finish()?;
    let mut type_pairs = TypesOf::new(types.reader()?)?;
    let mut counts: BTreeMap<[TermId; 3], u64> = BTreeMap::new();
    let mut untallied = 0;
    while let Some([o, p, from, _]) = sorted.next_record()? {
        for &to in type_pairs.of(o)? {
            let kinds = counts.len();
            match counts.entry([from, p, to]) {
                Entry::Occupied(mut count) => *count.get_mut() += 1,
                Entry::Vacant(count) if kinds < MAX_LINK_KINDS => _ = count.insert(1),
                Entry::Vacant(_) => untallied += 1,
            }
        }
    }
    Ok((counts, untallied))
}

/// The classes of each entity, read from the sorted type pairs as the entities ascend.
struct TypesOf {
    reader: RecordReader<2>,
    next: Option<[TermId; 2]>,
    entity: TermId,
    classes: Vec<TermId>,
}

impl TypesOf {
    fn new(mut reader: RecordReader<2>) -> Result<Self> {
        let next = reader.next_record()?;
        Ok(Self { reader, next, entity: 0, classes: Vec::new() })
    }

    /// Classes of `entity`; entities must be asked in ascending order.
    fn of(&mut self, entity: TermId) -> Result<&[TermId]> {
        if entity != self.entity {
            self.entity = entity;
            self.classes.clear();
            while let Some([s, class]) = self.next {
                if s > entity {
                    break;
                }
                if s == entity {
                    self.classes.push(class);
                }
                self.next = self.reader.next_record()?;
            }
        }
        Ok(&self.classes)
    }
}

/// Louvain over the links; the coarsest [`MAX_LEVELS`] levels, capped, and
/// the MEMBERS section with every kept node's members.
fn communities(dir: &Path, entities: usize, links: &TempRecords<3>, lookup: &mut Lookup) -> Result<(Vec<Level>, (Section, SectionSummary))> {
    // Node i is the entity with term id i + 1.
    let graph = Graph::from_links(entities, |emit| {
        let mut reader = links.reader()?;
        while let Some([s, _, o]) = reader.next_record()? {
            emit((s - 1) as u32, (o - 1) as u32);
        }
        Ok(())
    })?;
    let degree: Vec<f64> = (0..graph.node_count()).map(|n| graph.row(n).map(|(_, w)| w).sum()).collect();
    let hierarchy = louvain(&graph);
    drop(graph);
    let mut members_file = SectionWriter::new(dir);
    let mut members_hash = xxhash_rust::xxh3::Xxh3::new();
    let mut members_bytes = 0u64;
    let mut levels: Vec<Level> = Vec::new();
    let mut coarser: Option<(usize, Vec<u32>)> = None; // (hierarchy level, community → kept rank)
    for l in (0..hierarchy.levels.len()).rev().take(MAX_LEVELS) {
        let membership = &hierarchy.levels[l];
        let count = hierarchy.counts[l];
        let mut size = vec![0u64; count];
        let mut central: Vec<Option<usize>> = vec![None; count];
        for (node, &c) in membership.iter().enumerate() {
            if degree[node] == 0.0 {
                continue;
            }
            size[c as usize] += 1;
            let best = &mut central[c as usize];
            if best.is_none_or(|b| degree[node] > degree[b]) {
                *best = Some(node);
            }
        }
        let mut order: Vec<u32> = (0..count as u32).filter(|&c| size[c as usize] > 0).collect();
        let communities = order.len() as u64;
        order.sort_by(|&a, &b| size[b as usize].cmp(&size[a as usize]).then(a.cmp(&b)));
        order.truncate(MAX_LEVEL_NODES);
        let mut rank = vec![u32::MAX; count];
        for (r, &c) in order.iter().enumerate() {
            rank[c as usize] = r as u32;
        }
        // Super-edges between kept nodes from the graph of this level's communities.
        let level_graph = &hierarchy.graphs[l];
        let mut all_edges = 0u64;
        let mut edges = Vec::new();
        for c in 0..count {
            for (target, weight) in level_graph.row(c) {
                if (target as usize) <= c {
                    continue;
                }
                all_edges += 1;
                let (a, b) = (rank[c], rank[target as usize]);
                if a != u32::MAX && b != u32::MAX {
                    edges.push(Edge { source: a.min(b), target: a.max(b), weight: weight as u64 });
                }
            }
        }
        edges.sort_by(|x, y| y.weight.cmp(&x.weight).then((x.source, x.target).cmp(&(y.source, y.target))));
        edges.truncate(MAX_LEVEL_EDGES);
        // Members of kept nodes, by node then id, written as pages.
        let mut kept_members: Vec<(u32, u32)> = membership.iter().enumerate().filter(|&(node, &c)| rank[c as usize] != u32::MAX && degree[node] > 0.0).map(|(node, &c)| (rank[c as usize], node as u32)).collect();
        kept_members.sort_unstable();
        let mut nodes = Vec::with_capacity(order.len());
        for (r, &c) in order.iter().enumerate() {
            let start = kept_members.partition_point(|&(k, _)| k < r as u32);
            let end = kept_members.partition_point(|&(k, _)| k <= r as u32);
            let ids: Vec<TermId> = kept_members[start..end].iter().map(|&(_, node)| TermId::from(node) + 1).collect();
            let pages: Vec<Vec<u8>> = ids.par_chunks(MEMBERS_PAGE_TERMS).map(|page| block::seal(&encode_page(page))).collect::<std::io::Result<_>>()?;
            let directory = block::seal(&encode_directory(&pages.iter().map(|p| p.len() as u64).collect::<Vec<_>>()))?;
            let at = MemberPages { offset: members_bytes, directory_bytes: directory.len() as u64, pages: pages.len() as u64 };
            for bytes in std::iter::once(&directory).chain(&pages) {
                members_file.write_all(bytes)?;
                members_hash.update(bytes);
                members_bytes += bytes.len() as u64;
            }
            let center = central[c as usize].context("a kept community has a member")?;
            let id = center as TermId + 1;
            let iri = lookup.dictionary.iri(id)?;
            let label = lookup.label(id)?.unwrap_or_else(|| local_name(&iri));
            let parent = coarser.as_ref().and_then(|(coarser_level, coarser_rank)| {
                let r = coarser_rank[hierarchy.levels[*coarser_level][center] as usize];
                (r != u32::MAX).then_some(r)
            });
            nodes.push(Node { id: r as u32, size: size[c as usize], label, iri, parent, members: at });
        }
        let edges_more = all_edges - edges.len() as u64;
        levels.push(Level { communities, nodes, edges, edges_more });
        coarser = Some((l, rank));
    }
    Ok((levels, (members_file.finish()?, SectionSummary { length: members_bytes, item_count: 0, checksum: members_hash.digest() })))
}
