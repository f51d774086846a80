//! The SUMMARY section (FORMAT.md §10): "overview first, drill down later".
//! A schema level (classes, subclass pairs, class→class link counts) and a
//! few community levels, each capped, as one zstd frame of JSON so the edge
//! serves it with no translation. The members of each community live in the
//! MEMBERS section (FORMAT.md §11), read a page at a time.

use crate::{FormatError, TermId};
use crate::format::varint;
use serde::{Deserialize, Serialize};

/// FORMAT.md §10: the largest SUMMARY section.
pub const MAX_SUMMARY_BYTES: u64 = 256 * 1024;
/// FORMAT.md §10: community levels kept (the coarsest ones).
pub const MAX_LEVELS: usize = 4;
/// FORMAT.md §10: super-nodes kept per level (the largest).
pub const MAX_LEVEL_NODES: usize = 256;
/// FORMAT.md §10: super-edges kept per level (the heaviest).
pub const MAX_LEVEL_EDGES: usize = 1024;
/// FORMAT.md §10: schema list caps (classes, subclass pairs, links).
pub const MAX_SCHEMA_ITEMS: usize = 1000;
/// FORMAT.md §11: member ids per page.
pub const MEMBERS_PAGE_TERMS: usize = 100;

/// The decoded SUMMARY section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The schema level.
    pub schema: Schema,
    /// Community levels, coarsest first; empty when built with `--no-pyramid`
    /// or when the community graph did not fit the memory budget.
    pub levels: Vec<Level>,
    /// Why `levels` is empty or cut, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Members this build does not know.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Classes, the subclass hierarchy and class→class links: bounded by the ontology.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    /// Classes by instance count.
    pub classes: Vec<SchemaClass>,
    /// Classes left out.
    #[serde(default)]
    pub classes_more: u64,
    /// `rdfs:subClassOf` pairs between IRIs.
    pub subclass_of: Vec<SubClassOf>,
    /// Pairs left out.
    #[serde(default)]
    pub subclass_of_more: u64,
    /// Links between instances, counted by (class of subject, predicate, class of object).
    pub links: Vec<ClassLink>,
    /// Link kinds left out.
    #[serde(default)]
    pub links_more: u64,
}

/// A class of the schema level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaClass {
    /// Class IRI.
    pub iri: String,
    /// Its label in the data, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Distinct (subject, graph) pairs typed with it.
    pub instances: u64,
}

/// `sub rdfs:subClassOf super`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubClassOf {
    /// The subclass.
    pub sub: String,
    /// The superclass.
    #[serde(rename = "super")]
    pub superclass: String,
}

/// How many quads link an instance of `from` to an instance of `to` with `predicate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassLink {
    /// Class of the subject.
    pub from: String,
    /// The predicate.
    pub predicate: String,
    /// Class of the object.
    pub to: String,
    /// Quads (an instance of several classes counts for each).
    pub count: u64,
}

/// One level of communities.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    /// Communities at this level (all, including those left out).
    pub communities: u64,
    /// Super-nodes kept, largest first.
    pub nodes: Vec<Node>,
    /// Super-edges between kept nodes, heaviest first.
    pub edges: Vec<Edge>,
    /// Super-edges left out (between kept nodes beyond the cap, or touching a node left out).
    #[serde(default)]
    pub edges_more: u64,
}

/// What an overview of the SUMMARY section needs (the Worker's
/// `/{ds}/summary`): the schema level, the note and each community level's
/// counts. Its nodes and edges are counted, not decoded, and members this
/// build does not know are skipped, not kept: a new isolate's first request
/// for the overview parses a third of what [`Summary`] would build.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Overview {
    /// The schema level.
    pub schema: Schema,
    /// Community levels, coarsest first.
    pub levels: Vec<LevelCounts>,
    /// Why `levels` is empty or cut, when it is.
    #[serde(default)]
    pub note: Option<String>,
}

/// A community level's counts ([`Level`] without its lists).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct LevelCounts {
    /// Communities at this level (all, including those left out).
    pub communities: u64,
    /// Super-nodes kept.
    #[serde(deserialize_with = "count")]
    pub nodes: usize,
    /// Super-edges kept.
    #[serde(deserialize_with = "count")]
    pub edges: usize,
}

/// The length of a JSON list, its items skipped.
fn count<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    struct Count;
    impl<'de> serde::de::Visitor<'de> for Count {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut items = 0;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                items += 1;
            }
            Ok(items)
        }
    }
    deserializer.deserialize_seq(Count)
}

/// A community.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// Its number in this level (0-based, in the order of `nodes`).
    pub id: u32,
    /// Entities in it.
    pub size: u64,
    /// Label of its most central member (its label in the data, else the IRI's local name).
    pub label: String,
    /// IRI of its most central member (highest link degree, ties by term order).
    pub iri: String,
    /// Node of the previous (coarser) level that contains it, when that node was kept.
    #[serde(default)]
    pub parent: Option<u32>,
    /// Where its member pages are in the MEMBERS section.
    pub members: MemberPages,
}

/// A node's members: a directory block at `offset` (relative to the MEMBERS
/// section) listing the lengths of `pages` pages that follow it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberPages {
    /// Offset of the directory block from the start of the MEMBERS section.
    pub offset: u64,
    /// Length of the directory block.
    pub directory_bytes: u64,
    /// Number of pages.
    pub pages: u64,
}

