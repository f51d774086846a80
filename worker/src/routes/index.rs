//! `GET /`: the datasets in the bucket, from one listing of `datasets/` and
//! their pointers read concurrently (a pointer carries the card's title and
//! licence, so no file is opened). HTML by default, JSON on request.

use crate::conneg::Format;
use crate::datasets::{self, ROOT, VersionEntry};
use crate::http::{Ctx, Reply, etag};
use crate::http_error::HttpError;
use crate::pages;
use serde_json::json;

/// Datasets listed at most.
const MAX_DATASETS: usize = 1000;

/// GET `/`.
pub async fn handle(ctx: &Ctx) -> Result<Reply, HttpError> {
    let format = ctx.negotiate(ctx.param("format").as_deref(), &[Format::Html, Format::Json])?;
    ctx.usage.count_open_round();
    let (prefixes, more) = ctx.r2.list_prefixes(ROOT, MAX_DATASETS).await?;
    let names: Vec<String> = prefixes.iter().filter_map(|p| p.strip_prefix(ROOT)?.strip_suffix('/')).filter(|n| datasets::is_name(n)).map(str::to_owned).collect();
    let pointers = datasets::pointers(ctx, &names).await;
    let mut entries: Vec<VersionEntry> = Vec::new();
    for (name, pointer) in names.iter().zip(pointers) {
        match pointer {
            Ok(entry) => entries.push(entry),
            // A dataset whose first publish has not switched its pointer yet.
            Err(HttpError::NotFound(_)) => {}
            Err(error) => ctx.host.log_error(&format!("dataset {name}: {}", error.message())),
        }
    }
    let listing: Vec<String> = entries.iter().map(|e| format!("{}={}", e.name, e.version)).collect();
    let tag = etag("datasets", &[format.name(), &ctx.origin(), &listing.join(",")]);
    if ctx.not_modified(&tag) {
        return Ok(Reply::not_modified(&tag, ctx.config.pointer_ttl_s));
    }
    let origin = ctx.origin();
    let bytes = match format {
        Format::Html => pages::home::page(&entries, more, MAX_DATASETS).into_bytes(),
        _ => {
            let list: Vec<_> = entries
                .iter()
                .map(|e| {
                    let mut item = json!({
                        "name": e.name,
                        "triples": e.quads,
                        "card": format!("{origin}/{}/card", e.name),
                        "sparql": format!("{origin}/{}/sparql", e.name),
                        "summary": format!("{origin}/{}/summary", e.name),
                        "version": e.version,
                        "bytes": e.bytes,
                        "published_at": e.published_at,
                    });
                    // Only when the pointer records them (older pointers do not).
                    for (member, value) in [("title", &e.title), ("license", &e.license)] {
                        if let Some(value) = value {
                            item[member] = json!(value);
                        }
                    }
                    item
                })
                .collect();
            let mut bytes = serde_json::to_vec_pretty(&json!({ "datasets": list, "truncated": more })).map_err(|e| HttpError::Internal(e.to_string()))?;
            bytes.push(b'\n');
            bytes
        }
    };
    Ok(Reply::ok(format, bytes).cacheable(&tag, ctx.config.pointer_ttl_s))
}
