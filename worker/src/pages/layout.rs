//! The frame of every page: head, skip link, navigation, the site's CSS and
//! script, and the footer. `data-page` and `data-dataset` on `<body>` tell
//! the script which page it enhances; without the script the page is whole.

use super::term::escape;

/// Where the site's bundle is served (Workers static assets: wrangler.toml `[assets]`).
/// Dataset names start with a letter or digit, so no dataset path can shadow it.
pub const ASSETS: &str = "/_site";

/// Which page a frame holds: the script's switch, and the current nav link.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `/`.
    Home,
    /// `/{ds}`, `/{ds}/card`, `/{ds}/summary` as HTML.
    Dataset,
    /// `/{ds}/sparql` as HTML.
    Query,
    /// `/{ds}/resource?iri=` as HTML.
    Resource,
    /// `/{ds}/search` as HTML.
    Search,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Home => "home",
            Self::Dataset => "dataset",
            Self::Query => "query",
            Self::Resource => "resource",
            Self::Search => "search",
        }
    }
}

/// The top of a page, up to and including `<h1>`.
pub fn head(title: &str, dataset: Option<&str>, kind: Kind) -> String {
    let current = |k: Kind| if k == kind { r#" aria-current="page""# } else { "" };
    let mut nav = format!(r#"<a href="/"{}>rete</a>"#, current(Kind::Home));
    let mut data = String::new();
    if let Some(name) = dataset {
        let name = escape(name);
        nav.push_str(&format!(
            r#" <span aria-hidden="true">›</span> <a href="/{name}"{}>{name}</a> <a href="/{name}/sparql"{}>query</a> <a href="/{name}/search"{}>search</a> <a href="/{name}/card?format=json">card JSON</a>"#,
            current(Kind::Dataset),
            current(Kind::Query),
            current(Kind::Search),
        ));
        data = format!(r#" data-dataset="{name}""#);
    }
    format!(
        r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · rete</title>
<link rel="stylesheet" href="{ASSETS}/site.css">
<script type="module" src="{ASSETS}/site.js"></script>
</head>
<body data-page="{page}"{data}><a class="skip" href="#main">Skip to content</a>
<header><nav aria-label="site">{nav}</nav></header>
<main id="main" tabindex="-1"><h1>{title}</h1>
"##,
        title = escape(title),
        page = kind.name(),
    )
}

/// The end of a page.
pub const FOOT: &str = "</main>\n<footer><p>rete: each dataset is one file, queried by byte ranges. Every page is also JSON, Turtle or SPARQL results for programs.</p></footer>\n</body></html>\n";
