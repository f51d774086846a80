//! The pages of the graph questions (`/{ds}/reach`, `/{ds}/path`,
//! `/{ds}/check` as HTML), drawn from the same JSON the routes send to
//! programs, and the small forms that ask them: "path to…" on the resource
//! page, the checks on the dataset page. Server-rendered, whole without
//! JavaScript.

use super::layout::{self, Kind};
use super::term::{bytes, count, escape, iri_link};
use serde_json::Value;
use std::fmt::Write as _;

/// Which question a page answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// `/{ds}/reach`.
    Reach,
    /// `/{ds}/path`.
    Path,
    /// `/{ds}/check`.
    Check,
}

/// The page of an answer (`answer` is the route's JSON).
pub fn page(name: &str, question: Question, answer: &Value) -> String {
    let title = match question {
        Question::Reach => "Reachability",
        Question::Path => "Shortest path",
        Question::Check => "Coherence check",
    };
    let mut page = layout::head(title, Some(name), Kind::Graph);
    match question {
        Question::Reach => reach(&mut page, name, answer),
        Question::Path => path(&mut page, name, answer),
        Question::Check => check(&mut page, name, answer),
    }
    let number = |member: &str| answer.get(member).and_then(Value::as_u64).unwrap_or(0);
    let _ = writeln!(page, "<p class=\"note cost\">Read in {} rounds, {} requests, {}.</p>", number("rounds"), number("requests"), bytes(number("bytes")));
    page.push_str(layout::FOOT);
    page
}

