//! `/{ds}/sparql`: the SPARQL 1.1 Protocol over GET and POST. With a query:
//! parse (400 with the position), negotiate, resolve the dataset,
//! answer 304 for a known ETag, then run rounds until a run misses nothing;
//! a small answer is sent whole as captured, a larger one streams from what
//! was captured, one larger still from one more run. The HTML table names
//! its IRIs (README "Names"). Without a query:
//! the service description with VoID statistics.

use crate::answer::{Out, PageInfo, VOID, WriteFailure, triples_to_bytes, write_answer};
use crate::conneg::{self, Format, GRAPH_FORMATS, SOLUTION_FORMATS};
use crate::host::Request;
use crate::http::{Body, Ctx, Reply};
use crate::http_error::HttpError;
use crate::pages;
use crate::preamble;
use crate::session::Session;
use futures_channel::mpsc;
use futures_util::{SinkExt, StreamExt};
use oxrdf::vocab::{rdf, xsd};
use oxrdf::{BlankNode, Literal, NamedNode, NamedOrBlankNode, Term, Triple};
use rete_core::format::card::Card;
use rete_core::search::names::{self, Names};
use rete_core::search::sparql::TEXT_QUERY;
use rete_core::sparql::{Budget, Limit, Query, QueryOptions, evaluate, parse_query, warnings};
use rete_core::{Header, RangeSource, SectionKind, Store};
use std::sync::Arc;
use worker::Method;

/// Answers up to this size are sent whole (with `Content-Length`); larger ones stream.
const WHOLE_BYTES: usize = 1 << 20;

/// Answers up to this size stream from what the checking run captured;
/// larger ones are evaluated once more as they stream (a warm LUBM q14,
/// 76,490 rows, paid its evaluation twice: issue 14, docs/BENCHMARK.md
/// "Worker against native, warm"). Memory: a request holds at most this
/// much of its answer, beside its block cache (`CACHE_BYTES`; the isolate's
/// compressed blocks, `COMPRESSED_CACHE_BYTES`, are shared by all), and keeps its
/// query slot until the answer is sent: at most `MAX_CONCURRENT_QUERIES` are held.
const HELD_BYTES: usize = 16 << 20;

/// The protocol's parameters.
#[derive(Debug, Default)]
struct Params {
    query: Option<String>,
    /// An `update` parameter was sent (refused: the endpoint only reads).
    update: bool,
    default_graphs: Vec<String>,
    named_graphs: Vec<String>,
    format: Option<String>,
}

impl Params {
    fn add(&mut self, key: &str, value: String) -> Result<(), HttpError> {
        match key {
            "query" if self.query.is_some() => return Err(HttpError::BadRequest("more than one query parameter".into())),
            "query" => self.query = Some(value),
            "update" => self.update = true,
            "default-graph-uri" => self.default_graphs.push(value),
            "named-graph-uri" => self.named_graphs.push(value),
            "format" => self.format = Some(value),
            _ => {} // the protocol lets servers ignore what they do not know
        }
        Ok(())
    }
}

async fn params(req: &mut Request, ctx: &Ctx) -> Result<Params, HttpError> {
    let mut params = Params::default();
    for (key, value) in ctx.url.query_pairs() {
        params.add(&key, value.into_owned())?;
    }
    if ctx.method == Method::Post {
        let content_type = req.header("content-type").unwrap_or_default();
        let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        let body = read_body(req, ctx.config.max_query_bytes).await?;
        match essence.as_str() {
            "application/sparql-query" => {
                let text = String::from_utf8(body).map_err(|_| HttpError::BadRequest("the query is not UTF-8".into()))?;
                params.add("query", text)?;
            }
            "application/sparql-update" => params.update = true,
            "application/x-www-form-urlencoded" => {
                for (key, value) in url::form_urlencoded::parse(&body) {
                    params.add(&key, value.into_owned())?;
                }
            }
            other => {
                return Err(HttpError::UnsupportedMediaType(format!(
                    "POST body of type {other:?}: send application/sparql-query or application/x-www-form-urlencoded"
                )));
            }
        }
    }
    if params.query.as_ref().is_some_and(|q| q.len() as u64 > ctx.config.max_query_bytes) {
        return Err(HttpError::TooLarge { max_bytes: ctx.config.max_query_bytes });
    }
    match (&params.query, params.update) {
        (Some(_), true) => Err(HttpError::BadRequest("a request has either a query or an update, not both".into())),
        (None, true) => Err(HttpError::ReadOnly),
        // Without a query, GET describes the service; a POST had something to ask.
        (None, false) if ctx.method == Method::Post => {
            Err(HttpError::BadRequest("no query: send query=… URL-encoded, or the query itself as application/sparql-query".into()))
        }
        _ => Ok(params),
    }
}

