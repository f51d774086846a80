//! rete's edge Worker: SPARQL, the card, the summary, graph questions (reach,
//! path, check) and linked-data views of `.rete` files that stay in R2 and
//! are read by byte ranges, never whole.
//!
//! This file is the entry point and the route table; each route lives in
//! `routes/` and starts with `preamble.rs` (pointer, ETag, 304, open,
//! session); the read loop is `session.rs`, the block caches `pool.rs`
//! and the isolate's compressed blocks `compressed_blocks.rs`,
//! every R2 call `r2.rs`, and every error's status and body
//! `http_error.rs`. README "Worker" lists the routes with curl examples.
//!
//! [`serve`] is the whole request handling over plain values and a
//! [`Host`] (`host.rs`); the `fetch` event hands it the runtime's request,
//! the runtime (`cloudflare.rs`) and the vars (read once per isolate), and
//! the fuzzer an in-memory bucket (`fuzz/src/request.rs`), so both run the
//! same code.

mod answer;
mod cloudflare;
mod compressed_blocks;
mod config;
mod conneg;
mod datasets;
mod edge_cache;
pub mod host;
pub mod http;
pub mod http_error;
mod pages;
mod pool;
mod preamble;
mod r2;
mod r2_source;
mod routes;
mod session;
mod usage;

use config::Config;
use futures_util::future::{LocalBoxFuture, ready};
use edge_cache::EdgeCache;
use host::{Host, Request, Response, Url};
use http::{Body, Ctx, Reply};
use http_error::HttpError;
use r2::R2;
use rete_core::read::{RoundOptions, Rounds};
use std::rc::Rc;
use std::sync::Arc;
use usage::Usage;
use worker::{Env, Method, event};

/// Every var the config reads (see `config.rs`).
const VARS: [&str; 17] = [
    "MAX_QUADS_SCANNED",
    "MAX_ROWS_PRODUCED",
    "MAX_STEPS",
    "MAX_COMPUTED_BYTES",
    "MAX_TIME_MS",
    "MAX_ROUNDS",
    "MAX_READ_BYTES",
    "MAX_SUBREQUESTS",
    "CACHE_BYTES",
    "COMPRESSED_CACHE_BYTES",
    "MAX_CONCURRENT_QUERIES",
    "MAX_QUERY_BYTES",
    "COALESCE_GAP_BYTES",
    "POINTER_TTL_S",
    "CACHE_MAX_AGE_S",
    "RESOURCE_PAGE_TRIPLES",
    "BASE_IRIS",
];

#[event(fetch)]
async fn fetch(req: worker::web_sys::Request, env: Env, context: worker::Context) -> worker::Result<worker::Response> {
    let head = req.method() == "HEAD";
    let response = match cloudflare::request(req) {
        Ok(request) => {
            let host = cloudflare::Cloudflare::new(&env, context).map(|host| Rc::new(host) as Rc<dyn Host>);
            let vars = isolate_vars(&env);
            serve(request, host, |name| VARS.iter().position(|known| *known == name).and_then(|i| vars[i].clone())).await
        }
        Err(error) => Reply::error(&error).finish(&no_usage(), head),
    };
    cloudflare::response(response)
}

thread_local! {
    /// The vars' values, read from the `env` of the isolate's first request.
    static VAR_VALUES: std::cell::OnceCell<Rc<[Option<String>; VARS.len()]>> = const { std::cell::OnceCell::new() };
}

/// Every var's value (by its place in [`VARS`]), read once per isolate: an
/// isolate runs one deployment, whose vars do not change while it lives.
/// Read per request they were ~20% of the Worker's own CPU on an `ASK {}`
/// (17 calls into JavaScript and their strings; docs/BENCHMARK.md "Session
/// 21: the per-request floor"). Their parsing stays per request, so a
/// malformed var is still a 500 on every request.
fn isolate_vars(env: &Env) -> Rc<[Option<String>; VARS.len()]> {
    VAR_VALUES.with(|values| Rc::clone(values.get_or_init(|| Rc::new(VARS.map(|name| env.var(name).ok().map(|v| v.to_string()))))))
}

/// Answers one request: `var` reads the settings (`wrangler.toml` `[vars]`),
/// `host` is the runtime (an error when a binding is missing).
pub async fn serve(mut req: Request, host: Result<Rc<dyn Host>, HttpError>, var: impl Fn(&str) -> Option<String>) -> Response {
    let head = req.method == Method::Head;
    match context(&req, host, var) {
        Ok(ctx) => {
            let reply = match route(&mut req, &ctx).await {
                Ok(reply) => reply,
                Err(error) => {
                    if error.status() >= 500 {
                        ctx.host.log_error(&format!("{} {}: {} {}", req.method, ctx.url.path(), error.status(), error.message()));
                    }
                    Reply::error(&error)
                }
            };
            reply.finish(&ctx.usage, head)
        }
        Err(error) => Reply::error(&error).finish(&no_usage(), head),
    }
}

/// The counters of a request that read nothing.
fn no_usage() -> Usage {
    Usage::new(Rounds::new(RoundOptions::default()), 0)
}

fn context(req: &Request, host: Result<Rc<dyn Host>, HttpError>, var: impl Fn(&str) -> Option<String>) -> Result<Ctx, HttpError> {
    let config = Config::from_vars(|name| {
        debug_assert!(VARS.contains(&name));
        var(name)
    })
    .map_err(HttpError::Config)?;
    check_origin(&req.url)?;
    let host = host?;
    let clock = host.clock();
    let usage = Rc::new(Usage::new(Rounds::new(RoundOptions { gap_bytes: config.coalesce_gap_bytes, max_rounds: config.max_rounds }), config.max_subrequests));
    let deadline_ms = clock.now_ms() + config.max_time_ms as f64;
    Ok(Ctx {
        r2: R2::new(Rc::clone(&host), Arc::clone(&clock), Rc::clone(&usage), deadline_ms),
        cache: EdgeCache::new(Rc::clone(&usage), Rc::clone(&host)),
        usage,
        method: req.method.clone(),
        accept: req.header("accept"),
        if_none_match: req.header("if-none-match"),
        deadline_ms,
        config,
        url: req.url.clone(),
        host,
        clock,
    })
}