/// A term as the answers print it (an IRI bare, `_:label`, a literal in
/// N-Triples): IRIs link to their resource view.
fn term(name: &str, text: &str) -> String {
    if text.starts_with("_:") || text.starts_with('"') { format!("<code>{}</code>", escape(text)) } else { iri_link(name, text) }
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// Triples `[[s,p,o],…]` as table rows.
fn triples(page: &mut String, name: &str, rows: &[Value]) {
    page.push_str("<div class=\"scroll\"><table class=\"links\"><thead><tr><th scope=\"col\">subject</th><th scope=\"col\">predicate</th><th scope=\"col\">object</th></tr></thead><tbody>\n");
    for row in rows {
        let parts: Vec<String> = row.as_array().into_iter().flatten().map(|t| term(name, text(t))).collect();
        let _ = writeln!(page, "<tr><td>{}</td></tr>", parts.join("</td><td>"));
    }
    page.push_str("</tbody></table></div>\n");
}

fn reach(page: &mut String, name: &str, answer: &Value) {
    page.push_str("<div class=\"scroll\"><table class=\"reach\"><thead><tr><th scope=\"col\">from</th><th scope=\"col\" class=\"n\">nodes reached</th></tr></thead><tbody>\n");
    for seed in answer["seeds"].as_array().into_iter().flatten() {
        let _ = writeln!(page, "<tr><td>{}</td><td class=\"n\">{}</td></tr>", term(name, text(&seed["from"])), count(seed["reached"].as_u64().unwrap_or(0)));
    }
    page.push_str("</tbody></table></div>\n");
}

fn path(page: &mut String, name: &str, answer: &Value) {
    let visited = count(answer["visited"].as_u64().unwrap_or(0));
    match answer["path"].as_array() {
        Some(steps) => {
            let _ = writeln!(page, "<p class=\"found\">A path of length {}; the search visited {visited} nodes.</p>", steps.len());
            triples(page, name, steps);
        }
        None => {
            let _ = writeln!(page, "<p class=\"found\">No path: the search visited {visited} nodes.</p>");
        }
    }
}

fn check(page: &mut String, name: &str, answer: &Value) {
    let tier = answer["tier"].as_u64().unwrap_or(0);
    let findings = answer["findings"].as_array().map_or(&[][..], Vec::as_slice);
    let _ = writeln!(page, "<p class=\"found\">Tier {tier}: {} findings.</p>", findings.len());
    findings_list(page, name, findings);
    let others: Vec<String> = (0..=2).filter(|t| *t != tier).map(|t| format!("<a href=\"/{}/check?tier={t}\">tier {t}</a>", escape(name))).collect();
    let _ = writeln!(page, "<p>{}. {}</p>", TIERS, others.join(" · "));
}

/// What the tiers read, for people.
const TIERS: &str = "Tier 0 reads the schema axioms only, tier 1 the instances the schema points at, tier 2 the whole graph";

fn findings_list(page: &mut String, name: &str, findings: &[Value]) {
    for finding in findings {
        let _ = writeln!(page, "<section class=\"finding\"><h3><span class=\"kind\">{}</span> {}</h3>", escape(text(&finding["kind"])), term(name, text(&finding["subject"])));
        triples(page, name, finding["evidence"].as_array().map_or(&[][..], Vec::as_slice));
        page.push_str("</section>\n");
    }
}

/// The dataset page's section: the tier-0 findings when the file's axiom
/// sections were read (`answer`), and links to every tier.
pub fn check_section(name: &str, answer: Option<&Value>) -> String {
    let mut section = String::from("<section aria-labelledby=\"check-h\" id=\"check\"><h2 id=\"check-h\">Coherence</h2>\n");
    if let Some(answer) = answer {
        let findings = answer["findings"].as_array().map_or(&[][..], Vec::as_slice);
        if findings.is_empty() {
            section.push_str("<p class=\"found\">The schema axioms are coherent: no unsatisfiable class, no subclass cycle.</p>\n");
        } else {
            let _ = writeln!(section, "<p class=\"found\">The schema axioms have {} findings.</p>", findings.len());
            findings_list(&mut section, name, findings);
        }
    }
    let links: Vec<String> = (0..=2).map(|t| format!("<a href=\"/{}/check?tier={t}\">tier {t}</a>", escape(name))).collect();
    let _ = writeln!(section, "<p>{TIERS}: {}.</p></section>", links.join(" · "));
    section
}

/// The resource page's form: a shortest path from `iri` to a second IRI.
pub fn path_form(name: &str, iri: &str) -> String {
    format!(
        "<form class=\"path\" method=\"get\" action=\"/{name}/path\"><input type=\"hidden\" name=\"from\" value=\"{iri}\">\
         <label for=\"path-to\">Path to…</label> <input id=\"path-to\" name=\"to\" type=\"url\" required placeholder=\"https://…\" size=\"40\"> \
         <label><input type=\"checkbox\" name=\"undirected\" value=\"true\"> either direction</label> <button type=\"submit\">Find</button></form>\n",
        name = escape(name),
        iri = escape(iri),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn path_page_links_each_step() {
        let answer = json!({"length": 1, "path": [["http://x/a", "http://x/p", "_:b1"]], "visited": 3, "rounds": 4, "bytes": 2000});
        let html = page("ds", Question::Path, &answer);
        assert!(html.contains("A path of length 1") && html.contains("/ds/resource?iri=http%3A%2F%2Fx%2Fp") && html.contains("<code>_:b1</code>"), "{html}");
        assert!(html.contains("4 rounds") && html.contains("2.0 kB"), "{html}");
        let none = page("ds", Question::Path, &json!({"length": null, "visited": 7, "rounds": 2, "bytes": 10}));
        assert!(none.contains("No path: the search visited 7 nodes"), "{none}");
    }

    #[test]
    fn check_section_lists_findings() {
        let answer = json!({"tier": 0, "findings": [{"kind": "unsatisfiable-class", "subject": "http://x/A", "evidence": [["http://x/A", "http://www.w3.org/2000/01/rdf-schema#subClassOf", "http://x/B"]]}]});
        let html = check_section("ds", Some(&answer));
        assert!(html.contains("1 findings") && html.contains("unsatisfiable-class") && html.contains("/ds/check?tier=2"), "{html}");
        assert!(check_section("ds", None).contains("/ds/check?tier=0"));
        assert!(path_form("ds", "http://x/\"a").contains("value=\"http://x/&quot;a\""));
    }
}
