//! `/{ds}/labels?iri=…&iri=…[&lang=]`: how IRIs are shown (README "Names"),
//! for pages that name IRIs after an answer arrives (the query page's result
//! table). Each IRI gets its label (through PSO, bounded by core's
//! `search::names`) and its prefixed name from the card's namespaces. JSON
//! only; a label lookup costs the IRIs' dictionary blocks, the PSO blocks
//! and the labels' texts: three rounds cold.

use crate::conneg::Format;
use crate::http::{Ctx, Reply};
use crate::http_error::HttpError;
use crate::preamble;
use rete_core::search::names::{NamesOutput, name_iris};

/// Most IRIs one request names (a page of results asks in batches).
pub const MAX_IRIS: usize = 100;

/// GET `/{ds}/labels`.
pub async fn handle(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Json])?;
    let iris: Vec<String> = ctx.url.query_pairs().filter(|(key, _)| key == "iri").map(|(_, value)| value.into_owned()).collect();
    if iris.is_empty() {
        return Err(HttpError::BadRequest(format!("give the IRIs to name: /{name}/labels?iri=IRI&iri=IRI (at most {MAX_IRIS}; lang= optional)")));
    }
    if iris.len() > MAX_IRIS {
        return Err(HttpError::BadRequest(format!("{} IRIs asked for; give at most {MAX_IRIS} a request", iris.len())));
    }
    let asked: u64 = iris.iter().map(|iri| iri.len() as u64).sum();
    if asked > ctx.config.max_query_bytes {
        return Err(HttpError::TooLarge { max_bytes: ctx.config.max_query_bytes });
    }
    let lang = ctx.param("lang").filter(|l| !l.is_empty());
    let mut etag_parts = vec!["labels", format.name(), lang.as_deref().unwrap_or("")];
    etag_parts.extend(iris.iter().map(String::as_str));
    preamble::serve(ctx, name, &etag_parts, async |mut session| {
        let names = session.run(async |store| name_iris(store, &iris, lang.as_deref())).await??;
        let mut body = serde_json::to_vec(&NamesOutput::new(&iris, &names)).map_err(|e| HttpError::Internal(e.to_string()))?;
        body.push(b'\n');
        Ok(Reply::ok(format, body))
    })
    .await
}
