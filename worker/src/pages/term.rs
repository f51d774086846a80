//! The pieces every page is made of: escaping, URLs of the Worker's own
//! views, numbers for people, and RDF terms as table cells whose IRIs link
//! to their resource view, shown by name ([`Names`]: a label or a prefixed
//! name, the full IRI on hover and in the link) where the page knows one.

use oxrdf::TermRef;
use rete_core::search::names::Names;
use std::fmt::Write;

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}

/// [`escape`] onto the end of `out`: the text between special characters
/// is copied a run at a time (a results page escapes every cell, and a
/// char-by-char copy was most of a large page's CPU time).
pub fn push_escaped(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(at) = rest.bytes().position(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'')) {
        let (run, special) = rest.split_at(at);
        out.push_str(run);
        out.push_str(match special.as_bytes().first() {
            Some(b'&') => "&amp;",
            Some(b'<') => "&lt;",
            Some(b'>') => "&gt;",
            Some(b'"') => "&quot;",
            _ => "&#39;",
        });
        // The special characters are ASCII, so the next char starts one byte on.
        rest = special.get(1..).unwrap_or_default();
    }
    out.push_str(rest);
}

/// Percent-encodes a query parameter value.
pub fn encode_param(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// The resource view URL of an IRI in a dataset (path only).
pub fn resource_href(dataset: &str, iri: &str) -> String {
    format!("/{dataset}/resource?iri={}", encode_param(iri))
}

/// The query page URL that runs `query` (path only).
pub fn query_href(dataset: &str, query: &str) -> String {
    format!("/{dataset}/sparql?query={}", encode_param(query))
}

/// A link to an IRI's resource view, showing the IRI.
pub fn iri_link(dataset: &str, iri: &str) -> String {
    named_link(dataset, iri, None)
}

/// A link to an IRI's resource view showing `name`, the IRI on hover. Built
/// in one string: a results page makes one per IRI cell.
fn named_link(dataset: &str, iri: &str, name: Option<String>) -> String {
    let mut out = String::with_capacity(3 * iri.len() + dataset.len() + 64);
    out.push_str(if name.is_some() { r#"<a class="iri named" href="/"# } else { r#"<a class="iri" href="/"# });
    // `escape(&resource_href(dataset, iri))`, without the two strings between.
    push_escaped(&mut out, dataset);
    out.push_str("/resource?iri=");
    // Form-urlencoded text is ASCII letters, digits, `*-._+%` only: nothing to escape.
    out.extend(url::form_urlencoded::byte_serialize(iri.as_bytes()));
    if name.is_some() {
        out.push_str(r#"" title=""#);
        push_escaped(&mut out, iri);
    }
    out.push_str(r#"">"#);
    push_escaped(&mut out, name.as_deref().unwrap_or(iri));
    out.push_str("</a>");
    out
}

/// A link to a resource, shown by its label or prefixed name.
pub fn resource_link(dataset: &str, iri: &str, names: &Names) -> String {
    named_link(dataset, iri, names.resource(iri))
}

/// A link to a predicate, shown by its prefixed name or label.
pub fn predicate_link(dataset: &str, iri: &str, names: &Names) -> String {
    named_link(dataset, iri, names.predicate(iri))
}

/// An integer with thin-space thousands separators (`55 541`), for reading.
pub fn count(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{202f}');
        }
        out.push(c);
    }
    out
}

/// A byte size in B, kB, MB or GB (powers of 1000, one decimal).
pub fn bytes(value: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if value < 1000 {
        return format!("{value} B");
    }
    let mut size = value as f64 / 1000.0;
    let mut unit = 0;
    while size >= 1000.0 && unit + 1 < UNITS.len() {
        size /= 1000.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}

/// A term for a table cell: IRIs (datatypes too) link to their resource
/// view, shown by name; literals show their language or (when not
/// xsd:string) their datatype.
pub fn named_term(dataset: &str, term: TermRef<'_>, names: &Names) -> String {
    match term {
        TermRef::NamedNode(node) => resource_link(dataset, node.as_str(), names),
        TermRef::BlankNode(node) => {
            let mut cell = String::from("<code>_:");
            push_escaped(&mut cell, node.as_str());
            cell.push_str("</code>");
            cell
        }
        TermRef::Literal(literal) => {
            let mut cell = String::with_capacity(literal.value().len() + 32);
            cell.push_str(r#"<span class="lit">"#);
            push_escaped(&mut cell, literal.value());
            cell.push_str("</span>");
            if let Some(language) = literal.language() {
                cell.push_str(r#" <span class="dt">@"#);
                push_escaped(&mut cell, language);
                cell.push_str("</span>");
            } else if literal.datatype() != oxrdf::vocab::xsd::STRING {
                let _ = write!(cell, r#" <span class="dt">^^{}</span>"#, resource_link(dataset, literal.datatype().as_str(), names));
            }
            if let Some(direction) = literal.direction() {
                let _ = write!(cell, r#"<span class="dt">--{direction}</span>"#);
            }
            cell
        }
        // An RDF 1.2 triple term, its parts shown (and linked) like any term.
        TermRef::Triple(triple) => format!(
            r#"<span class="triple">&lt;&lt;( {} {} {} )&gt;&gt;</span>"#,
            named_term(dataset, triple.subject.as_ref().into(), names),
            named_term(dataset, triple.predicate.as_ref().into(), names),
            named_term(dataset, triple.object.as_ref(), names)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{Term, Triple};

    #[test]
    fn escapes_and_links() {
        assert_eq!(escape(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        let node = oxrdf::NamedNode::new_unchecked("http://x/a?b=c&d");
        let cell = named_term("ds", node.as_ref().into(), &Names::default());
        assert!(cell.contains("/ds/resource?iri=http%3A%2F%2Fx%2Fa%3Fb%3Dc%26d"), "{cell}");
    }

    #[test]
    fn named_links_keep_the_iri() {
        let mut names = Names::new(&[]);
        names.insert_label("http://x/a", rete_core::search::names::Label { text: "Alice <A>".into(), lang: "en".into() });
        let node = oxrdf::NamedNode::new_unchecked("http://x/a");
        let cell = named_term("ds", node.as_ref().into(), &names);
        assert_eq!(cell, r#"<a class="iri named" href="/ds/resource?iri=http%3A%2F%2Fx%2Fa" title="http://x/a">Alice &lt;A&gt;</a>"#);
        let label = "http://www.w3.org/2000/01/rdf-schema#label";
        assert!(predicate_link("ds", label, &names).contains(&format!(r#"title="{label}">rdfs:label</a>"#)));
        let typed = oxrdf::Literal::new_typed_literal("3", oxrdf::vocab::xsd::INTEGER);
        assert!(named_term("ds", typed.as_ref().into(), &names).contains(">xsd:integer</a>"));
        assert_eq!(resource_link("ds", "http://y/b", &names), iri_link("ds", "http://y/b"), "no name: the IRI");
    }

    #[test]
    fn triple_terms_show_their_linked_parts() {
        let node = |iri: &str| oxrdf::NamedNode::new_unchecked(iri);
        let inner = Triple::new(node("http://x/s"), node("http://x/p"), oxrdf::Literal::new_directional_language_tagged_literal_unchecked("a<b", "en", oxrdf::BaseDirection::Rtl));
        let outer: Term = Triple::new(oxrdf::BlankNode::new_unchecked("b0"), node("http://x/q"), inner).into();
        let cell = named_term("ds", outer.as_ref(), &Names::default());
        assert!(cell.starts_with(r#"<span class="triple">&lt;&lt;( <code>_:b0</code> "#), "{cell}");
        assert!(cell.contains("/ds/resource?iri=http%3A%2F%2Fx%2Fs"), "{cell}");
        assert!(cell.contains(r#"<span class="lit">a&lt;b</span> <span class="dt">@en</span><span class="dt">--rtl</span> )&gt;&gt;</span> )&gt;&gt;</span>"#), "{cell}");
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(count(5), "5");
        assert_eq!(count(55_541), "55\u{202f}541");
        assert_eq!(count(1_234_567), "1\u{202f}234\u{202f}567");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(2_900_000), "2.9 MB");
    }
}
