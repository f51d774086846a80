//! The resource page (`/{ds}/resource?iri=` as HTML): the resource's label
//! and types, then its outgoing and incoming links a page at a time, with
//! links to the previous and next pages and to the RDF forms. Predicates and
//! linked resources are shown by name (label or prefixed name, [`Names`]),
//! the full IRI on hover and in the link. Entirely server-rendered: the page
//! is whole without JavaScript.

use super::layout::{self, Kind};
use super::term::{encode_param, escape, named_term, predicate_link, query_href};
use oxrdf::{Literal, NamedOrBlankNode, Term, Triple};
use rete_core::search::names::Names;
use std::fmt::Write as _;

/// Predicates whose literal names a resource, the preferred first.
const LABELS: [&str; 5] = [
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://www.w3.org/2000/01/rdf-schema#label",
    "http://schema.org/name",
    "http://purl.org/dc/terms/title",
    "http://xmlns.com/foaf/0.1/name",
];
const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// What the page shows.
pub struct View<'a> {
    /// The dataset name.
    pub dataset: &'a str,
    /// The IRI (or document IRI) viewed.
    pub iri: &'a str,
    /// The page number, from 1.
    pub page: u64,
    /// This page's triples, each marked outgoing (`true`) or incoming.
    pub triples: &'a [(Triple, bool)],
    /// This view's URL without `page` (ends in `?` or has a query).
    pub base: &'a str,
    /// `&format=…` to keep on paging links, or empty.
    pub format_param: &'a str,
    /// Whether a next page exists.
    pub more: bool,
    /// How IRIs are shown.
    pub names: &'a Names,
}

/// Whether `iri` is the triple's subject.
fn about(triple: &Triple, iri: &str) -> bool {
    matches!(&triple.subject, NamedOrBlankNode::NamedNode(node) if node.as_str() == iri)
}

/// The label of `iri` among its outgoing triples: by [`LABELS`] order, English or untagged first.
fn label<'t>(iri: &str, triples: &'t [(Triple, bool)]) -> Option<&'t str> {
    LABELS.iter().find_map(|predicate| {
        let literals: Vec<&Literal> = triples
            .iter()
            .filter(|(t, out)| *out && about(t, iri) && t.predicate.as_str() == *predicate)
            .filter_map(|(t, _)| if let Term::Literal(literal) = &t.object { Some(literal) } else { None })
            .collect();
        literals.iter().find(|l| matches!(l.language(), None | Some("en"))).or(literals.first()).map(|l| l.value())
    })
}

