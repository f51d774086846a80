//! Linked-data views: `/{ds}/resource?iri=` lists the triples with an IRI
//! as subject (outgoing) then as object (incoming), a page at a time with a
//! `Link: rel="next"`, in Turtle, N-Triples, JSON-LD, RDF/XML or HTML.
//! Base-IRI mode answers a GET of an IRI under a dataset's base per Cool
//! URIs: 303 to the resource view in the negotiated format, or for a hash
//! IRI's document (`…/doc` when the data has `…/doc#x`) that document itself.

use crate::answer::triples_to_bytes;
use crate::conneg::{Format, GRAPH_FORMATS};
use crate::http::{Ctx, Reply};
use crate::http_error::HttpError;
use crate::pages;
use crate::pages::term::encode_param;
use crate::preamble;
use crate::session::Session;
use oxrdf::{NamedNode, NamedNodeRef, Term, TermRef, Triple};
use rete_core::read::{GraphFilter, QuadPattern, SPECULATE_MAX_BLOCKS, SPECULATE_MAX_BYTES};
use rete_core::results::ResultFormat;
use rete_core::search::names::{self, Labels, Names};
use rete_core::{Permutation, RangeSource, ReadError, Store, TermId, encode_term};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The formats of a resource view, the server's preference first.
pub const RESOURCE_FORMATS: [Format; 5] =
    [Format::Rdf(ResultFormat::Turtle), Format::Rdf(ResultFormat::NTriples), Format::Rdf(ResultFormat::JsonLd), Format::Rdf(ResultFormat::RdfXml), Format::Html];

/// A hash-IRI document lists at most this many `doc#…` IRIs.
const MAX_HASH_IRIS: usize = 100;

/// One page of a view: triples, each marked outgoing (`true`) or incoming.
struct Page {
    triples: Vec<(Triple, bool)>,
    more: bool,
    /// The page's terms by id, and the labels found for them (when asked).
    terms: HashMap<TermId, Term>,
    labels: Labels,
}

/// The page of `iris`' links at `offset`, at most `limit` triples; with
/// `label_predicates`, the labels of the page's IRIs too, their PSO blocks
/// read in the same round as the page's terms.
fn collect<S: RangeSource>(store: &Store<S>, iris: &[NamedNode], offset: u64, limit: u64, label_predicates: Option<&[TermId]>) -> Result<Page, ReadError> {
    let mut first_error = None;
    let mut ids = Vec::new();
    for iri in iris {
        let encoded = encode_term(iri.as_ref());
        match store.encoded_term_id(&encoded) {
            Ok(Some(id)) => ids.push(id),
            Ok(None) => {}
            Err(error) => {
                // While the dictionary block is being fetched, fetch the quad
                // blocks the IRI's id must fall in, in the same round.
                if let Some(id_range) = store.ids_around_term(&encoded) {
                    for permutation in [Permutation::Spo, Permutation::Osp] {
                        store.speculate(permutation, std::slice::from_ref(&id_range), SPECULATE_MAX_BLOCKS, SPECULATE_MAX_BYTES);
                    }
                }
                // Goes on, so one run records every missing block.
                first_error = first_error.or(Some(error));
            }
        }
    }
    if let Some(error) = first_error {
        return Err(error);
    }
    let mut keys: Vec<([TermId; 3], bool)> = Vec::new();
    let mut seen = 0u64;
    let mut more = false;
    'outer: for &id in &ids {
        let patterns = [
            (QuadPattern { subject: Some(id), predicate: None, object: None, graph: GraphFilter::Any }, true),
            (QuadPattern { subject: None, predicate: None, object: Some(id), graph: GraphFilter::Any }, false),
        ];
        for (pattern, outgoing) in patterns {
            let mut previous: Option<[TermId; 3]> = None;
            for quad in store.quads(pattern) {
                let [s, p, o, _] = quad?;
                // A triple in several graphs is listed once (its quads are adjacent).
                if previous == Some([s, p, o]) {
                    continue;
                }
                previous = Some([s, p, o]);
                if seen >= offset {
                    if keys.len() as u64 == limit {
                        more = true;
                        break 'outer;
                    }
                    keys.push(([s, p, o], outgoing));
                }
                seen += 1;
            }
        }
    }
    let mut ids: Vec<TermId> = keys.iter().flat_map(|([s, p, o], _)| [*s, *p, *o]).collect();
    ids.sort_unstable();
    ids.dedup();
    // Linked resources first, then predicates: they are named in this order when the bounds cut.
    let linked: Vec<TermId> = keys.iter().map(|([s, _, o], out)| if *out { *o } else { *s }).chain(keys.iter().map(|([_, p, _], _)| *p)).collect();
    let labels = label_predicates.map_or(Ok(Labels::default()), |predicates| names::find_labels(store, predicates, &linked, None));
    let terms: HashMap<TermId, Term> = ids.iter().copied().zip(store.terms(&ids)?).collect();
    let labels = labels?;
    let mut triples = Vec::with_capacity(keys.len());
    for ([s, p, o], outgoing) in keys {
        let (Some(Term::NamedNode(predicate)), Some(object)) = (terms.get(&p), terms.get(&o)) else { continue };
        let subject: oxrdf::NamedOrBlankNode = match terms.get(&s) {
            Some(Term::NamedNode(node)) => node.clone().into(),
            Some(Term::BlankNode(node)) => node.clone().into(),
            _ => continue,
        };
        triples.push((Triple::new(subject, predicate.clone(), object.clone()), outgoing));
    }
    Ok(Page { triples, more, terms, labels })
}

