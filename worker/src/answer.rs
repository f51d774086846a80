//! Writing an answer item by item into an [`Out`], which either captures it
//! (a run that may still miss blocks: keep it up to a cap, past that only
//! count it) or streams it in chunks to the client with backpressure. The
//! same code does both, so the run that streams is the run that was checked.
//! A captured answer is kept in chunks: one small enough is sent whole, a
//! larger one that was still kept is streamed from its chunks without
//! evaluating it again.

use crate::conneg::Format;
use crate::pages;
use futures_channel::mpsc;
use futures_util::SinkExt;
use oxrdf::{TermRef, Triple};
use oxrdfio::RdfSerializer;
use rete_core::results::{ResultFormat, SolutionsWriter, WriteError};
use rete_core::search::names::Names;
use rete_core::sparql::{Answer, QueryError};
use sparesults::QueryResultsSerializer;
use std::cell::RefCell;
use std::collections::HashSet;
use std::io::{self, Write};
use std::rc::Rc;

/// Bytes sent to the client at a time when streaming (and kept at a time when
/// capturing). Each chunk crosses into JavaScript on its own (a channel send,
/// a pull of the body's stream, a `Uint8Array` and its copy, promises): at
/// 64 KiB LUBM q14's 7.2 MB answer paid that 110 times and took ~10% more
/// Worker CPU than at 256 KiB (issue 14, docs/BENCHMARK.md "Session 20: large
/// answers"); workerd itself moves a body at about the same cost per byte
/// whatever its chunks.
const CHUNK_BYTES: usize = 256 << 10;

/// Room past [`CHUNK_BYTES`] in a chunk's buffer for the item that crosses it.
/// A buffer starts with room for a whole chunk: grown from empty, each chunk
/// was copied again at every doubling and held up to twice its bytes of wasm
/// memory.
const CHUNK_SLACK_BYTES: usize = 8 << 10;

/// An empty buffer with room for a chunk.
fn chunk_buffer() -> Vec<u8> {
    Vec::with_capacity(CHUNK_BYTES + CHUNK_SLACK_BYTES)
}

/// The VoID vocabulary (service description, card).
pub const VOID: &str = "http://rdfs.org/ns/void#";

/// Why writing stopped.
#[derive(Debug)]
pub enum WriteFailure {
    /// Evaluation failed (a missing block, a budget, …).
    Query(QueryError),
    /// A serializer failed.
    Io(io::Error),
    /// The format cannot write an RDF 1.2 triple term of the answer (JSON-LD).
    TripleTerm(Format),
    /// The client went away.
    Closed,
}

impl From<io::Error> for WriteFailure {
    fn from(error: io::Error) -> Self {
        Self::Io(error)
    }
}

impl From<QueryError> for WriteFailure {
    fn from(error: QueryError) -> Self {
        Self::Query(error)
    }
}

/// A row written from ids fails by evaluation or by its writer; the other
/// kinds are found before the first row (`SolutionsWriter::start`).
impl From<WriteError> for WriteFailure {
    fn from(error: WriteError) -> Self {
        match error {
            WriteError::Query(error) => Self::Query(error),
            WriteError::Io(error) => Self::Io(error),
            other => Self::Io(io::Error::other(other.to_string())),
        }
    }
}

/// The writer serializers write into; [`Out`] drains it between items.
#[derive(Clone)]
struct SharedBuf(Rc<RefCell<Vec<u8>>>);

impl SharedBuf {
    fn new() -> Self {
        Self(Rc::new(RefCell::new(chunk_buffer())))
    }

    /// What was written since the last take; the buffer starts again with room for a chunk.
    fn take(&self) -> Vec<u8> {
        std::mem::replace(&mut *self.0.borrow_mut(), chunk_buffer())
    }