impl View<'_> {
    fn page_href(&self, page: u64) -> String {
        let separator = if self.base.ends_with('?') { "" } else { "&" };
        format!("{}{separator}page={page}{}", self.base, self.format_param)
    }

    /// The whole page.
    pub fn html(&self) -> String {
        let name = self.dataset;
        let found = self.names.label(self.iri).map(|l| l.text.as_str());
        let title = label(self.iri, self.triples).or(found).unwrap_or(self.iri);
        let mut out = layout::head(title, Some(name), Kind::Resource);
        let _ = writeln!(out, "<p class=\"iri\"><code>{}</code></p>", escape(self.iri));
        let types: Vec<String> = self.triples.iter().filter(|(t, out)| *out && t.predicate.as_str() == RDF_TYPE).map(|(t, _)| named_term(name, t.object.as_ref(), self.names)).collect();
        if !types.is_empty() {
            let _ = writeln!(out, "<p class=\"types\">Type: {}</p>", types.join(", "));
        }
        let this = format!("/{name}/resource?iri={}", encode_param(self.iri));
        let describe = query_href(name, &format!("DESCRIBE <{}>", self.iri));
        let _ = writeln!(
            out,
            "<p class=\"formats\">As <a href=\"{this}&amp;format=ttl\">Turtle</a> · <a href=\"{this}&amp;format=nt\">N-Triples</a> · <a href=\"{this}&amp;format=jsonld\">JSON-LD</a> · <a href=\"{describe}\">in the query page</a></p>",
            this = escape(&this),
            describe = escape(&describe)
        );

        out.push_str(&super::graph::path_form(name, self.iri));
        let outgoing: Vec<&Triple> = self.triples.iter().filter(|(_, out)| *out).map(|(t, _)| t).collect();
        let incoming: Vec<&Triple> = self.triples.iter().filter(|(_, out)| !*out).map(|(t, _)| t).collect();
        // A hash-IRI document lists several subjects: then the subject gets a column.
        let several = outgoing.iter().any(|t| !about(t, self.iri));
        let _ = write!(out, "<section aria-labelledby=\"out-h\"><h2 id=\"out-h\">Outgoing links ({})</h2>", outgoing.len());
        if outgoing.is_empty() {
            out.push_str("<p>None on this page.</p>");
        } else {
            out.push_str("<div class=\"scroll\"><table class=\"links\"><thead><tr>");
            if several {
                out.push_str("<th scope=\"col\">subject</th>");
            }
            out.push_str("<th scope=\"col\">predicate</th><th scope=\"col\">object</th></tr></thead><tbody>\n");
            for t in &outgoing {
                out.push_str("<tr>");
                if several {
                    let _ = write!(out, "<td>{}</td>", named_term(name, t.subject.as_ref().into(), self.names));
                }
                let _ = writeln!(out, "<td>{}</td><td>{}</td></tr>", predicate_link(name, t.predicate.as_str(), self.names), named_term(name, t.object.as_ref(), self.names));
            }
            out.push_str("</tbody></table></div>");
        }
        out.push_str("</section>\n");
        let _ = write!(out, "<section aria-labelledby=\"in-h\"><h2 id=\"in-h\">Incoming links ({})</h2>", incoming.len());
        if incoming.is_empty() {
            out.push_str("<p>None on this page.</p>");
        } else {
            out.push_str("<div class=\"scroll\"><table class=\"links\"><thead><tr><th scope=\"col\">subject</th><th scope=\"col\">predicate</th></tr></thead><tbody>\n");
            for t in &incoming {
                let _ = writeln!(out, "<tr><td>{}</td><td>{}</td></tr>", named_term(name, t.subject.as_ref().into(), self.names), predicate_link(name, t.predicate.as_str(), self.names));
            }
            out.push_str("</tbody></table></div>");
        }
        out.push_str("</section>\n");

        if self.page > 1 || self.more {
            let _ = write!(out, "<nav class=\"pages\" aria-label=\"pages\">");
            if self.page > 1 {
                let _ = write!(out, "<a rel=\"prev\" href=\"{}\">previous page</a> ", escape(&self.page_href(self.page - 1)));
            }
            let _ = write!(out, "<span>page {}</span>", self.page);
            if self.more {
                let _ = write!(out, " <a rel=\"next\" href=\"{}\">next page</a>", escape(&self.page_href(self.page + 1)));
            }
            out.push_str("</nav>\n");
        }
        out.push_str(layout::FOOT);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::NamedNode;

    fn triple(s: &str, p: &str, o: Term) -> Triple {
        Triple::new(NamedNode::new_unchecked(s), NamedNode::new_unchecked(p), o)
    }

    #[test]
    fn label_types_and_paging() {
        let s = "http://x/kmh";
        let triples = vec![
            (triple(s, LABELS[1], Literal::new_language_tagged_literal_unchecked("Kilometer pro Stunde", "de").into()), true),
            (triple(s, LABELS[1], Literal::new_language_tagged_literal_unchecked("kilometre per hour", "en").into()), true),
            (triple(s, RDF_TYPE, NamedNode::new_unchecked("http://x/Unit").into()), true),
            (triple("http://x/q", "http://x/unit", NamedNode::new_unchecked(s).into()), false),
        ];
        let mut names = Names::new(&[rete_core::format::card::Namespace { prefix: "x".into(), iri: "http://x/".into(), terms: 3 }]);
        names.insert_label("http://x/q", rete_core::search::names::Label { text: "speed".into(), lang: String::new() });
        let view = View { dataset: "ds", iri: s, page: 2, triples: &triples, base: "/ds/resource?iri=x", format_param: "", more: true, names: &names };
        let html = view.html();
        assert!(html.contains("<h1>kilometre per hour</h1>"), "{html}");
        assert!(html.contains("Type: <a class=\"iri named\" href=\"/ds/resource?iri=http%3A%2F%2Fx%2FUnit\" title=\"http://x/Unit\">x:Unit</a>"), "{html}");
        assert!(html.contains(r#"title="http://www.w3.org/2000/01/rdf-schema#label">rdfs:label</a>"#), "{html}");
        assert!(html.contains(r#"title="http://x/q">speed</a></td><td><a class="iri named" href="/ds/resource?iri=http%3A%2F%2Fx%2Funit" title="http://x/unit">x:unit</a>"#), "{html}");
        assert!(html.contains("<span class=\"dt\">@de</span>"));
        assert!(html.contains("rel=\"prev\" href=\"/ds/resource?iri=x&amp;page=1\"") && html.contains("rel=\"next\" href=\"/ds/resource?iri=x&amp;page=3\""), "{html}");
        assert!(html.contains("Incoming links (1)"));
    }
}