/// Absolute links and the service description name the Worker's resources
/// from the request's origin (`Ctx::origin`), so the origin must make IRIs:
/// a URL parser lets through hosts that IRIs forbid (a backtick, found by
/// the `request` fuzz target: the service description answered 500).
fn check_origin(url: &Url) -> Result<(), HttpError> {
    let origin = url.origin().ascii_serialization();
    match oxrdf::NamedNode::new(format!("{origin}/")) {
        Ok(_) => Ok(()),
        Err(error) => Err(HttpError::BadRequest(format!("the request's origin {origin} does not make IRIs: {error}"))),
    }
}

/// A route's answer, as a future of its own.
type Routed<'a> = LocalBoxFuture<'a, Result<Reply, HttpError>>;

/// Boxes a route's future. Each route then compiles to a function of its
/// own, reached through a pointer, rather than all of them inlined into the
/// one `fetch` state machine (223 KB of wasm once): V8 compiles a wasm
/// function when it is first called, so a new isolate's first request
/// compiled every route's code before it could answer one (docs/BENCHMARK.md
/// "CPU per request").
fn boxed<'a>(route: impl Future<Output = Result<Reply, HttpError>> + 'a) -> Routed<'a> {
    Box::pin(route)
}

/// The route table.
fn route<'a>(req: &'a mut Request, ctx: &'a Ctx) -> Routed<'a> {
    let path = ctx.url.path().to_owned();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let read = matches!(ctx.method, Method::Get | Method::Head);
    let ds = segments.first().map(|ds| (*ds).to_owned()).unwrap_or_default();
    if ctx.method == Method::Options {
        return boxed(ready(Ok(preflight(req.header("access-control-request-headers")))));
    }
    match segments.as_slice() {
        [""] if read => boxed(routes::index::handle(ctx)),
        ["_search"] if read => boxed(ready(routes::search::redirect(ctx))),
        [_] if read && datasets::is_name(&ds) && base_iri_of(ctx).is_none() => boxed(async move { routes::dataset::handle(ctx, &ds).await }),
        [_, "sparql"] if read || ctx.method == Method::Post => boxed(async move { routes::sparql::handle(req, ctx, &ds).await }),
        [_, "card"] if read => boxed(async move { routes::card::handle(ctx, &ds).await }),
        [_, "summary"] if read => boxed(async move { routes::summary::handle(ctx, &ds).await }),
        [_, "summary", "members"] if read => boxed(async move { routes::summary::members(ctx, &ds).await }),
        [_, ".well-known", "void"] if read => boxed(async move { routes::card::void(ctx, &ds).await }),
        [_, "resource"] if read => boxed(async move { routes::deref::resource(ctx, &ds).await }),
        [_, "search"] if read => boxed(async move { routes::search::handle(ctx, &ds).await }),
        [_, "labels"] if read => boxed(async move { routes::labels::handle(ctx, &ds).await }),
        [_, "reach"] if read => boxed(async move { routes::graph::reach(ctx, &ds).await }),
        [_, "path"] if read => boxed(async move { routes::graph::path(ctx, &ds).await }),
        [_, "check"] if read => boxed(async move { routes::graph::check(ctx, &ds).await }),
        // Base-IRI mode, local form: /{ds}/id/REST stands for BASE(ds) + REST.
        [_, "id", rest @ ..] if read && !rest.is_empty() => match ctx.config.base_iris.get(&ds) {
            Some(base) => {
                let iri = format!("{base}{}", rest.join("/"));
                boxed(async move { routes::deref::base_iri(ctx, &ds, &iri).await })
            }
            None => boxed(ready(Err(HttpError::NotFound(format!("dataset {ds:?} has no base IRI (var BASE_IRIS)"))))),
        },
        _ if read => match base_iri_of(ctx) {
            // Base-IRI mode on the data's own domain: the request URL is the IRI.
            Some((ds, iri)) => boxed(async move { routes::deref::base_iri(ctx, &ds, &iri).await }),
            None => boxed(ready(Err(HttpError::NotFound(format!("no route for {path}; see / for the datasets"))))),
        },
        [_, "sparql"] => boxed(ready(Err(HttpError::MethodNotAllowed { allowed: "GET, HEAD, POST, OPTIONS" }))),
        [""] | [_, "card" | "summary" | "resource" | "search" | "labels" | "reach" | "path" | "check"] | [_, "summary", "members"] | [_, ".well-known", "void"] => {
            boxed(ready(Err(HttpError::MethodNotAllowed { allowed: "GET, HEAD, OPTIONS" })))
        }
        _ => boxed(ready(Err(HttpError::NotFound(format!("no route for {path}"))))),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_that_makes_no_iri_is_a_bad_request() {
        let url = |text: &str| Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(check_origin(&url("http://127.0.0.1:8787/data/sparql")).is_ok());
        assert!(check_origin(&url("https://example.org/")).is_ok());
        let error = check_origin(&url("http://schema.orgGET`/data/sparql")).expect_err("a backtick in the host");
        assert_eq!(error.status(), 400);
        assert!(error.message().contains("schema.orgget`"), "{}", error.message());
    }
}
