//! Server-rendered HTML for people, one file per page. Every page works
//! without JavaScript; each links the site's bundle (site/, served as Workers
//! static assets under `/_site/`), which enhances the page named by the
//! `data-page` attribute of `<body>`: the query editor, the summary graph, search suggestions.

pub mod dataset;
pub mod home;
pub mod layout;
pub mod query;
pub mod resource;
pub mod search;
pub mod term;
