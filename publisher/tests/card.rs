//! The CARD and SUMMARY sections as `rete build` writes them (issue 7): what
//! they hold, that the card always fits its 32 KiB bound, where the card's
//! descriptive members come from, and that reading either takes at most two
//! range reads (the open's first 16 KiB, then the section) whatever the size.

use rete_core::format::header::SectionKind;
use rete_core::{ByteRange, RangeSource, ReadError, Store};
use rete_publisher::ingest::build::{BuildOptions, build};
use rete_publisher::ingest::input::Input;
use rete_publisher::ingest::metadata::Metadata;
use std::cell::Cell;
use std::fmt::Write as _;
use std::path::Path;

fn build_file(input: &Path, metadata: Metadata, pyramid: bool) -> anyhow::Result<Vec<u8>> {
    let output = input.with_extension("rete");
    build(&BuildOptions { inputs: vec![Input::new(input, None)?], output: output.clone(), memory_bytes: 64 << 20, lenient: false, temp_dir: None, progress: false, metadata, pyramid, blocks: Default::default() })?;
    Ok(std::fs::read(output)?)
}

/// Reads of an in-memory file, counted.
struct Counting<'a> {
    file: &'a [u8],
    reads: Cell<usize>,
}

impl RangeSource for Counting<'_> {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>, ReadError> {
        self.reads.set(self.reads.get() + ranges.len());
        self.file.read_ranges(ranges)
    }
}

/// 3,000 predicates with long IRIs (more than a card can hold) and 40
/// clusters of 25 entities linked in rings, with a bridge between clusters.
fn wide_and_clustered(dir: &Path) -> std::path::PathBuf {
    let mut text = String::new();
    for i in 0..3000 {
        // Names that compress badly, so the card must shrink and the summary lands past 16 KiB.
        let name = (0..4).map(|k| format!("{:08x}", (i as u64 * 2_654_435_761 + k * 40_503) % 4_294_967_291)).collect::<String>();
        let _ = writeln!(text, "<http://example.org/e{}> <http://example.org/p/{name}> \"{i}\" .", i % 1000);
    }
    for cluster in 0..40 {
        for member in 0..25 {
            let e = |m: usize| format!("<http://example.org/c{cluster}/m{m}>");
            let _ = writeln!(text, "{} <http://example.org/link> {} .", e(member), e((member + 1) % 25));
            let _ = writeln!(text, "{} <http://example.org/link> {} .", e(member), e((member + 7) % 25));
            let _ = writeln!(text, "{} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Member> .", e(member));
        }
        let _ = writeln!(text, "<http://example.org/c{cluster}/m0> <http://example.org/next> <http://example.org/c{}/m0> .", (cluster + 1) % 40);
    }
    let path = dir.join("wide.nt");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn card_shrinks_to_fit_and_counts_what_it_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = build_file(&wide_and_clustered(dir.path()), Metadata::default(), true).unwrap();
    let store = Store::open(bytes.as_slice(), 1 << 20).unwrap();
    let section = *store.header().section(SectionKind::Card).unwrap();
    assert!(section.length <= 32 * 1024, "card section is {} bytes", section.length);
    let card = store.card().unwrap();
    assert!(card.predicates.len() < 3003, "the list was cut");
    assert_eq!(card.predicates.len() as u64 + card.predicates_more, 3003);
    assert_eq!(card.classes[0].iri, "http://example.org/Member");
    assert_eq!(card.classes[0].examples, ["http://example.org/c0/m0", "http://example.org/c0/m1", "http://example.org/c0/m10"]);
    assert_eq!(card.subjects, 2000);
}

#[test]
fn card_and_summary_each_take_at_most_two_reads() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = build_file(&wide_and_clustered(dir.path()), Metadata::default(), true).unwrap();
    let first_read = 16384;
    for (kind, read) in [(SectionKind::Card, 0), (SectionKind::Summary, 1)] {
        let source = Counting { file: &bytes, reads: Cell::new(0) };
        let store = Store::open(&source, 1 << 20).unwrap();
        let section = *store.header().section(kind).unwrap();
        if read == 0 {
            store.card().unwrap();
        } else {
            store.summary().unwrap().unwrap();
        }
        // The open, then the section, unless it is the card and the open's
        // 16 KiB held it (Store keeps that card; the Worker keeps the whole
        // first read: one read).
        let reads = if kind == SectionKind::Card && section.offset + section.length <= first_read { 1 } else { 2 };
        assert_eq!(source.reads.get(), reads, "{} at {}+{}", kind.name(), section.offset, section.length);
    }
    // This file's summary lies past the first read: the bound above was exercised.
    let store = Store::open(bytes.as_slice(), 1 << 20).unwrap();
    let summary = *store.header().section(SectionKind::Summary).unwrap();
    assert!(summary.offset + summary.length > first_read);
}

