//! HTTP content negotiation: which of the formats a route can produce best
//! fits the request's `Accept` header (RFC 9110 §12.5.1), and the formats
//! themselves. Kept apart from the routes so it is tested natively.

use rete_core::results::ResultFormat;

/// What a response can be written as: a result format of the core, or an
/// HTML page for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// A serialization of `rete_core::results`.
    Rdf(ResultFormat),
    /// A page for browsers.
    Html,
    /// Plain JSON (`/` listing, card, summary).
    Json,
}

impl Format {
    /// The media types this format answers to; the first is the one sent.
    pub fn media_types(self) -> &'static [&'static str] {
        match self {
            Self::Html => &["text/html", "application/xhtml+xml"],
            Self::Json => &["application/json"],
            Self::Rdf(format) => match format {
                ResultFormat::Json => &["application/sparql-results+json", "application/json"],
                ResultFormat::Xml => &["application/sparql-results+xml", "application/xml", "text/xml"],
                ResultFormat::Csv => &["text/csv"],
                ResultFormat::Tsv => &["text/tab-separated-values"],
                ResultFormat::NTriples => &["application/n-triples", "text/plain"],
                ResultFormat::Turtle => &["text/turtle", "application/x-turtle"],
                ResultFormat::NQuads => &["application/n-quads"],
                ResultFormat::TriG => &["application/trig"],
                ResultFormat::JsonLd => &["application/ld+json", "application/json"],
                ResultFormat::RdfXml => &["application/rdf+xml", "application/xml", "text/xml"],
                _ => &[],
            },
        }
    }

    /// The `Content-Type` header value.
    pub fn content_type(self) -> String {
        let media_type = self.media_types().first().copied().unwrap_or("application/octet-stream");
        match self {
            // Textual formats are UTF-8 by definition or by rete's choice.
            Self::Rdf(ResultFormat::Csv | ResultFormat::Tsv | ResultFormat::Turtle | ResultFormat::NTriples | ResultFormat::TriG | ResultFormat::NQuads) | Self::Html => {
                format!("{media_type}; charset=utf-8")
            }
            _ => media_type.to_owned(),
        }
    }

    /// Whether the format can write RDF 1.2 triple terms (all but JSON-LD).
    pub fn holds_triple_terms(self) -> bool {
        match self {
            Self::Rdf(format) => format.holds_triple_terms(),
            Self::Html | Self::Json => true,
        }
    }

    /// The short name used by `format=` and in ETags.
    pub fn name(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::Json => "json",
            Self::Rdf(format) => format.name(),
        }
    }
}

/// The formats of SELECT and ASK answers, in the server's order of preference.
pub const SOLUTION_FORMATS: [Format; 5] =
    [Format::Rdf(ResultFormat::Json), Format::Rdf(ResultFormat::Xml), Format::Rdf(ResultFormat::Csv), Format::Rdf(ResultFormat::Tsv), Format::Html];

/// The formats of CONSTRUCT and DESCRIBE answers and of RDF documents.
pub const GRAPH_FORMATS: [Format; 7] = [
    Format::Rdf(ResultFormat::Turtle),
    Format::Rdf(ResultFormat::NTriples),
    Format::Rdf(ResultFormat::JsonLd),
    Format::Rdf(ResultFormat::RdfXml),
    Format::Rdf(ResultFormat::NQuads),
    Format::Rdf(ResultFormat::TriG),
    Format::Html,
];

