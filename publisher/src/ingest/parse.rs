//! Parsing inputs with oxrdfio into encoded terms, on all cores. N-Triples
//! and N-Quads are cut into chunks at line ends and the chunks parsed in
//! parallel; other syntaxes are parsed as one stream. Either way parsing the
//! next batch overlaps with the caller consuming the previous one, and the
//! caller sees quads in input order, so nothing depends on the thread count.
//!
//! Blank nodes are renamed per file in order of first appearance: labels are
//! scoped to their document (RDF merge), and Turtle's anonymous nodes get
//! random labels from the parser, which would make builds differ run to run.

use super::input::Input;
use anyhow::{Context, Result, bail};
use oxrdf::{GraphName, Quad};
use oxrdfio::{RdfFormat, RdfParseError, RdfParser, RdfSyntaxError, ReaderQuadParser};
use rayon::prelude::*;
use rete_core::format::term::{MAX_TRIPLE_TERM_DEPTH, TRIPLE_TERM, encode_term_into, split_triple_term, triple_term_depth};
use rustc_hash::FxHashMap;
use std::fmt;
use std::io::{BufRead, Read};

/// A syntax error located in an input file.
#[derive(Debug)]
pub struct InputError {
    /// File name.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column (code points).
    pub column: u64,
    /// 0-based byte offset.
    pub byte: u64,
    /// Parser message.
    pub message: String,
    /// The offending line, when the input can be read again.
    pub quote: Option<String>,
    /// A next step for the user, when the mistake is recognisable.
    pub hint: Option<String>,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {} (byte {})", self.file, self.line, self.column, self.message, self.byte)?;
        if let Some(quote) = &self.quote {
            let shown: String = quote.chars().take(200).collect();
            let caret = " ".repeat(self.column.saturating_sub(1).min(200) as usize);
            write!(f, "\n  | {shown}\n  | {caret}^")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// Renames blank nodes to `b0`, `b1`, … across all inputs of one build.
#[derive(Default)]
pub struct BlankNodes {
    current_file: FxHashMap<Box<[u8]>, u64>,
    next: u64,
    renamed: Vec<u8>,
}

impl BlankNodes {
    /// Starts a new document scope.
    pub fn next_file(&mut self) {
        self.current_file.clear();
    }

    /// The encoded blank node (`0x02` + label) renamed.
    fn rename(&mut self, encoded: &[u8]) -> &[u8] {
        let number = match self.current_file.get(encoded) {
            Some(&number) => number,
            None => {
                self.current_file.insert(encoded.into(), self.next);
                self.next += 1;
                self.next - 1
            }
        };
        self.renamed.clear();
        self.renamed.push(encoded[0]);
        self.renamed.push(b'b');
        self.renamed.extend_from_slice(number.to_string().as_bytes());
        &self.renamed
    }

    /// Appends an encoded term to `out` with its blank nodes renamed, those
    /// inside a triple term included (FORMAT.md §5.1: its parts are in full).
    fn rename_into(&mut self, encoded: &[u8], out: &mut Vec<u8>) {
        match (encoded.first(), split_triple_term(encoded)) {
            (Some(&BLANK_NODE), _) => out.extend_from_slice(self.rename(encoded)),
            (Some(&TRIPLE_TERM), Some([subject, predicate, object])) => {
                out.push(TRIPLE_TERM);
                self.rename_into(subject, out);
                out.push(0);
                out.extend_from_slice(predicate);
                out.push(0);
                self.rename_into(object, out);
            }
            _ => out.extend_from_slice(encoded),
        }
    }
}

/// What parsing one input gave.
#[derive(Debug, Default, Clone)]
pub struct ParseStats {
    /// Statements read.
    pub quads: u64,
    /// Bad statements skipped with `--lenient`.
    pub skipped: u64,
    /// Prefixes the input declared (Turtle, TriG), as (prefix, namespace), for the card.
    pub prefixes: Vec<(String, String)>,
}

/// Input bytes per chunk of N-Triples/N-Quads given to one parsing task.
const CHUNK_BYTES: usize = 256 << 10;
/// Bytes the first read of a chunk may fill; each later read may fill as
/// many as the chunk holds, up to [`CHUNK_BYTES`]. The buffer a read fills
/// is zeroed first: zeroing the whole chunk for every read was most of a
/// small document's parse (a 2 KB input zeroed 256 KiB twice).
const FIRST_READ_BYTES: usize = 16 << 10;
/// Quads per batch of a syntax parsed as one stream.
const STREAM_BATCH_QUADS: usize = 8192;

/// Parses one input and calls `sink` with each quad's encoded `[s, p, o, g]`
/// (`g` empty for the default graph), in input order.
pub fn parse_input(
    input: &Input,
    lenient: bool,
    blank_nodes: &mut BlankNodes,
    progress: impl FnMut(usize) + Send + 'static,
    mut sink: impl FnMut([&[u8]; 4]) -> Result<()> + Send,
) -> Result<ParseStats> {
    blank_nodes.next_file();
    let reader = input.open(progress)?;
    let mut parser = RdfParser::from_format(input.format);
    if !input.is_stdin()
        && let Ok(path) = std::path::absolute(&input.path)
        && let Ok(base) = oxrdf::NamedNode::new(format!("file://{}", path.display()))
    {
        parser = parser.with_base_iri(base.as_str()).unwrap_or_else(|_| RdfParser::from_format(input.format));
    }
    let mut source = match input.format {
        RdfFormat::NTriples | RdfFormat::NQuads => {
            // Two batches are alive at a time (one parsed, one consumed): keep them small.
            let chunks_per_batch = (4 * rayon::current_num_threads()).clamp(2, 32);
            Source::Lines(Lines { name: input.display_name(), parser, reader, lenient, pending: Vec::new(), end: false, chunks_per_batch })
        }
        _ => Source::Stream(Stream { quads: parser.for_reader(reader), lenient, end: false }),
    };
    let mut consumer = Consumer { input, blank_nodes, stats: ParseStats::default(), line_base: 0, byte_base: 0 };
    let mut current = source.next_batch()?;
    while let Some(batch) = current.take() {
        let (consumed, next) = rayon::join(|| consumer.consume(batch, &mut sink), || source.next_batch());
        consumed?;
        current = next?;
    }
    Ok(consumer.stats)
}

/// One stretch of input, parsed and encoded.
#[derive(Default)]
struct Chunk {
    /// Encoded terms back to back, four per quad (the graph is empty for the default graph).
    terms: Vec<u8>,
    /// The length of each term in `terms`.
    lengths: Vec<u32>,
    /// Bad statements skipped (`--lenient`).
    skipped: u64,
    /// Input bytes and line breaks the chunk spans, to locate errors in later chunks.
    bytes: u64,
    lines: u64,
    /// What ended parsing, after the quads above.
    stop: Option<Stop>,
    /// Prefixes declared by the input, given with its last chunk.
    prefixes: Vec<(String, String)>,
}

enum Stop {
    Syntax(RdfSyntaxError),
    Io(std::io::Error),
    /// A term over the format's limit.
    TooLong { bytes: usize },
    /// RDF 1.2 triple terms nested deeper than the format allows (FORMAT.md §5.1).
    TooDeep { depth: usize },
}

impl Chunk {
    /// Encodes a parsed quad; false when a term is over the limit (then `stop` is set).
    fn push(&mut self, quad: &Quad, scratch: &mut Vec<u8>) -> bool {
        let depth = triple_term_depth(quad.object.as_ref());
        if depth > MAX_TRIPLE_TERM_DEPTH {
            self.stop = Some(Stop::TooDeep { depth });
            return false;
        }
        let graph = match &quad.graph_name {
            GraphName::DefaultGraph => None,
            GraphName::NamedNode(node) => Some(node.as_ref().into()),
            GraphName::BlankNode(node) => Some(node.as_ref().into()),
        };
        let start = self.lengths.len();
        for term in [Some(quad.subject.as_ref().into()), Some(quad.predicate.as_ref().into()), Some(quad.object.as_ref()), graph] {
            match term {
                Some(term) => encode_term_into(term, scratch),
                None => scratch.clear(),
            }
            if scratch.len() > rete_core::format::MAX_TERM_BYTES {
                self.terms.truncate(self.terms.len() - self.lengths[start..].iter().map(|&l| l as usize).sum::<usize>());
                self.lengths.truncate(start);
                self.stop = Some(Stop::TooLong { bytes: scratch.len() });
                return false;
            }
            self.terms.extend_from_slice(scratch);
            self.lengths.push(scratch.len() as u32);
        }
        true
    }
}

#[allow(clippy::large_enum_variant)] // one per input, on the stack
enum Source<R: Read> {
    Lines(Lines<R>),
    Stream(Stream<R>),
}

impl<R: Read + Send> Source<R> {
    /// The next chunks in input order, `None` at the end.
    fn next_batch(&mut self) -> Result<Option<Vec<Chunk>>> {
        match self {
            Self::Lines(lines) => lines.next_batch(),
            Self::Stream(stream) => Ok(stream.next_chunk().map(|chunk| vec![chunk])),
        }
    }
}

/// N-Triples / N-Quads: a statement never spans lines, so chunks cut after a
/// line end parse independently.
struct Lines<R> {
    name: String,
    parser: RdfParser,
    reader: R,
    lenient: bool,
    /// Bytes read past the last line end of the previous chunk.
    pending: Vec<u8>,
    end: bool,
    chunks_per_batch: usize,
}

impl<R: Read + Send> Lines<R> {
    fn next_batch(&mut self) -> Result<Option<Vec<Chunk>>> {
        let mut texts = Vec::with_capacity(self.chunks_per_batch);
        while texts.len() < self.chunks_per_batch {
            match self.next_text().with_context(|| format!("cannot read {}", self.name))? {
                Some(text) => texts.push(text),
                None => break,
            }
        }
        if texts.is_empty() {
            return Ok(None);
        }
        let (parser, lenient) = (&self.parser, self.lenient);
        Ok(Some(texts.par_iter().map(|text| parse_lines(parser.clone(), text, lenient)).collect()))
    }

    /// About [`CHUNK_BYTES`] of input ending at a line end (or at the end of input).
    fn next_text(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut text = std::mem::take(&mut self.pending);
        // Bytes already known to hold no line end, and how much to have before looking.
        let (mut searched, mut wanted) = (0, CHUNK_BYTES);
        loop {
            while !self.end && text.len() < wanted {
                self.end = self.read_more(&mut text, wanted)? == 0;
            }
            if self.end {
                return Ok((!text.is_empty()).then_some(text));
            }
            // Cut after the last \n, or else after a \r that is not the last byte
            // (a last \r could be the first half of \r\n).
            let last = text.len() - 1;
            let cut = text[searched..].iter().rposition(|&b| b == b'\n').or_else(|| text[searched..last].iter().rposition(|&b| b == b'\r'));
            if let Some(cut) = cut {
                self.pending = text[searched + cut + 1..].to_vec();
                text.truncate(searched + cut + 1);
                return Ok(Some(text));
            }
            // A line longer than a chunk: read on until it ends.
            (searched, wanted) = (last, text.len() + CHUNK_BYTES);
        }
    }

    /// Appends what one read gives, up to `wanted` bytes in all; 0 at the end of input.
    fn read_more(&mut self, text: &mut Vec<u8>, wanted: usize) -> std::io::Result<usize> {
        let start = text.len();
        text.resize(wanted.min(start + start.max(FIRST_READ_BYTES)), 0);
        let read = loop {
            match self.reader.read(&mut text[start..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        text.truncate(start + read.as_ref().map_or(0, |n| *n));
        read
    }
}

fn parse_lines(parser: RdfParser, text: &[u8], lenient: bool) -> Chunk {
    let mut chunk = Chunk { bytes: text.len() as u64, lines: line_breaks(text), ..Chunk::default() };
    let mut scratch = Vec::new();
    for result in parser.for_slice(text) {
        match result {
            Ok(quad) => {
                if !chunk.push(&quad, &mut scratch) {
                    break;
                }
            }
            Err(_) if lenient => chunk.skipped += 1,
            Err(error) => {
                chunk.stop = Some(Stop::Syntax(error));
                break;
            }
        }
    }
    chunk
}

/// Line breaks as the parser counts them: `\n`, `\r` and `\r\n` are one each.
fn line_breaks(text: &[u8]) -> u64 {
    let newlines = count_byte(text, b'\n');
    let returns = count_byte(text, b'\r');
    if returns == 0 {
        return newlines;
    }
    let crlf = text.windows(2).filter(|pair| pair == b"\r\n").count() as u64;
    newlines + returns - crlf
}

/// Occurrences of `byte`, counted in 8-bit lanes (which compilers vectorise).
fn count_byte(text: &[u8], byte: u8) -> u64 {
    text.chunks(255).map(|chunk| u64::from(chunk.iter().fold(0u8, |n, &b| n + u8::from(b == byte)))).sum()
}

/// Any other syntax, parsed sequentially from a reader.
struct Stream<R: Read> {
    quads: ReaderQuadParser<R>,
    lenient: bool,
    end: bool,
}

impl<R: Read> Stream<R> {
    fn next_chunk(&mut self) -> Option<Chunk> {
        if self.end {
            return None;
        }
        let mut chunk = Chunk::default();
        let mut scratch = Vec::new();
        while chunk.lengths.len() < 4 * STREAM_BATCH_QUADS && chunk.terms.len() < CHUNK_BYTES {
            match self.quads.next() {
                None => {
                    self.end = true;
                    chunk.prefixes = self.quads.prefixes().map(|(prefix, namespace)| (prefix.to_owned(), namespace.to_owned())).collect();
                    break;
                }
                Some(Ok(quad)) => {
                    if !chunk.push(&quad, &mut scratch) {
                        self.end = true;
                        break;
                    }
                }
                Some(Err(RdfParseError::Syntax(_))) if self.lenient => chunk.skipped += 1,
                Some(Err(error)) => {
                    chunk.stop = Some(match error {
                        RdfParseError::Io(error) => Stop::Io(error),
                        RdfParseError::Syntax(error) => Stop::Syntax(error),
                    });
                    self.end = true;
                    break;
                }
            }
        }
        Some(chunk)
    }
}

/// Hands chunks' quads to the sink in order, renaming blank nodes.
struct Consumer<'a> {
    input: &'a Input,
    blank_nodes: &'a mut BlankNodes,
    stats: ParseStats,
    /// Line breaks and bytes of the chunks consumed so far.
    line_base: u64,
    byte_base: u64,
}

impl Consumer<'_> {
    fn consume(&mut self, chunks: Vec<Chunk>, sink: &mut impl FnMut([&[u8]; 4]) -> Result<()>) -> Result<()> {
        for chunk in chunks {
            let mut offset = 0;
            for lengths in chunk.lengths.chunks_exact(4) {
                let mut terms: [&[u8]; 4] = [&[]; 4];
                for (term, &length) in terms.iter_mut().zip(lengths) {
                    *term = &chunk.terms[offset..offset + length as usize];
                    offset += length as usize;
                }
                let renames = |term: &&[u8]| matches!(term.first(), Some(&(BLANK_NODE | TRIPLE_TERM)));
                if terms.iter().any(renames) {
                    let mut renamed: [Vec<u8>; 4] = Default::default();
                    for (term, renamed) in terms.iter().zip(&mut renamed) {
                        if renames(term) {
                            self.blank_nodes.rename_into(term, renamed);
                        }
                    }
                    let mut terms = terms;
                    for (term, renamed) in terms.iter_mut().zip(&renamed) {
                        if !renamed.is_empty() {
                            *term = renamed;
                        }
                    }
                    sink(terms)?;
                } else {
                    sink(terms)?;
                }
                self.stats.quads += 1;
            }
            self.stats.skipped += chunk.skipped;
            self.stats.prefixes.extend(chunk.prefixes);
            match chunk.stop {
                None => {}
                Some(Stop::Syntax(error)) => return Err(locate(self.input, &error, self.line_base, self.byte_base).into()),
                Some(Stop::Io(error)) => return Err(error).with_context(|| format!("cannot read {}", self.input.display_name())),
                Some(Stop::TooDeep { depth }) => bail!(
                    "{}: statement {} holds triple terms nested {depth} deep (<<( s p <<( … )>> )>>); a .rete file holds them at most {MAX_TRIPLE_TERM_DEPTH} deep",
                    self.input.display_name(),
                    self.stats.quads + 1
                ),
                Some(Stop::TooLong { bytes }) => {
                    bail!("{}: a term of {bytes} bytes after statement {} is longer than the 16 MiB limit", self.input.display_name(), self.stats.quads)
                }
            }
            self.line_base += chunk.lines;
            self.byte_base += chunk.bytes;
        }
        Ok(())
    }
}

const BLANK_NODE: u8 = 0x02;

fn locate(input: &Input, error: &RdfSyntaxError, line_base: u64, byte_base: u64) -> InputError {
    let start = error.location().map(|range| range.start);
    let (line, column, byte) = start.map_or((0, 0, 0), |p| (line_base + p.line + 1, p.column + 1, byte_base + p.offset));
    let quote = if input.is_stdin() || line == 0 { None } else { read_line(input, line) };
    InputError {
        file: input.display_name(),
        line,
        column,
        byte,
        message: without_position(&error.to_string()),
        hint: hint(input, error, quote.as_deref()),
        quote,
    }
}

/// The parser's message without its own "Parser error at line … columns …:" prefix,
/// since the position is printed in `file:line:column` form.
fn without_position(message: &str) -> String {
    match message.strip_prefix("Parser error at ").and_then(|rest| rest.split_once(": ")) {
        Some((_, message)) => message.to_owned(),
        None => message.to_owned(),
    }
}

/// Reads line `number` (1-based) of an input again, to quote it.
fn read_line(input: &Input, number: u64) -> Option<String> {
    let reader = std::io::BufReader::new(input.open(|_| {}).ok()?);
    let line = reader.split(b'\n').nth(usize::try_from(number - 1).ok()?)?.ok()?;
    Some(String::from_utf8_lossy(&line).trim_end_matches('\r').to_owned())
}

fn hint(input: &Input, error: &RdfSyntaxError, quote: Option<&str>) -> Option<String> {
    let line = quote?.trim_start();
    let looks_turtle = line.starts_with("@prefix") || line.starts_with("PREFIX") || line.starts_with("@base") || line.ends_with(';') || line.ends_with(',');
    match input.format {
        RdfFormat::NTriples | RdfFormat::NQuads if looks_turtle => Some("this looks like Turtle; pass --format ttl (or name the file .ttl)".into()),
        RdfFormat::NTriples if error.to_string().contains("graph") || line.split_whitespace().count() > 4 => {
            Some("this looks like N-Quads; pass --format nq (or name the file .nq)".into())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_line_breaks_like_the_parser() {
        assert_eq!(line_breaks(b"a\nb\n"), 2);
        assert_eq!(line_breaks(b"a\r\nb\rc\n"), 3);
        assert_eq!(line_breaks(b""), 0);
    }

    /// A reader giving at most 1000 bytes per read, as pipes and decompressors may.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(1000);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// Chunk sizes and quads per chunk of `text` cut into chunks and parsed.
    fn chunks(text: &str) -> (Vec<u64>, usize) {
        let mut lines = Lines {
            name: "test".into(),
            parser: RdfParser::from_format(RdfFormat::NTriples),
            reader: Trickle(text.as_bytes()),
            lenient: false,
            pending: Vec::new(),
            end: false,
            chunks_per_batch: 3,
        };
        let (mut sizes, mut quads) = (Vec::new(), 0);
        while let Some(batch) = lines.next_batch().unwrap() {
            for chunk in batch {
                assert!(chunk.stop.is_none(), "a chunk was cut inside a statement");
                quads += chunk.lengths.len() / 4;
                sizes.push(chunk.bytes);
            }
        }
        assert_eq!(sizes.iter().sum::<u64>(), text.len() as u64);
        (sizes, quads)
    }

    #[test]
    fn cuts_chunks_at_line_ends_only() {
        let line = "<http://a/s> <http://a/p> \"x\" .";
        let (sizes, quads) = chunks(&(format!("{line}\n").repeat(20_000) + line));
        assert_eq!(quads, 20_001);
        assert!(sizes.len() > 2, "{sizes:?}");
        // Old Mac line ends, and a line longer than two chunks.
        assert_eq!(chunks(&format!("{line}\r").repeat(20_000)).1, 20_000);
        let long = format!("<http://a/s> <http://a/p> \"{}\" .\n", "y".repeat(3 * CHUNK_BYTES));
        let (sizes, quads) = chunks(&(format!("{line}\r\n").repeat(10_000) + &long + &format!("{line}\r\n").repeat(10_000)));
        assert_eq!(quads, 20_001);
        assert!(sizes.iter().any(|&size| size > 3 * CHUNK_BYTES as u64), "{sizes:?}");
    }
}