/// A weighted link between two communities (undirected, `source < target`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// Node id.
    pub source: u32,
    /// Node id.
    pub target: u32,
    /// Entity-to-entity quads between the two.
    pub weight: u64,
}

/// Encodes a member page directory (FORMAT.md §11, before sealing).
#[cfg(feature = "write")]
pub fn encode_directory(page_lengths: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    varint::put(&mut out, page_lengths.len() as u64);
    for &length in page_lengths {
        varint::put(&mut out, length);
    }
    out
}

/// Decodes a member page directory into each page's offset (relative to the
/// end of the directory) and length.
pub fn decode_directory(raw: &[u8], offset: u64) -> Result<Vec<(u64, u64)>, FormatError> {
    let corrupt = |e: varint::CursorError| FormatError::corrupt("MEMBERS directory", offset + e.position as u64, e.reason.to_owned());
    let mut cursor = varint::Cursor::new(raw);
    let count = cursor.count(1).map_err(corrupt)?;
    let mut pages = Vec::with_capacity(count);
    let mut start = 0u64;
    for _ in 0..count {
        let length = cursor.varint().map_err(corrupt)?;
        pages.push((start, length));
        start = start.saturating_add(length);
    }
    Ok(pages)
}

/// Encodes a member page (FORMAT.md §11, before sealing): ids ascending.
#[cfg(feature = "write")]
pub fn encode_page(ids: &[TermId]) -> Vec<u8> {
    let mut out = Vec::new();
    varint::put(&mut out, ids.len() as u64);
    let mut previous = 0;
    for &id in ids {
        varint::put(&mut out, id - previous);
        previous = id;
    }
    out
}

/// Decodes a member page into term ids.
pub fn decode_page(raw: &[u8], offset: u64) -> Result<Vec<TermId>, FormatError> {
    let corrupt = |e: varint::CursorError| FormatError::corrupt("MEMBERS page", offset + e.position as u64, e.reason.to_owned());
    let mut cursor = varint::Cursor::new(raw);
    let count = cursor.count(1).map_err(corrupt)?;
    let mut ids = Vec::with_capacity(count);
    let mut id: TermId = 0;
    for _ in 0..count {
        id = id.saturating_add(cursor.varint().map_err(corrupt)?);
        ids.push(id);
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_round_trips() {
        let raw = encode_directory(&[10, 300, 7]);
        assert_eq!(decode_directory(&raw, 0).unwrap(), vec![(0, 10), (10, 300), (310, 7)]);
        assert!(decode_directory(&raw[..2], 0).is_err());
        assert!(decode_directory(&[100, 1], 0).is_err());
    }

    #[test]
    fn page_round_trips() {
        // FORMAT.md §11's example.
        assert_eq!(encode_page(&[3, 4, 900]), [3, 3, 1, 0x80, 7]);
        let raw = encode_page(&[3, 4, 900, 1 << 40]);
        assert_eq!(decode_page(&raw, 0).unwrap(), vec![3, 4, 900, 1 << 40]);
        assert!(decode_page(&raw[..3], 0).is_err());
    }

    #[test]
    fn summary_json_uses_the_contract_names() {
        let summary = Summary {
            schema: Schema { subclass_of: vec![SubClassOf { sub: "a".into(), superclass: "b".into() }], ..Schema::default() },
            ..Summary::default()
        };
        let json = serde_json::to_value(&summary).unwrap();
        assert_eq!(json["schema"]["subclass_of"][0]["super"], "b");
        assert_eq!(serde_json::from_value::<Summary>(json).unwrap(), summary);
    }

    #[test]
    fn overview_counts_what_summary_decodes() {
        let node = |id| Node { id, size: 3, label: "n".into(), iri: "http://x/n".into(), parent: None, members: MemberPages::default() };
        let level = |nodes: u32, edges: usize| Level {
            communities: u64::from(nodes) + 5,
            nodes: (0..nodes).map(node).collect(),
            edges: vec![Edge { source: 0, target: 1, weight: 2 }; edges],
            edges_more: 1,
        };
        let summary = Summary {
            schema: Schema { classes: vec![SchemaClass { iri: "http://x/C".into(), label: None, instances: 4 }], classes_more: 2, ..Schema::default() },
            levels: vec![level(2, 1), level(0, 0), level(7, 12)],
            note: Some("cut".into()),
            extra: [("later".to_owned(), serde_json::json!({"a": [1, 2]}))].into_iter().collect(),
        };
        let text = serde_json::to_vec(&summary).unwrap();
        let overview: Overview = serde_json::from_slice(&text).unwrap();
        assert_eq!(overview.schema, summary.schema);
        assert_eq!(overview.note, summary.note);
        let counts: Vec<_> = overview.levels.iter().map(|l| (l.communities, l.nodes, l.edges)).collect();
        assert_eq!(counts, summary.levels.iter().map(|l| (l.communities, l.nodes.len(), l.edges.len())).collect::<Vec<_>>());
        // A level whose nodes are not a list is refused, as Summary refuses it.
        assert!(serde_json::from_str::<Overview>(r#"{"schema": {"classes": [], "subclass_of": [], "links": []}, "levels": [{"communities": 1, "nodes": 3, "edges": []}]}"#).is_err());
    }
}