/// The format a `format=` parameter names among `offers`: a short name
/// (`json`, `ttl`, `html`, …) or a media type. `Err` lists what is possible.
pub fn by_name(name: &str, offers: &[Format]) -> Result<Format, String> {
    let name = name.trim();
    let wanted = if name.contains('/') {
        let essence = name.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        offers.iter().copied().find(|f| f.media_types().contains(&essence.as_str()))
    } else {
        let lower = name.to_ascii_lowercase();
        offers.iter().copied().find(|f| match f {
            Format::Html => lower == "html",
            Format::Json => lower == "json",
            Format::Rdf(format) => ResultFormat::from_name(&lower) == Some(*format),
        })
    };
    wanted.ok_or_else(|| format!("format {name:?} is not available here; use one of {}", offers.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")))
}

/// One media range of an `Accept` header.
#[derive(Debug, Clone, PartialEq)]
struct MediaRange {
    kind: String,
    subtype: String,
    q: f32,
}

fn parse_accept(header: &str) -> Vec<MediaRange> {
    header
        .split(',')
        .filter_map(|item| {
            let mut parts = item.split(';');
            let essence = parts.next()?.trim().to_ascii_lowercase();
            let (kind, subtype) = essence.split_once('/')?;
            let mut q = 1.0;
            for parameter in parts {
                if let Some((key, value)) = parameter.split_once('=') {
                    if key.trim().eq_ignore_ascii_case("q") {
                        q = value.trim().parse::<f32>().ok().filter(|q| q.is_finite()).unwrap_or(0.0).clamp(0.0, 1.0);
                    }
                }
            }
            Some(MediaRange { kind: kind.trim().to_owned(), subtype: subtype.trim().to_owned(), q })
        })
        .collect()
}

/// The best of `offers` for an `Accept` header, `None` when nothing
/// acceptable is offered (406). No header, or an empty one, takes the first
/// offer. Each offer gets the quality of the most specific range matching
/// one of its media types; the highest quality wins, then an explicit match
/// over a wildcard, then a match of the format's own type over an alias
/// (`text/*` is CSV before `text/xml`), then the range listed first, then
/// the server's order.
pub fn negotiate(accept: Option<&str>, offers: &[Format]) -> Option<Format> {
    let ranges = accept.map(parse_accept).unwrap_or_default();
    if ranges.is_empty() {
        return offers.first().copied();
    }
    type Score = (f32, u8, bool, std::cmp::Reverse<usize>, std::cmp::Reverse<usize>);
    let mut best: Option<(Score, Format)> = None;
    for (order, &offer) in offers.iter().enumerate() {
        // (specificity, q, position, canonical) of the most specific range matching a media type of the offer.
        let mut matched: Option<(u8, f32, usize, bool)> = None;
        for (alias, media_type) in offer.media_types().iter().enumerate() {
            let Some((kind, subtype)) = media_type.split_once('/') else { continue };
            for (position, range) in ranges.iter().enumerate() {
                let specificity = match (range.kind.as_str(), range.subtype.as_str()) {
                    (k, s) if k == kind && s == subtype => 3,
                    (k, "*") if k == kind => 2,
                    ("*", "*") => 1,
                    _ => continue,
                };
                let better = match matched {
                    None => true,
                    Some((s, q, p, _)) => specificity > s || (specificity == s && (range.q > q || (range.q == q && position < p))),
                };
                if better {
                    matched = Some((specificity, range.q, position, alias == 0));
                }
            }
        }
        let Some((specificity, q, position, canonical)) = matched else { continue };
        if q <= 0.0 {
            continue;
        }
        let score = (q, specificity, canonical, std::cmp::Reverse(position), std::cmp::Reverse(order));
        if best.as_ref().is_none_or(|(b, _)| score.partial_cmp(b) == Some(std::cmp::Ordering::Greater)) {
            best = Some((score, offer));
        }
    }
    best.map(|(_, offer)| offer)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

    #[test]
    fn no_accept_takes_the_first_offer() {
        assert_eq!(negotiate(None, &SOLUTION_FORMATS), Some(Format::Rdf(ResultFormat::Json)));
        assert_eq!(negotiate(Some(""), &GRAPH_FORMATS), Some(Format::Rdf(ResultFormat::Turtle)));
        assert_eq!(negotiate(Some("*/*"), &GRAPH_FORMATS), Some(Format::Rdf(ResultFormat::Turtle)));
    }

    #[test]
    fn browsers_get_html() {
        assert_eq!(negotiate(Some(BROWSER), &SOLUTION_FORMATS), Some(Format::Html));
        assert_eq!(negotiate(Some(BROWSER), &GRAPH_FORMATS), Some(Format::Html));
    }

    #[test]
    fn long_lists_mixing_solution_and_graph_types() {
        // What Jena/rdflib-style clients send for any query form.
        let accept = "application/sparql-results+xml, application/rdf+xml, application/sparql-results+json;q=0.9, text/turtle;q=0.8";
        assert_eq!(negotiate(Some(accept), &SOLUTION_FORMATS), Some(Format::Rdf(ResultFormat::Xml)));
        assert_eq!(negotiate(Some(accept), &GRAPH_FORMATS), Some(Format::Rdf(ResultFormat::RdfXml)));
        let accept = "application/sparql-results+json, application/n-triples;q=0.5, text/turtle";
        assert_eq!(negotiate(Some(accept), &GRAPH_FORMATS), Some(Format::Rdf(ResultFormat::Turtle)));
    }

    #[test]
    fn ties_go_to_the_range_listed_first() {
        assert_eq!(negotiate(Some("text/csv, application/sparql-results+json"), &SOLUTION_FORMATS), Some(Format::Rdf(ResultFormat::Csv)));
        assert_eq!(negotiate(Some("text/*"), &SOLUTION_FORMATS), Some(Format::Rdf(ResultFormat::Csv)));
    }

    #[test]
    fn explicit_zero_refuses_and_unknown_types_give_none() {
        assert_eq!(negotiate(Some("image/png"), &SOLUTION_FORMATS), None);
        assert_eq!(negotiate(Some("text/turtle"), &SOLUTION_FORMATS), None);
        assert_eq!(negotiate(Some("application/sparql-results+json;q=0, */*;q=0.1"), &SOLUTION_FORMATS), Some(Format::Rdf(ResultFormat::Xml)));
        assert_eq!(negotiate(Some("application/json"), &[Format::Html, Format::Json]), Some(Format::Json));
    }

    #[test]
    fn format_parameter() {
        assert_eq!(by_name("ttl", &GRAPH_FORMATS), Ok(Format::Rdf(ResultFormat::Turtle)));
        assert_eq!(by_name("application/sparql-results+json", &SOLUTION_FORMATS), Ok(Format::Rdf(ResultFormat::Json)));
        assert_eq!(by_name("HTML", &SOLUTION_FORMATS), Ok(Format::Html));
        assert!(by_name("ttl", &SOLUTION_FORMATS).unwrap_err().contains("json, xml, csv, tsv, html"));
    }
}