#[test]
fn communities_and_their_member_pages() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = build_file(&wide_and_clustered(dir.path()), Metadata::default(), true).unwrap();
    let store = Store::open(bytes.as_slice(), 1 << 20).unwrap();
    let summary = store.summary().unwrap().unwrap();
    let coarsest = &summary.levels[0];
    // Louvain may merge neighbouring rings, never split one.
    assert!(coarsest.nodes.len() <= 40 && coarsest.nodes.len() >= 10, "{} communities", coarsest.nodes.len());
    assert_eq!(coarsest.nodes.iter().map(|n| n.size).sum::<u64>(), 1000);
    let mut seen = std::collections::BTreeSet::new();
    for node in &coarsest.nodes {
        let mut members = Vec::new();
        for page in 0..node.members.pages {
            members.extend(store.member_page(&node.members, page).unwrap());
        }
        assert_eq!(members.len() as u64, node.size);
        let iris: Vec<String> = members.iter().map(|&id| store.term(id).unwrap().to_string()).collect();
        assert!(iris.contains(&format!("<{}>", node.iri)), "the central member is a member");
        let cluster = |iri: &str| iri.split('/').nth(3).map(str::to_owned);
        let clusters: std::collections::BTreeSet<_> = iris.iter().map(|iri| cluster(iri.trim_matches(['<', '>']))).collect();
        assert_eq!(clusters.len() as u64 * 25, node.size, "whole rings only");
        seen.extend(members);
    }
    assert_eq!(seen.len(), 1000, "every entity in exactly one community");
    let links: Vec<_> = summary.schema.links.iter().map(|l| (l.from.as_str(), l.predicate.as_str(), l.to.as_str(), l.count)).collect();
    assert_eq!(links, [("http://example.org/Member", "http://example.org/link", "http://example.org/Member", 2000), ("http://example.org/Member", "http://example.org/next", "http://example.org/Member", 40)]);
}

#[test]
fn no_pyramid_leaves_the_community_levels_out() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = build_file(&wide_and_clustered(dir.path()), Metadata::default(), false).unwrap();
    let store = Store::open(bytes.as_slice(), 1 << 20).unwrap();
    let summary = store.summary().unwrap().unwrap();
    assert!(summary.levels.is_empty());
    assert_eq!(summary.note.as_deref(), Some("community levels not computed (rete build --no-pyramid)"));
    assert!(store.header().section(SectionKind::Members).is_none());
    assert_eq!(summary.schema.classes[0].instances, 1000);
}

#[test]
fn flags_win_over_card_toml_which_wins_over_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("data.ttl");
    std::fs::write(
        &input,
        "@prefix dcat: <http://www.w3.org/ns/dcat#> . @prefix dct: <http://purl.org/dc/terms/> . @prefix ex: <http://example.org/> .\n\
         ex:d a dcat:Dataset ; dct:title \"data title\" ; dct:description \"data description\" ; dct:license <http://example.org/licence> .\n\
         ex:x ex:p \"chat\"@fr .\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("card.toml"), "title = \"toml title\"\ndescription = \"toml description\"\n").unwrap();
    let flags = Metadata { title: Some("flag title".into()), ..Metadata::default() };
    let store_bytes = build_file(&input, flags, true).unwrap();
    let card = Store::open(store_bytes.as_slice(), 1 << 20).unwrap().card().unwrap();
    assert_eq!(card.title.as_deref(), Some("flag title"));
    assert_eq!(card.description.as_deref(), Some("toml description"));
    assert_eq!(card.license.as_deref(), Some("http://example.org/licence"));
    assert_eq!(card.languages[0].tag, "fr");
    assert_eq!(card.namespaces.iter().find(|n| n.iri == "http://example.org/").map(|n| n.prefix.as_str()), Some("ex"));

    std::fs::write(dir.path().join("card.toml"), "title = \"t\"\ntitel = \"typo\"\n").unwrap();
    let error = format!("{:#}", build_file(&input, Metadata::default(), true).unwrap_err());
    assert!(error.contains("card.toml line 2") && error.contains("titel"), "{error}");
}

#[test]
fn build_date_comes_from_source_date_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("one.nt");
    std::fs::write(&input, "<http://example.org/a> <http://example.org/p> <http://example.org/b> .\n").unwrap();
    let output = dir.path().join("one.rete");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_rete")).args(["build", "-q", "-o"]).arg(&output).arg(&input).env("SOURCE_DATE_EPOCH", "0").status().unwrap();
    assert!(status.success());
    let card = Store::open(std::fs::read(&output).unwrap(), 1 << 20).unwrap().card().unwrap();
    assert_eq!(card.built_at.as_deref(), Some("1970-01-01T00:00:00Z"));
}