/// Reads a request body, refusing more than `max_bytes` without reading it all.
async fn read_body(req: &mut Request, max_bytes: u64) -> Result<Vec<u8>, HttpError> {
    let declared = req.header("content-length").and_then(|l| l.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > max_bytes) {
        return Err(HttpError::TooLarge { max_bytes });
    }
    let body = std::mem::replace(&mut req.body, Err("it was read already".into()));
    let mut stream = body.map_err(|e| HttpError::BadRequest(format!("cannot read the request body: {e}")))?;
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| HttpError::BadRequest(format!("cannot read the request body: {e}")))?;
        if (body.len() + chunk.len()) as u64 > max_bytes {
            return Err(HttpError::TooLarge { max_bytes });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn iris(values: &[String], name: &str) -> Result<Vec<NamedNode>, HttpError> {
    values.iter().map(|iri| NamedNode::new(iri.as_str()).map_err(|e| HttpError::BadRequest(format!("invalid {name} <{iri}>: {e}")))).collect()
}

/// The per-request budget from the config; evaluation also stops, naming
/// the limit, when the runtime says the request nears its CPU time limit
/// (a 422 `cpu` the client can read, before the platform would kill the
/// request without an answer), and, `with_deadline`, at `MAX_TIME_MS`.
pub fn budget(ctx: &Ctx, with_deadline: bool) -> Budget {
    let deadline_ms = ctx.deadline_ms;
    let clock = Arc::clone(&ctx.clock);
    Budget {
        max_quads_scanned: ctx.config.max_quads_scanned,
        max_rows_produced: ctx.config.max_rows_produced,
        max_steps: ctx.config.max_steps,
        max_computed_bytes: ctx.config.max_computed_bytes,
        should_stop: Some(Arc::new(move || {
            if clock.near_cpu_limit() {
                Some(Limit::Cpu)
            } else {
                (with_deadline && clock.now_ms() > deadline_ms).then_some(Limit::Deadline)
            }
        })),
    }
}

/// The answer's format among `offers`. Laxer than other routes, for
/// clients nobody here wrote: SPARQLWrapper sends its return format as
/// `format=` for every query form (`xml` for a CONSTRUCT, `n3`, `rdf+xml`),
/// so a `format=` naming nothing on offer defers to `Accept`; and an
/// `Accept` listing nothing on offer gets the first offer rather than a
/// 406 (RFC 9110 §12.5.1 allows either): clients read the Content-Type.
fn answer_format(ctx: &Ctx, format_param: Option<&str>, offers: &[Format]) -> Result<Format, HttpError> {
    if let Some(format) = format_param.and_then(|name| conneg::by_name(name, offers).ok()) {
        return Ok(format);
    }
    conneg::negotiate(ctx.accept.as_deref(), offers).or(offers.first().copied()).ok_or_else(|| HttpError::Internal("no format on offer".into()))
}

/// GET or POST `/{ds}/sparql`.
pub async fn handle(req: &mut Request, ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let params = params(req, ctx).await?;
    let Some(text) = params.query.clone() else {
        return service_description(ctx, name, params.format.as_deref()).await;
    };
    let query = match parse_query(&text, None) {
        Ok(query) => query,
        // A person's browser gets the query page back with the error shown at its position.
        Err(error) if answer_format(ctx, params.format.as_deref(), &SOLUTION_FORMATS).is_ok_and(|f| f == Format::Html) => {
            let error = HttpError::from(error);
            let page = pages::query::error_page(name, &text, &error.body());
            return Ok(Reply::with_type(error.status(), &Format::Html.content_type(), Body::Bytes(page.into_bytes())).header("cache-control", "no-store"));
        }
        Err(error) => return Err(error.into()),
    };
    let offers: &[Format] = match query {
        Query::Select { .. } | Query::Ask { .. } => &SOLUTION_FORMATS,
        Query::Construct { .. } | Query::Describe { .. } => &GRAPH_FORMATS,
    };
    let format = answer_format(ctx, params.format.as_deref(), offers)?;
    let options = QueryOptions { default_graphs: iris(&params.default_graphs, "default-graph-uri")?, named_graphs: iris(&params.named_graphs, "named-graph-uri")?, budget: budget(ctx, true) };

    let etag_parts = ["sparql", format.name(), &text, &params.default_graphs.join(" "), &params.named_graphs.join(" ")];
    let html = format == Format::Html;
    preamble::serve(ctx, name, &etag_parts, async |mut session| {
        // An HTML table shows IRIs by name (README "Names"): prefixed names from the
        // card's namespaces at no cost, and, for an answer small enough to be sent as
        // captured, labels: the label predicates' ids are read in the answer's rounds,
        // the labels after it (core's search::names bounds).
        let card = if html { Some(session.run(async |store| store.card()).await??) } else { None };
        let label_iris = card.as_ref().map(names::label_predicate_iris).unwrap_or_default();
        let prefixed = Names::new(card.as_ref().map_or(&[], |c| c.namespaces.as_slice()));
        let page = PageInfo::new(name, &text, &prefixed);
        let mut out = Out::capture(HELD_BYTES);
        let result = session
            .run(async |store| {
                out.reset();
                page.shown.take();
                if html {
                    // Only their dictionary blocks are wanted now: a miss is read with the answer's.
                    let _ = names::term_ids(store, &label_iris);
                }
                match evaluate(store, &query, &options) {
                    Ok(mut answer) => write_answer(&mut answer, format, &page, &mut out).await,
                    Err(error) => Err(WriteFailure::Query(error)),
                }
            })
            .await?;
        match result {
            Ok(()) => {}
            Err(WriteFailure::Query(error)) => return Err(error.into()),
            Err(WriteFailure::Io(error)) => return Err(HttpError::Internal(format!("writing the answer failed: {error}"))),
            Err(WriteFailure::TripleTerm(format)) => return Err(HttpError::triple_terms(format, offers)),
            Err(WriteFailure::Closed) => return Err(HttpError::Internal("answer writer closed".into())),
        }
        let shown = page.shown.into_inner().iris;
        if html && !label_iris.is_empty() && !shown.is_empty() && out.is_captured_within(WHOLE_BYTES as u64) {
            if let Some(labelled) = name_table(ctx, &mut session, &query, &options, &text, name, &shown).await {
                out = labelled;
            }
        }
        let total_bytes = out.total_bytes();
        let whole = out.is_captured_within(WHOLE_BYTES as u64);
        let reply = match out.into_chunks() {
            Some(chunks) if whole => Reply::ok(format, chunks.concat()),
            _ if ctx.method == Method::Head => Reply::with_type(200, &format.content_type(), Body::Empty),
            Some(chunks) => {
                // Complete and held: sent as the client reads, without another run.
                // The session (the query's slot) is kept until then, so that the
                // held answers stay one per slot (memory: above).
                let (mut sender, receiver) = mpsc::channel(2);
                ctx.host.spawn(Box::pin(async move {
                    for chunk in chunks {
                        if sender.send(Ok(chunk)).await.is_err() {
                            break;
                        }
                    }
                    sender.close_channel();
                    drop(session);
                }));
                Reply::with_type(200, &format.content_type(), Body::Stream(receiver)).header("x-rete-answer-bytes", total_bytes.to_string())
            }
            None => {
                // Everything the answer needs is in this session's cache or the
                // isolate's compressed blocks: one more run writes it out as the
                // client reads, without reads (none may miss: see refuse_misses).
                let (sender, receiver) = mpsc::channel(2);
                let options = QueryOptions { budget: budget(ctx, false), ..options.clone() };
                let (name, text, query, host) = (name.to_owned(), text.clone(), query.clone(), ctx.host.clone());
                ctx.host.spawn(Box::pin(async move {
                    let mut out = Out::stream(sender);
                    let page = PageInfo::new(&name, &text, &prefixed);
                    session.store().source().refuse_misses();
                    let result = match evaluate(session.store(), &query, &options) {
                        Ok(mut answer) => write_answer(&mut answer, format, &page, &mut out).await,
                        Err(error) => Err(WriteFailure::Query(error)),
                    };
                    if let Err(error) = result {
                        host.log_error(&format!("streaming the answer of {name} stopped: {error:?}"));
                        out.abort(format!("{error:?}")).await;
                    }
                    drop(session);
                }));
                Reply::with_type(200, &format.content_type(), Body::Stream(receiver)).header("x-rete-answer-bytes", total_bytes.to_string())
            }
        };
        // What runs, but not quite as written (calls to unknown functions): once per query.
        Ok(warnings(&query).into_iter().fold(reply, |reply, warning| reply.header("x-rete-warning", header_text(&warning))))
    })
    .await
}

/// The HTML table of a captured answer again, its IRIs (`shown`) by label
/// where one is found: the labels' PSO blocks and texts (at most two rounds,
/// within core's search::names bounds), then a run that reads nothing.
/// `None` when naming failed (the table keeps its prefixed names).
async fn name_table(ctx: &Ctx, session: &mut Session, query: &Query, options: &QueryOptions, text: &str, name: &str, shown: &[String]) -> Option<Out> {
    let labelled = match session.run(async |store| names::name_iris(store, shown, None)).await {
        Ok(Ok(labelled)) => labelled,
        Ok(Err(error)) => {
            ctx.host.log(&format!("naming the results of {name}: {error}"));
            return None;
        }
        Err(error) => {
            ctx.host.log(&format!("naming the results of {name}: {}", error.body()));
            return None;
        }
    };
    let page = PageInfo::new(name, text, &labelled);
    let mut out = Out::capture(WHOLE_BYTES);
    let result = session
        .run(async |store| {
            out.reset();
            match evaluate(store, query, options) {
                Ok(mut answer) => write_answer(&mut answer, Format::Html, &page, &mut out).await,
                Err(error) => Err(WriteFailure::Query(error)),
            }
        })
        .await;
    matches!(result, Ok(Ok(()))).then_some(out).filter(|out| out.is_captured_within(WHOLE_BYTES as u64))
}

/// A header value: printable ASCII, anything else as `?`.
fn header_text(text: &str) -> String {
    text.chars().map(|c| if c == ' ' || c.is_ascii_graphic() { c } else { '?' }).collect()
}

const SD: &str = "http://www.w3.org/ns/sparql-service-description#";
const FORMATS: &str = "http://www.w3.org/ns/formats/";

fn sd(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{SD}{local}"))
}

fn void(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{VOID}{local}"))
}

fn count(value: u64) -> Term {
    Literal::new_typed_literal(value.to_string(), xsd::INTEGER).into()
}

/// Named graphs and their quad counts, decoded from INDEX's graph list.
fn named_graphs<S: RangeSource>(store: &Store<S>) -> Result<Vec<(Term, u64)>, rete_core::ReadError> {
    let graphs = &store.index().graphs;
    let ids: Vec<_> = graphs.iter().map(|graph| graph.id).collect();
    Ok(store.terms(&ids)?.into_iter().zip(graphs.iter().map(|graph| graph.quad_count)).collect())
}

/// The SPARQL Service Description of the endpoint, with the dataset's VoID
/// description (counts from the header, INDEX and CARD).
async fn service_description(ctx: &Ctx, name: &str, format_param: Option<&str>) -> Result<Reply, HttpError> {
    let format = answer_format(ctx, format_param, &GRAPH_FORMATS)?;
    let origin = ctx.origin();
    preamble::serve(ctx, name, &["service-description", format.name(), &origin], async |mut session| {
        let card = super::card::read(&mut session).await?;
        let graphs = session.run(async |store| named_graphs(store)).await??;
        let header = session.store().header().clone();
        Ok(Reply::ok(format, service_description_bytes(ctx, name, format, &card, &graphs, &header)?))
    })
    .await
}

/// The service description's triples, written in `format`.
fn service_description_bytes(ctx: &Ctx, name: &str, format: Format, card: &Card, graphs: &[(Term, u64)], header: &Header) -> Result<Vec<u8>, HttpError> {
    let endpoint = NamedNode::new(format!("{}/{name}/sparql", ctx.origin())).map_err(|e| HttpError::Internal(e.to_string()))?;
    let void_dataset = NamedNode::new_unchecked(format!("{}/{name}/card#dataset", ctx.origin()));
    let mut triples = Vec::new();
    let mut add = |s: NamedOrBlankNode, p: NamedNode, o: Term| triples.push(Triple::new(s, p, o));
    let service: NamedOrBlankNode = endpoint.clone().into();
    add(service.clone(), rdf::TYPE.into(), sd("Service").into());
    add(service.clone(), sd("endpoint"), endpoint.clone().into());
    add(service.clone(), sd("supportedLanguage"), sd("SPARQL11Query").into());
    // Built with `--default-graph union` (FORMAT.md §2 flags): a query without FROM sees every graph.
    if header.union_default_graph() {
        add(service.clone(), sd("feature"), sd("UnionDefaultGraph").into());
    }
    for format in ["SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV", "SPARQL_Results_TSV", "Turtle", "N-Triples", "JSON-LD", "RDF_XML"] {
        add(service.clone(), sd("resultFormat"), NamedNode::new_unchecked(format!("{FORMATS}{format}")).into());
    }
    // The label search index (FORMAT.md §12): text:query in queries, GET /{ds}/search for names.
    if header.section(SectionKind::Search).is_some() {
        let feature: NamedOrBlankNode = NamedNode::new_unchecked(TEXT_QUERY).into();
        add(service.clone(), sd("feature"), feature.clone().into());
        add(feature.clone(), rdf::TYPE.into(), sd("Feature").into());
        let comment = format!("Label search (Jena's text:query form, e.g. ?s text:query (rdfs:label \"linc*\" 10)), answered from the file's search index; also GET {}/{name}/search?q=", ctx.origin());
        add(feature, NamedNode::new_unchecked("http://www.w3.org/2000/01/rdf-schema#comment"), Literal::new_simple_literal(comment).into());
    }
    // The dataset is both the sd:Dataset queried and the void:Dataset described.
    let dataset_node: NamedOrBlankNode = void_dataset.clone().into();
    add(service.clone(), sd("defaultDataset"), dataset_node.clone().into());
    add(dataset_node.clone(), rdf::TYPE.into(), sd("Dataset").into());
    add(dataset_node.clone(), rdf::TYPE.into(), void("Dataset").into());
    add(dataset_node.clone(), void("sparqlEndpoint"), endpoint.clone().into());
    // The card's VoID + DCAT description (issue 7).
    add(dataset_node.clone(), NamedNode::new_unchecked("http://www.w3.org/2000/01/rdf-schema#seeAlso"), NamedNode::new_unchecked(format!("{}/{name}/.well-known/void", ctx.origin())).into());
    add(dataset_node.clone(), void("triples"), count(header.quad_count));
    add(dataset_node.clone(), void("distinctTerms"), count(header.term_count));
    add(dataset_node.clone(), void("properties"), count((card.predicates.len() as u64) + card.predicates_more));
    add(dataset_node.clone(), void("classes"), count((card.classes.len() as u64) + card.classes_more));
    let default_graph: NamedOrBlankNode = BlankNode::default().into();
    add(dataset_node.clone(), sd("defaultGraph"), default_graph.clone().into());
    add(default_graph.clone(), rdf::TYPE.into(), sd("Graph").into());
    let named_quads: u64 = graphs.iter().map(|(_, quads)| quads).sum();
    // The union default graph's size is its distinct triples, which the file does not count.
    if !header.union_default_graph() {
        add(default_graph, void("triples"), count(header.quad_count.saturating_sub(named_quads)));
    }
    let sd_dataset = dataset_node.clone();
    let default_graph = dataset_node;
    for predicate in &card.predicates {
        let Ok(iri) = NamedNode::new(predicate.iri.as_str()) else { continue };
        let partition: NamedOrBlankNode = BlankNode::default().into();
        add(default_graph.clone(), void("propertyPartition"), partition.clone().into());
        add(partition.clone(), void("property"), iri.into());
        add(partition, void("triples"), count(predicate.quads));
    }
    for class in &card.classes {
        let Ok(iri) = NamedNode::new(class.iri.as_str()) else { continue };
        let partition: NamedOrBlankNode = BlankNode::default().into();
        add(default_graph.clone(), void("classPartition"), partition.clone().into());
        add(partition.clone(), void("class"), iri.into());
        add(partition, void("entities"), count(class.instances));
    }
    for (graph_name, quads) in graphs {
        let named: NamedOrBlankNode = BlankNode::default().into();
        let graph: NamedOrBlankNode = BlankNode::default().into();
        add(sd_dataset.clone(), sd("namedGraph"), named.clone().into());
        add(named.clone(), sd("name"), graph_name.clone());
        add(named, sd("graph"), graph.clone().into());
        add(graph.clone(), rdf::TYPE.into(), sd("Graph").into());
        add(graph, void("triples"), count(*quads));
    }

    // Grouped by subject, so Turtle writes each node once.
    triples.sort_by_cached_key(|t| (matches!(t.subject, NamedOrBlankNode::BlankNode(_)), t.subject.to_string()));
    let bytes = match format {
        Format::Rdf(rf) => triples_to_bytes(&triples, rf, &[("sd", SD), ("void", VOID), ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"), ("xsd", "http://www.w3.org/2001/XMLSchema#")])
            .map_err(|e| HttpError::Internal(format!("writing the service description failed: {e}")))?,
        _ => pages::query::endpoint(name, &serde_json::to_value(card).map_err(|e| HttpError::Internal(e.to_string()))?, header.quad_count, header.term_count, graphs.len()).into_bytes(),
    };
    Ok(bytes)
}
