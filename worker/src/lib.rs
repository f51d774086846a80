//! rete's edge Worker: SPARQL, the card, the summary, graph questions (reach,
//! path, check) and linked-data views of `.rete` files that stay in R2 and
//! are read by byte ranges, never whole.
//!
//! This file is the entry point and the route table; each route lives in
//! `routes/` and starts with `preamble.rs` (pointer, ETag, 304, open,
//! session); the read loop is `session.rs`, the block caches `pool.rs`,
//! every R2 call `r2.rs`, and every error's status and body
//! `http_error.rs`. README "Worker" lists the routes with curl examples.

mod answer;
mod config;
mod conneg;
mod datasets;
mod edge_cache;
mod http;
mod http_error;
mod pages;
mod pool;
mod preamble;
mod r2;
mod r2_source;
mod routes;
mod session;
mod usage;

use config::Config;
use edge_cache::EdgeCache;
use http::{Body, Ctx, Reply};
use http_error::HttpError;
use r2::R2;
use rete_core::read::{RoundOptions, Rounds};
use std::rc::Rc;
use usage::Usage;
use worker::{Env, Method, Request, Response, event};

/// Every var the config reads (see `config.rs`).
const VARS: [&str; 16] = [
    "MAX_QUADS_SCANNED",
    "MAX_ROWS_PRODUCED",
    "MAX_STEPS",
    "MAX_COMPUTED_BYTES",
    "MAX_TIME_MS",
    "MAX_ROUNDS",
    "MAX_READ_BYTES",
    "MAX_SUBREQUESTS",
    "CACHE_BYTES",
    "MAX_CONCURRENT_QUERIES",
    "MAX_QUERY_BYTES",
    "COALESCE_GAP_BYTES",
    "POINTER_TTL_S",
    "CACHE_MAX_AGE_S",
    "RESOURCE_PAGE_TRIPLES",
    "BASE_IRIS",
];

#[event(fetch)]
async fn fetch(mut req: Request, env: Env, context_of_event: worker::Context) -> worker::Result<Response> {
    let head = req.method() == Method::Head;
    match context(&req, &env, context_of_event) {
        Ok(ctx) => {
            let reply = match route(&mut req, &ctx).await {
                Ok(reply) => reply,
                Err(error) => {
                    if error.status() >= 500 {
                        worker::console_error!("{} {}: {} {}", req.method().to_string(), ctx.url.path(), error.status(), error.message());
                    }
                    Reply::error(&error)
                }
            };
            reply.into_response(&ctx.usage, head)
        }
        Err(error) => Reply::error(&error).into_response(&Usage::new(Rounds::new(RoundOptions::default()), 0), head),
    }
}

fn context(req: &Request, env: &Env, event: worker::Context) -> Result<Ctx, HttpError> {
    let config = Config::from_vars(|name| {
        debug_assert!(VARS.contains(&name));
        env.var(name).ok().map(|v| v.to_string())
    })
    .map_err(HttpError::Config)?;
    let bucket = env.bucket("BUCKET").map_err(|e| HttpError::Config(format!("no R2 binding named BUCKET ({e}); see wrangler.toml")))?;
    let url = req.url().map_err(|e| HttpError::BadRequest(format!("unreadable request URL: {e}")))?;
    let header = |name: &str| req.headers().get(name).ok().flatten();
    let usage = Rc::new(Usage::new(Rounds::new(RoundOptions { gap_bytes: config.coalesce_gap_bytes, max_rounds: config.max_rounds }), config.max_subrequests));
    let deadline_ms = js_sys::Date::now() + config.max_time_ms as f64;
    Ok(Ctx {
        r2: R2::new(bucket, Rc::clone(&usage), deadline_ms),
        cache: EdgeCache::new(Rc::clone(&usage), Rc::new(event)),
        usage,
        method: req.method(),
        accept: header("accept"),
        if_none_match: header("if-none-match"),
        deadline_ms,
        config,
        url,
    })
}

