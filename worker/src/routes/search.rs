//! `/{ds}/search?q=&lang=&limit=[&types=1]`: resources found by name through the
//! file's label search index (FORMAT.md §12). The JSON is `rete search
//! --json`'s (core's [`SearchOutput`]), its counters this request's; the
//! HTML page is the site's search page, whole without JavaScript (its form
//! is how the dataset page searches when the script does not run). The
//! search itself is core's: a few posting blocks in one round, the names of
//! the best hits in the next.

use crate::conneg::Format;
use crate::datasets;
use crate::http::{Ctx, Reply};
use crate::http_error::HttpError;
use crate::pages;
use crate::preamble;
use rete_core::search::{MAX_LIMIT, SearchError, SearchOutput, SearchRequest, search};

/// Hits returned when `limit` is not given (the CLI's default).
pub const DEFAULT_LIMIT: usize = 20;

/// What a search request asks.
struct Params {
    /// The words; `None` when `q` is absent (the HTML page then shows only its form).
    query: Option<String>,
    /// Only labels in this language (`""`: labels without a tag).
    lang: Option<String>,
    limit: usize,
    /// Whether to list each hit's types (`types=1`).
    types: bool,
}

impl Params {
    fn read(ctx: &Ctx) -> Result<Self, HttpError> {
        let query = ctx.param("q");
        if let Some(q) = &query
            && q.len() as u64 > ctx.config.max_query_bytes
        {
            return Err(HttpError::TooLarge { max_bytes: ctx.config.max_query_bytes });
        }
        let limit = match ctx.param("limit") {
            None => DEFAULT_LIMIT,
            Some(text) => text.parse().ok().filter(|n| (1..=MAX_LIMIT).contains(n)).ok_or_else(|| HttpError::BadRequest(format!("limit={text:?} is out of range; give 1 to {MAX_LIMIT}")))?,
        };
        let types = match ctx.param("types").as_deref() {
            None | Some("0" | "false") => false,
            Some("1" | "true") => true,
            Some(other) => return Err(HttpError::BadRequest(format!("types={other:?}: give types=1 to list each hit's types, or leave it out"))),
        };
        Ok(Self { query, lang: ctx.param("lang"), limit, types })
    }
}

/// Where the home page's search form sends its words: the form names the
/// dataset (`ds=`), so it works without JavaScript.
pub const HOME_FORM_PATH: &str = "/_search";

/// GET `/_search?ds=&q=…`: 303 to `/{ds}/search` with the other parameters.
pub fn redirect(ctx: &Ctx) -> Result<Reply, HttpError> {
    let dataset = ctx.param("ds").filter(|ds| datasets::is_name(ds)).ok_or_else(|| HttpError::BadRequest("give the dataset to search: /_search?ds=NAME&q=words".into()))?;
    let mut target = ctx.url.clone();
    target.set_path(&format!("/{dataset}/search"));
    let kept: Vec<(String, String)> = ctx.url.query_pairs().filter(|(key, _)| key != "ds").map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    target.query_pairs_mut().clear().extend_pairs(kept);
    Ok(Reply::see_other(&format!("{}?{}", target.path(), target.query().unwrap_or_default())))
}

/// GET `/{ds}/search`.
pub async fn handle(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Json, Format::Html])?;
    let params = Params::read(ctx)?;
    if params.query.is_none() && format != Format::Html {
        return Err(HttpError::BadRequest(format!("give the words to search for: /{name}/search?q=words (every word matches as a prefix; lang= and limit= optional)")));
    }
    let lang_part = params.lang.as_deref().map_or_else(|| "any".to_owned(), |lang| format!("lang:{lang}"));
    let etag_parts = ["search", format.name(), params.query.as_deref().unwrap_or(""), &lang_part, &params.limit.to_string(), if params.types { "types" } else { "" }];
    preamble::serve(ctx, name, &etag_parts, async |mut session| {
        let Some(query) = &params.query else {
            return Ok(Reply::ok(format, pages::search::page(name, None, &params.lang, params.limit).into_bytes()));
        };
        let mut request = SearchRequest::typed(query, params.lang.as_deref(), params.limit);
        request.types = params.types;
        let answer = session.run(async |store| search(store, &request)).await?.map_err(|error| match error {
            SearchError::NoIndex => HttpError::NotFound(format!("dataset {name:?} has no search index: it was built with --no-search or by an older rete; rebuild and publish it to search it")),
            SearchError::Read(error) => error.into(),
            other => HttpError::Internal(other.to_string()),
        })?;
        let usage = &ctx.usage;
        let output = SearchOutput::new(query, &answer, usage.round_count(), usage.reads.get(), usage.bytes.get());
        let body = match format {
            Format::Html => pages::search::page(name, Some(&output), &params.lang, params.limit).into_bytes(),
            _ => {
                let mut bytes = serde_json::to_vec(&output).map_err(|e| HttpError::Internal(e.to_string()))?;
                bytes.push(b'\n');
                bytes
            }
        };
        Ok(Reply::ok(format, body))
    })
    .await
}
