//! The home page: one row per dataset from its pointer (size, triples, when
//! published). Title and licence live in each card, which this page does not
//! read (one file open per dataset); the site's script fills those two cells
//! from `/{ds}/card`, and without it the row still names and links the dataset.

use super::layout::{self, Kind};
use super::term::{bytes, count, escape};
use crate::datasets::VersionEntry;
use std::fmt::Write as _;

/// The page for the listed datasets; `truncated` when the listing stopped at `max`.
pub fn page(entries: &[VersionEntry], truncated: bool, max: usize) -> String {
    let mut page = layout::head("Datasets", None, Kind::Home);
    if entries.is_empty() {
        page.push_str("<p>No dataset is published yet: <code>rete publish FILE --name NAME</code> adds one.</p>\n");
    } else {
        page.push_str(
            "<div class=\"scroll\"><table class=\"datasets\"><caption>Published datasets</caption>\
             <thead><tr><th scope=\"col\">dataset</th><th scope=\"col\">title</th><th scope=\"col\" class=\"n\">triples</th>\
             <th scope=\"col\" class=\"n\">size</th><th scope=\"col\">licence</th><th scope=\"col\">published</th><th scope=\"col\">links</th></tr></thead><tbody>\n",
        );
        for e in entries {
            let _ = writeln!(
                page,
                "<tr data-dataset=\"{n}\"><th scope=\"row\"><a href=\"/{n}\">{n}</a></th><td data-card=\"title\"></td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td data-card=\"license\"></td><td>{}</td><td><a href=\"/{n}/sparql\">query</a> · <a href=\"/{n}/card?format=json\">card</a> · <a href=\"/{n}/summary?format=json\">summary</a></td></tr>",
                count(e.quads),
                bytes(e.bytes),
                escape(e.published_at.get(..10).unwrap_or(&e.published_at)),
                n = escape(&e.name)
            );
        }
        page.push_str("</tbody></table></div>\n");
    }
    if truncated {
        let _ = writeln!(page, "<p>Only the first {max} datasets are listed.</p>");
    }
    page.push_str(layout::FOOT);
    page
}