    /// What was written last, at the end of an answer: nothing more is written.
    fn take_last(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl Write for SharedBuf {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Mode {
    Capture(Captured),
    Stream(mpsc::Sender<Result<Vec<u8>, worker::Error>>),
}

/// What a capturing run wrote: kept in chunks of about [`CHUNK_BYTES`]
/// while the whole is at most `cap_bytes`, past that only counted.
#[derive(Debug)]
struct Captured {
    cap_bytes: usize,
    chunks: Vec<Vec<u8>>,
    total_bytes: u64,
}

impl Captured {
    fn new(cap_bytes: usize) -> Self {
        Self { cap_bytes, chunks: Vec::new(), total_bytes: 0 }
    }

    fn overflowed(&self) -> bool {
        self.total_bytes > self.cap_bytes as u64
    }

    fn clear(&mut self) {
        self.chunks = Vec::new();
        self.total_bytes = 0;
    }

    fn keep(&mut self, chunk: Vec<u8>) {
        self.total_bytes += chunk.len() as u64;
        if self.overflowed() {
            self.chunks = Vec::new();
        } else if !chunk.is_empty() {
            self.chunks.push(chunk);
        }
    }
}

/// Where an answer goes.
pub struct Out {
    buf: SharedBuf,
    mode: Mode,
    /// Bytes streamed so far.
    sent_bytes: u64,
}

impl Out {
    /// Keeps up to `cap_bytes`; past that only counts.
    pub fn capture(cap_bytes: usize) -> Self {
        Self { buf: SharedBuf::new(), mode: Mode::Capture(Captured::new(cap_bytes)), sent_bytes: 0 }
    }

    /// Sends chunks to a response body.
    pub fn stream(sender: mpsc::Sender<Result<Vec<u8>, worker::Error>>) -> Self {
        Self { buf: SharedBuf::new(), mode: Mode::Stream(sender), sent_bytes: 0 }
    }

    /// Forgets what a discarded run wrote.
    pub fn reset(&mut self) {
        self.buf.0.borrow_mut().clear();
        self.sent_bytes = 0;
        if let Mode::Capture(captured) = &mut self.mode {
            captured.clear();
        }
    }

    /// The whole answer in chunks of about [`CHUNK_BYTES`], when it fit
    /// under the cap.
    pub fn into_chunks(mut self) -> Option<Vec<Vec<u8>>> {
        self.drain_capture(true);
        match self.mode {
            Mode::Capture(captured) if !captured.overflowed() => Some(captured.chunks),
            _ => None,
        }
    }

    /// Whether a finished answer of at most `max_bytes` was kept whole.
    pub fn is_captured_within(&self, max_bytes: u64) -> bool {
        matches!(&self.mode, Mode::Capture(captured) if !captured.overflowed()) && self.total_bytes() <= max_bytes
    }

    /// Bytes written so far.
    pub fn total_bytes(&self) -> u64 {
        let written = match &self.mode {
            Mode::Capture(captured) => captured.total_bytes,
            Mode::Stream(_) => self.sent_bytes,
        };
        written + self.buf.0.borrow().len() as u64
    }

    /// Keeps what was written as a chunk; `last` at the end of the answer.
    fn drain_capture(&mut self, last: bool) {
        if let Mode::Capture(captured) = &mut self.mode {
            captured.keep(if last { self.buf.take_last() } else { self.buf.take() });
        }
    }

    /// Whether a chunk is written, to be moved on by [`Self::move_chunk_on`].
    /// Checked after each item: between chunks an item costs nothing more
    /// here, no row is copied once more and no future is built (an `async`
    /// call per row built and polled one; issue 14, docs/BENCHMARK.md
    /// "Session 25: a large answer's copies in wasm").
    fn chunk_written(&self) -> bool {
        self.buf.0.borrow().len() >= CHUNK_BYTES
    }

    /// Once [`CHUNK_BYTES`] are written ([`Self::chunk_written`]), moves them
    /// on (kept as a chunk, or sent, waiting while the client is behind).
    async fn move_chunk_on(&mut self) -> Result<(), WriteFailure> {
        match &mut self.mode {
            Mode::Capture(_) => self.drain_capture(false),
            Mode::Stream(sender) => {
                let chunk = self.buf.take();
                self.sent_bytes += chunk.len() as u64;
                sender.send(Ok(chunk)).await.map_err(|_| WriteFailure::Closed)?;
            }
        }
        Ok(())
    }

    /// Sends or keeps the rest.
    pub async fn finish(&mut self) -> Result<(), WriteFailure> {
        match &mut self.mode {
            Mode::Capture(_) => self.drain_capture(true),
            Mode::Stream(sender) => {
                let chunk = self.buf.take_last();
                if !chunk.is_empty() {
                    self.sent_bytes += chunk.len() as u64;
                    sender.send(Ok(chunk)).await.map_err(|_| WriteFailure::Closed)?;
                }
                sender.close_channel();
            }
        }
        Ok(())
    }

    /// Ends a stream with an error, which aborts the response: the client
    /// sees a cut connection, never a complete-looking partial answer.
    pub async fn abort(&mut self, message: String) {
        if let Mode::Stream(sender) = &mut self.mode {
            let _ = sender.send(Err(worker::Error::RustError(message))).await;
            sender.close_channel();
        }
    }

    /// Appends text directly (HTML pages, comments).
    pub fn text(&mut self, text: &str) {
        self.buf.0.borrow_mut().extend_from_slice(text.as_bytes());
    }
}

/// What an HTML page of results needs besides the answer.
pub struct PageInfo<'a> {
    /// The dataset name, for links.
    pub dataset: &'a str,
    /// The query text, shown in the form.
    pub query: &'a str,
    /// How the table shows IRIs: labels found, else prefixed names (README "Names").
    pub names: &'a Names,
    /// The IRIs the table shows, for naming them after the answer is known.
    pub shown: RefCell<ShownIris>,
}

impl<'a> PageInfo<'a> {
    /// A page whose IRIs are shown as `names` says.
    pub fn new(dataset: &'a str, query: &'a str, names: &'a Names) -> Self {
        Self { dataset, query, names, shown: RefCell::default() }
    }

    /// A term as a table cell, by name, noting its IRIs.
    fn cell(&self, term: TermRef<'_>) -> String {
        self.shown.borrow_mut().note(term);
        pages::term::named_term(self.dataset, term, self.names)
    }

    /// A predicate as a table cell: its prefixed name first, as resource pages show predicates.
    fn predicate_cell(&self, predicate: oxrdf::NamedNodeRef<'_>) -> String {
        self.shown.borrow_mut().note(predicate.into());
        pages::term::predicate_link(self.dataset, predicate.as_str(), self.names)
    }
}

/// The distinct IRIs of a results table, in the order shown, the first
/// [`MAX_NAMED_IRIS`]: a table's labels are looked up for these.
#[derive(Debug, Default)]
pub struct ShownIris {
    /// The IRIs, first shown first.
    pub iris: Vec<String>,
    seen: HashSet<String>,
}

/// The most IRIs of a results table whose labels are looked up (the rest
/// go by prefixed name), as many as `GET /{ds}/labels` names a request.
pub const MAX_NAMED_IRIS: usize = crate::routes::labels::MAX_IRIS;

impl ShownIris {
    fn note(&mut self, term: TermRef<'_>) {
        match term {
            TermRef::NamedNode(node) if self.iris.len() < MAX_NAMED_IRIS => {
                if self.seen.insert(node.as_str().to_owned()) {
                    self.iris.push(node.as_str().to_owned());
                }
            }
            TermRef::Triple(triple) => {
                self.note(triple.subject.as_ref().into());
                self.note(triple.predicate.as_ref().into());
                self.note(triple.object.as_ref());
            }
            _ => {}
        }
    }
}

fn mismatch(format: Format) -> WriteFailure {
    WriteFailure::Io(io::Error::other(format!("format {} cannot hold this answer", format.name())))
}

/// Writes an answer, pulling one solution or triple at a time.
///
/// The answer is borrowed, not taken: the caller drops it, outside this
/// function's future. Dropping it drops the query's iterator tree through a
/// `dyn` call whose target is the plan's root, which differs from query to
/// query. V8 inlines such a call for the targets it has seen when it optimizes
/// the function that makes it, and throws that function's optimized code away
/// when another target turns up. In this future, which holds the per-row loop,
/// that sent the next requests of a query whose plan was new to the isolate
/// through V8's baseline code until the future was optimized again: LUBM q08
/// after q06 took ~31 ms of Worker CPU instead of ~22 for one to three warm
/// requests, in some workerd processes for all of them (issue 14,
/// docs/BENCHMARK.md "Session 27: LUBM q08's two modes"). The caller's future
/// only waits on this one, so losing its optimized code costs nothing.
pub async fn write_answer(answer: &mut Answer<'_>, format: Format, page: &PageInfo<'_>, out: &mut Out) -> Result<(), WriteFailure> {
    match answer {
        Answer::Solutions(solutions) => {
            let variables = solutions.variables().to_vec();
            match format {
                Format::Rdf(rf) => {
                    let mut writer = match SolutionsWriter::start(out.buf.clone(), rf, variables) {
                        Ok(writer) => writer,
                        Err(WriteError::Io(error)) => return Err(error.into()),
                        Err(_) => return Err(mismatch(format)),
                    };
                    while let Some(written) = writer.serialize_next(solutions) {
                        written?;
                        if out.chunk_written() {
                            out.move_chunk_on().await?;
                        }
                    }
                    writer.finish()?;
                }
                Format::Html => {
                    out.text(&pages::query::results_top(page.dataset, page.query));
                    let columns: Vec<String> = variables.iter().map(|v| format!("?{}", v.as_str())).collect();
                    out.text(&pages::query::table_top(&columns));
                    let mut count = 0u64;
                    for solution in solutions.by_ref() {
                        let solution = solution?;
                        let cells: Vec<String> = variables.iter().map(|v| solution.get(v).map(|t| page.cell(t.as_ref())).unwrap_or_default()).collect();
                        out.text(&pages::query::row(&cells));
                        count += 1;
                        if out.chunk_written() {
                            out.move_chunk_on().await?;
                        }
                    }
                    out.text(&pages::query::table_end(count, "solutions"));
                }
                Format::Json => return Err(mismatch(format)),
            }
        }
        Answer::Boolean(value) => match format {
            Format::Rdf(rf) => {
                let rf = rf.results_format().ok_or_else(|| mismatch(format))?;
                QueryResultsSerializer::from_format(rf).serialize_boolean_to_writer(out.buf.clone(), *value)?;
            }
            Format::Html => {
                out.text(&pages::query::results_top(page.dataset, page.query));
                out.text(&pages::query::boolean(*value));
            }
            Format::Json => return Err(mismatch(format)),
        },
        Answer::Graph(triples) => match format {
            Format::Rdf(rf) => {
                let rdf = rf.rdf_format().ok_or_else(|| mismatch(format))?;
                let mut serializer = RdfSerializer::from_format(rdf).for_writer(out.buf.clone());
                for triple in triples.by_ref() {
                    let triple = triple?;
                    if !rf.holds_triple_terms() && triple.object.is_triple() {
                        return Err(WriteFailure::TripleTerm(format));
                    }
                    serializer.serialize_triple(&triple)?;
                    if out.chunk_written() {
                        out.move_chunk_on().await?;
                    }
                }
                serializer.finish()?;
            }
            Format::Html => {
                out.text(&pages::query::results_top(page.dataset, page.query));
                out.text(&pages::query::table_top(&["subject".into(), "predicate".into(), "object".into()]));
                let mut count = 0u64;
                for triple in triples.by_ref() {
                    let triple = triple?;
                    let cells = [page.cell(triple.subject.as_ref().into()), page.predicate_cell(triple.predicate.as_ref()), page.cell(triple.object.as_ref())];
                    out.text(&pages::query::row(&cells));
                    count += 1;
                    if out.chunk_written() {
                        out.move_chunk_on().await?;
                    }
                }
                out.text(&pages::query::table_end(count, "triples"));
            }
            Format::Json => return Err(mismatch(format)),
        },
        #[allow(unreachable_patterns)]
        _ => return Err(mismatch(format)),
    }
    out.finish().await
}

/// Serializes a small graph at once (service descriptions, resource pages).
pub fn triples_to_bytes(triples: &[Triple], format: ResultFormat, prefixes: &[(&str, &str)]) -> Result<Vec<u8>, io::Error> {
    let rdf = format.rdf_format().ok_or_else(|| io::Error::other(format!("{format} is not an RDF format")))?;
    let mut serializer = RdfSerializer::from_format(rdf);
    for (name, iri) in prefixes {
        serializer = serializer.with_prefix(*name, *iri).map_err(io::Error::other)?;
    }
    let mut writer = serializer.for_writer(Vec::new());
    for triple in triples {
        writer.serialize_triple(triple)?;
    }
    writer.finish()
}