/// The IRIs `iri#…` of the dataset (a hash-IRI document's resources), at most `max`.
fn hash_iris<S: RangeSource>(store: &Store<S>, iri: &str, max: usize) -> Result<Vec<NamedNode>, ReadError> {
    let prefix = encode_term(TermRef::NamedNode(NamedNodeRef::new_unchecked(&format!("{iri}#"))));
    let terms = store.terms_with_prefix(&prefix, max)?;
    Ok(terms.into_iter().filter_map(|term| if let Term::NamedNode(node) = term { Some(node) } else { None }).collect())
}

fn page_number(ctx: &Ctx) -> Result<u64, HttpError> {
    match ctx.param("page") {
        None => Ok(1),
        Some(text) => text.parse::<u64>().ok().filter(|n| (1..=1_000_000).contains(n)).ok_or_else(|| HttpError::BadRequest(format!("page {text:?} is not a number from 1 to 1000000"))),
    }
}

/// GET `/{ds}/resource?iri=IRI[&page=N][&format=F]`.
pub async fn resource(ctx: &Ctx, name: &str) -> Result<Reply, HttpError> {
    let text = ctx.param("iri").ok_or_else(|| HttpError::BadRequest("the iri parameter is missing: /{ds}/resource?iri=IRI".into()))?;
    let iri = NamedNode::new(text.as_str()).map_err(|e| HttpError::BadRequest(format!("invalid IRI <{text}>: {e}")))?;
    let page = page_number(ctx)?;
    let format = ctx.negotiate(ctx.param("format").as_deref(), &RESOURCE_FORMATS)?;
    preamble::serve(ctx, name, &["resource", format.name(), iri.as_str(), &page.to_string()], async |mut session| {
        let view = View { name, title: iri.as_str().to_owned(), iri: iri.as_str().to_owned(), page, format };
        view.render(ctx, &mut session, std::slice::from_ref(&iri)).await
    })
    .await
}

/// Base-IRI mode: `iri` was requested of the Worker and lies under the base of dataset `name`.
pub async fn base_iri(ctx: &Ctx, name: &str, iri: &str) -> Result<Reply, HttpError> {
    let node = NamedNode::new(iri).map_err(|e| HttpError::BadRequest(format!("<{iri}> is not an IRI: {e}")))?;
    let format = ctx.negotiate(ctx.param("format").as_deref(), &RESOURCE_FORMATS)?;
    let page = page_number(ctx)?;
    preamble::serve(ctx, name, &["base-iri", format.name(), iri, &page.to_string()], async |mut session| {
        let (has_triples, hashes) = session
            .run(async |store| {
                let hashes = hash_iris(store, iri, MAX_HASH_IRIS);
                let has = collect(store, std::slice::from_ref(&node), 0, 1, None).map(|page| !page.triples.is_empty());
                Ok::<_, ReadError>((has?, hashes?))
            })
            .await??;
        if !hashes.is_empty() {
            // A hash IRI's document: the client asked for `doc`, the resources are `doc#…`.
            let mut iris = Vec::with_capacity(hashes.len() + 1);
            if has_triples {
                iris.push(node.clone());
            }
            iris.extend(hashes);
            let view = View { name, title: iri.to_owned(), iri: iri.to_owned(), page, format };
            return view.render_document(ctx, &mut session, &iris).await;
        }
        if !has_triples {
            return Err(HttpError::NotFound(format!("<{iri}> has no triples in {name}")));
        }
        Ok(Reply::see_other(&format!("{}/{name}/resource?iri={}&format={}", ctx.origin(), encode_param(iri), format.name())))
    })
    .await
}