/// The route table.
async fn route(req: &mut Request, ctx: &Ctx) -> Result<Reply, HttpError> {
    let path = ctx.url.path().to_owned();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let read = matches!(ctx.method, Method::Get | Method::Head);
    if ctx.method == Method::Options {
        return Ok(preflight(req.headers().get("access-control-request-headers").ok().flatten()));
    }
    match segments.as_slice() {
        [""] if read => routes::index::handle(ctx).await,
        ["_search"] if read => routes::search::redirect(ctx),
        [ds] if read && datasets::is_name(ds) && base_iri_of(ctx).is_none() => routes::dataset::handle(ctx, ds).await,
        [ds, "sparql"] if read || ctx.method == Method::Post => routes::sparql::handle(req, ctx, ds).await,
        [ds, "card"] if read => routes::card::handle(ctx, ds).await,
        [ds, "summary"] if read => routes::summary::handle(ctx, ds).await,
        [ds, "summary", "members"] if read => routes::summary::members(ctx, ds).await,
        [ds, ".well-known", "void"] if read => routes::card::void(ctx, ds).await,
        [ds, "resource"] if read => routes::deref::resource(ctx, ds).await,
        [ds, "search"] if read => routes::search::handle(ctx, ds).await,
        [ds, "labels"] if read => routes::labels::handle(ctx, ds).await,
        [ds, "reach"] if read => routes::graph::reach(ctx, ds).await,
        [ds, "path"] if read => routes::graph::path(ctx, ds).await,
        [ds, "check"] if read => routes::graph::check(ctx, ds).await,
        // Base-IRI mode, local form: /{ds}/id/REST stands for BASE(ds) + REST.
        [ds, "id", rest @ ..] if read && !rest.is_empty() => {
            let base = ctx.config.base_iris.get(*ds).ok_or_else(|| HttpError::NotFound(format!("dataset {ds:?} has no base IRI (var BASE_IRIS)")))?;
            routes::deref::base_iri(ctx, ds, &format!("{base}{}", rest.join("/"))).await
        }
        _ if read => match base_iri_of(ctx) {
            // Base-IRI mode on the data's own domain: the request URL is the IRI.
            Some((ds, iri)) => routes::deref::base_iri(ctx, &ds, &iri).await,
            None => Err(HttpError::NotFound(format!("no route for {path}; see / for the datasets"))),
        },
        [_, "sparql"] => Err(HttpError::MethodNotAllowed { allowed: "GET, HEAD, POST, OPTIONS" }),
        [""] | [_, "card" | "summary" | "resource" | "search" | "labels" | "reach" | "path" | "check"] | [_, "summary", "members"] | [_, ".well-known", "void"] => Err(HttpError::MethodNotAllowed { allowed: "GET, HEAD, OPTIONS" }),
        _ => Err(HttpError::NotFound(format!("no route for {path}"))),
    }
}

/// The dataset whose base IRI the request URL (without its query) lies under, longest base first.
fn base_iri_of(ctx: &Ctx) -> Option<(String, String)> {
    let mut url = ctx.url.clone();
    url.set_query(None);
    url.set_fragment(None);
    let iri = url.as_str();
    ctx.config.base_iris.iter().filter(|(_, base)| iri.starts_with(base.as_str()) && iri.len() > base.len()).max_by_key(|(_, base)| base.len()).map(|(ds, _)| (ds.clone(), iri.to_owned()))
}

/// CORS preflight: GET and POST from any origin, with whatever request
/// headers the browser asks for (the endpoint is public and read-only, and
/// never uses credentials, so a header it does not read costs nothing).
fn preflight(requested_headers: Option<String>) -> Reply {
    Reply { status: 204, headers: Vec::new(), body: Body::Empty }
        .header("access-control-allow-methods", "GET, HEAD, POST, OPTIONS")
        .header("access-control-allow-headers", requested_headers.unwrap_or_else(|| "Accept, Content-Type, If-None-Match".into()))
        .header("access-control-max-age", "86400")
        .header("vary", "Access-Control-Request-Headers")
}
