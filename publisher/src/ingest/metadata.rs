//! The card's descriptive members (title, description, licence, source,
//! publisher, base IRI) from three places, in order of precedence: `rete
//! build` flags, a `card.toml` beside the first input, and the data's own
//! VoID / DCAT / schema.org dataset description. Also the build date, which
//! must not depend on the clock for the output to be reproducible.

use super::readback::Lookup;
use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::Path;

/// Descriptive members of the card; `None` when unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    /// Title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Licence (IRI or name).
    pub license: Option<String>,
    /// Where the data comes from.
    pub source: Option<String>,
    /// Who publishes it.
    pub publisher: Option<String>,
    /// IRI under which the dataset's resources live.
    pub base_iri: Option<String>,
    /// Predicates whose literals the search index takes as labels, besides
    /// the usual ones (`--label-predicate`, key `label_predicates`).
    pub label_predicates: Option<Vec<String>>,
    /// `false` leaves the search index out (`--no-search`, key `search`).
    pub search: Option<bool>,
    /// What a query without `FROM` sees as its default graph (recorded in the
    /// header's `flags`, FORMAT.md §2, not in the card).
    pub default_graph: Option<DefaultGraph>,
}

/// `rete build --default-graph`: the default graph of queries that name no graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DefaultGraph {
    /// The union of every graph, the default graph and each named graph
    /// (Fuseki's `unionDefaultGraph`, Oxigraph's `--union-default-graph`).
    Union,
    /// The quads outside any named graph only, as SPARQL's dataset has it (the default).
    Empty,
}

/// The file name looked for beside the first input.
pub const CARD_TOML: &str = "card.toml";

impl Metadata {
    /// Each member from `self`, else from `fallback`.
    pub fn or(self, fallback: Metadata) -> Metadata {
        Metadata {
            title: self.title.or(fallback.title),
            description: self.description.or(fallback.description),
            license: self.license.or(fallback.license),
            source: self.source.or(fallback.source),
            publisher: self.publisher.or(fallback.publisher),
            base_iri: self.base_iri.or(fallback.base_iri),
            // Label predicates add up: the flags' and card.toml's are all indexed.
            label_predicates: match (self.label_predicates, fallback.label_predicates) {
                (Some(mut mine), Some(theirs)) => {
                    mine.extend(theirs);
                    Some(mine)
                }
                (mine, theirs) => mine.or(theirs),
            },
            search: self.search.or(fallback.search),
            default_graph: self.default_graph.or(fallback.default_graph),
        }
    }

    /// Reads `card.toml` in `dir`, if there is one. Errors name the file, the line and the key.
    pub fn from_card_toml(dir: &Path) -> Result<Metadata> {
        let path = dir.join(CARD_TOML);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Metadata::default()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        toml::from_str(&text).map_err(|e| {
            let line = e.span().map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
            let at = line.map(|l| format!(" line {l}")).unwrap_or_default();
            anyhow::anyhow!("{}{at}: {} (known keys: title, description, license, source, publisher, base_iri, label_predicates, search, default_graph)", path.display(), e.message())
        })
    }

    /// The data's own description: the first `void:Dataset`, `dcat:Dataset`
    /// or `schema:Dataset` (in that order) and its Dublin Core / schema.org members.
    pub fn from_data(lookup: &mut Lookup) -> Result<Metadata> {
        let Some(dataset) = lookup.first_instance(&["http://rdfs.org/ns/void#Dataset", "http://www.w3.org/ns/dcat#Dataset", "http://schema.org/Dataset"])? else {
            return Ok(Metadata::default());
        };
        const DCT: &str = "http://purl.org/dc/terms/";
        const SCHEMA: &str = "http://schema.org/";
        let mut value = |names: &[&str], also: &[&str]| -> Result<Option<String>> {
            let iris: Vec<String> = names.iter().flat_map(|name| [format!("{DCT}{name}"), format!("{SCHEMA}{name}")]).collect();
            let iris: Vec<&str> = iris.iter().map(String::as_str).chain(also.iter().copied()).collect();
            lookup.value(dataset, &iris)
        };
        Ok(Metadata {
            title: value(&["title"], &["http://purl.org/dc/elements/1.1/title", "http://schema.org/name"])?,
            description: value(&["description"], &[])?,
            license: value(&["license"], &[])?,
            source: value(&["source"], &[])?,
            publisher: value(&["publisher"], &[])?,
            base_iri: None,
            label_predicates: None,
            search: None,
            default_graph: None,
        })
    }
}

/// The build date in RFC 3339: `SOURCE_DATE_EPOCH` (seconds) when set, else
/// the newest input's modification time, else none (stdin only).
pub fn built_at(inputs: &[&Path]) -> Result<Option<String>> {
    let seconds = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => Some(text.trim().parse::<i64>().with_context(|| format!("SOURCE_DATE_EPOCH={text:?} is not a number of seconds"))?),
        Err(_) => inputs
            .iter()
            .filter_map(|path| std::fs::metadata(path).ok()?.modified().ok())
            .max()
            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs() as i64),
    };
    Ok(seconds.and_then(|s| chrono::DateTime::from_timestamp(s, 0)).map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_toml_errors_name_file_line_and_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CARD_TOML), "title = \"T\"\n\nlicence = \"x\"\n").unwrap();
        let message = format!("{:#}", Metadata::from_card_toml(dir.path()).unwrap_err());
        assert!(message.contains("card.toml line 3"), "{message}");
        assert!(message.contains("licence"), "{message}");
        std::fs::write(dir.path().join(CARD_TOML), "title = \"T\"\nlicense = \"CC0\"\n").unwrap();
        let metadata = Metadata::from_card_toml(dir.path()).unwrap();
        assert_eq!((metadata.title.as_deref(), metadata.license.as_deref()), (Some("T"), Some("CC0")));
    }

    #[test]
    fn flags_win() {
        let flags = Metadata { title: Some("flag".into()), ..Metadata::default() };
        let file = Metadata { title: Some("file".into()), license: Some("CC0".into()), ..Metadata::default() };
        let merged = flags.or(file);
        assert_eq!((merged.title.as_deref(), merged.license.as_deref()), (Some("flag"), Some("CC0")));
    }
}
