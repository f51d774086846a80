//! `rete inspect`: what a file holds, from its header, INDEX, CARD and SUMMARY only.

use crate::source::file::FileSource;
use anyhow::Result;
use rete_core::Store;
use serde_json::json;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Prints the header, sections and counts, as text or JSON.
pub fn run(path: &Path, as_json: bool) -> Result<()> {
    let store = super::open(path)?;
    let report = describe(&store)?;
    let mut text = String::new();
    if as_json {
        writeln!(text, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        describe_text(&store, path, &mut text)?;
    }
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(())
}

fn describe_text(store: &Store<FileSource>, path: &Path, text: &mut String) -> Result<()> {
    let header = store.header();
    writeln!(text, "{}", path.display())?;
    writeln!(text, "  format        {}.{}", header.major_version, header.minor_version)?;
    writeln!(text, "  content hash  {}", header.content_hash_hex())?;
    writeln!(text, "  size          {} bytes", header.file_length)?;
    writeln!(text, "  quads         {}", header.quad_count)?;
    writeln!(text, "  terms         {}", header.term_count)?;
    writeln!(text, "  named graphs  {}", header.graph_count)?;
    writeln!(text, "  sections")?;
    for section in &header.sections {
        let blocks = if section.item_count > 0 { format!("{:>8} blocks", section.item_count) } else { String::new() };
        writeln!(text, "    {:<18} {:>12} bytes at {:>10} {blocks}", section.kind.name(), section.length, section.offset)?;
    }
    let card = store.card()?;
    if let Some(title) = &card.title {
        writeln!(text, "  title         {title}")?;
    }
    match store.summary()? {
        Some(summary) => {
            let levels: Vec<String> = summary.levels.iter().map(|l| format!("{} of {} communities", l.nodes.len(), l.communities)).collect();
            let schema = &summary.schema;
            writeln!(text, "  summary       {} classes, {} subclass pairs, {} class links", schema.classes.len(), schema.subclass_of.len(), schema.links.len())?;
            writeln!(text, "  communities   {}", if levels.is_empty() { "none".into() } else { levels.join(", ") })?;
            if let Some(note) = &summary.note {
                writeln!(text, "                {note}")?;
            }
        }
        None => writeln!(text, "  summary       none")?,
    }
    writeln!(text, "  top predicates")?;
    for predicate in card.predicates.iter().take(10) {
        writeln!(text, "    {:>10}  {}", predicate.quads, predicate.iri)?;
    }
    if !card.classes.is_empty() {
        writeln!(text, "  top classes")?;
        for class in card.classes.iter().take(10) {
            writeln!(text, "    {:>10}  {}", class.instances, class.iri)?;
        }
    }
    Ok(())
}

/// The JSON form of `inspect`.
pub fn describe(store: &Store<FileSource>) -> Result<serde_json::Value> {
    let header = store.header();
    let sections: Vec<_> = header
        .sections
        .iter()
        .map(|s| json!({"kind": s.kind.name(), "offset": s.offset, "length": s.length, "blocks": s.item_count, "checksum": format!("{:016x}", s.checksum)}))
        .collect();
    Ok(json!({
        "format_version": format!("{}.{}", header.major_version, header.minor_version),
        "content_hash": header.content_hash_hex(),
        "file_bytes": header.file_length,
        "quads": header.quad_count,
        "terms": header.term_count,
        "graphs": header.graph_count,
        "sections": sections,
        "card": store.card()?,
        "summary": store.summary()?,
    }))
}