/// A view being rendered.
struct View<'a> {
    name: &'a str,
    title: String,
    /// The `iri` parameter of the view's own URL.
    iri: String,
    page: u64,
    format: Format,
}

impl View<'_> {
    async fn render(&self, ctx: &Ctx, session: &mut Session, iris: &[NamedNode]) -> Result<Reply, HttpError> {
        self.render_with(ctx, session, iris, format!("/{}/resource?iri={}", self.name, encode_param(&self.iri))).await
    }

    async fn render_document(&self, ctx: &Ctx, session: &mut Session, iris: &[NamedNode]) -> Result<Reply, HttpError> {
        let path = ctx.url.path().to_owned();
        self.render_with(ctx, session, iris, format!("{path}?")).await
    }

    /// `base` is this view's URL path without `page`; it ends in `?` or has a query.
    async fn render_with(&self, ctx: &Ctx, session: &mut Session, iris: &[NamedNode], base: String) -> Result<Reply, HttpError> {
        let limit = ctx.config.resource_page_triples;
        let offset = (self.page - 1).saturating_mul(limit);
        let html = self.format == Format::Html;
        let (page, mut names) = session
            .run(async |store| {
                // The page names IRIs: the card's namespaces, the label predicates' ids (their
                // dictionary blocks in the round of the IRI's), then labels through PSO.
                let card = if html { Some(store.card()?) } else { None };
                let predicates = card.as_ref().map(|card| names::term_ids(store, &names::label_predicate_iris(card)));
                let found: Option<Vec<TermId>> = predicates.as_ref().and_then(|r| r.as_ref().ok()).map(|ids| ids.iter().flatten().copied().collect());
                let page = collect(store, iris, offset, limit, found.as_deref());
                if let Some(Err(error)) = predicates {
                    return Err(error);
                }
                Ok((page?, Names::new(card.as_ref().map_or(&[], |c| c.namespaces.as_slice()))))
            })
            .await??;
        names.add_labels(page.terms.iter().map(|(id, term)| (*id, term)), &page.labels);
        if page.triples.is_empty() {
            return Err(HttpError::NotFound(if self.page == 1 {
                format!("<{}> has no triples in {}", self.iri, self.name)
            } else {
                format!("page {} of <{}> is past the last page", self.page, self.iri)
            }));
        }
        let separator = if base.ends_with('?') { "" } else { "&" };
        let format_param = ctx.param("format").map(|f| format!("&format={}", encode_param(&f))).unwrap_or_default();
        let next = page.more.then(|| format!("{}{base}{separator}page={}{format_param}", ctx.origin(), self.page + 1));
        let bytes = match self.format {
            Format::Rdf(format) => {
                let triples: Vec<Triple> = page.triples.iter().map(|(t, _)| t.clone()).collect();
                if !format.holds_triple_terms() && triples.iter().any(|t| t.object.is_triple()) {
                    return Err(HttpError::triple_terms(self.format, &GRAPH_FORMATS));
                }
                let mut bytes = Vec::new();
                if matches!(format, ResultFormat::Turtle | ResultFormat::NTriples) {
                    let _ = writeln!(
                        Buf(&mut bytes),
                        "# {} triples with <{}> as subject or object, page {}{}",
                        triples.len(),
                        self.title,
                        self.page,
                        next.as_ref().map(|n| format!("; next page: <{n}>")).unwrap_or_default()
                    );
                }
                bytes.extend(triples_to_bytes(&triples, format, &[]).map_err(|e| HttpError::Internal(format!("writing the view failed: {e}")))?);
                bytes
            }
            _ => pages::resource::View { dataset: self.name, iri: &self.iri, page: self.page, triples: &page.triples, base: &base, format_param: &format_param, more: page.more, names: &names }.html().into_bytes(),
        };
        let mut reply = Reply::ok(self.format, bytes);
        if let Some(next) = next {
            reply = reply.header("link", format!("<{next}>; rel=\"next\""));
        }
        Ok(reply)
    }
}

/// `write!` into a byte vector.
struct Buf<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Buf<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
