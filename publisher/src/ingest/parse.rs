//! Parsing inputs with oxrdfio into encoded terms. Blank nodes are renamed
//! per file in order of first appearance: labels are scoped to their document
//! (RDF merge), and Turtle's anonymous nodes get random labels from the
//! parser, which would make builds differ run to run.

use super::input::Input;
use anyhow::{Context, Result, bail};
use oxrdf::{BlankNode, GraphName, NamedOrBlankNode, Quad, Term};
use oxrdfio::{RdfParseError, RdfParser};
use rete_core::format::term::encode_term_into;
use std::collections::HashMap;
use std::fmt;
use std::io::BufRead;

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
    current_file: HashMap<String, u64>,
    next: u64,
}

impl BlankNodes {
    /// Starts a new document scope.
    pub fn next_file(&mut self) {
        self.current_file.clear();
    }

    fn rename(&mut self, node: &BlankNode) -> BlankNode {
        let next = &mut self.next;
        let number = *self.current_file.entry(node.as_str().to_owned()).or_insert_with(|| {
            *next += 1;
            *next - 1
        });
        BlankNode::new_unchecked(format!("b{number}"))
    }

    /// Approximate bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.current_file.len() * 64
    }
}

/// What parsing one input gave.
#[derive(Debug, Default, Clone, Copy)]
pub struct ParseStats {
    /// Statements read.
    pub quads: u64,
    /// Bad statements skipped with `--lenient`.
    pub skipped: u64,
}

/// Parses one input and calls `sink` with each quad's encoded `[s, p, o, g]`
/// (`g` empty for the default graph).
pub fn parse_input(
    input: &Input,
    lenient: bool,
    blank_nodes: &mut BlankNodes,
    progress: impl FnMut(usize) + Send + 'static,
    mut sink: impl FnMut([&[u8]; 4]) -> Result<()>,
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
    let mut stats = ParseStats::default();
    let mut buffers: [Vec<u8>; 4] = Default::default();
    for result in parser.for_reader(reader) {
        let quad = match result {
            Ok(quad) => quad,
            Err(RdfParseError::Io(error)) => return Err(error).with_context(|| format!("cannot read {}", input.display_name())),
            Err(RdfParseError::Syntax(error)) => {
                if lenient {
                    stats.skipped += 1;
                    continue;
                }
                return Err(locate(input, &error).into());
            }
        };
        let quad = rename_blank_nodes(quad, blank_nodes);
        encode_term_into(quad.subject.as_ref().into(), &mut buffers[0]);
        encode_term_into(quad.predicate.as_ref().into(), &mut buffers[1]);
        encode_term_into(quad.object.as_ref(), &mut buffers[2]);
        match &quad.graph_name {
            GraphName::DefaultGraph => buffers[3].clear(),
            GraphName::NamedNode(node) => encode_term_into(node.as_ref().into(), &mut buffers[3]),
            GraphName::BlankNode(node) => encode_term_into(node.as_ref().into(), &mut buffers[3]),
        }
        if let Some(long) = buffers.iter().find(|b| b.len() > rete_core::format::MAX_TERM_BYTES) {
            bail!("{}: a term of {} bytes after statement {} is longer than the 16 MiB limit", input.display_name(), long.len(), stats.quads);
        }
        sink([&buffers[0], &buffers[1], &buffers[2], &buffers[3]])?;
        stats.quads += 1;
    }
    Ok(stats)
}

fn rename_blank_nodes(quad: Quad, blank_nodes: &mut BlankNodes) -> Quad {
    let subject = match quad.subject {
        NamedOrBlankNode::BlankNode(node) => blank_nodes.rename(&node).into(),
        other => other,
    };
    let object = match quad.object {
        Term::BlankNode(node) => blank_nodes.rename(&node).into(),
        other => other,
    };
    let graph_name = match quad.graph_name {
        GraphName::BlankNode(node) => blank_nodes.rename(&node).into(),
        other => other,
    };
    Quad { subject, predicate: quad.predicate, object, graph_name }
}

fn locate(input: &Input, error: &oxrdfio::RdfSyntaxError) -> InputError {
    let start = error.location().map(|range| range.start);
    let (line, column, byte) = start.map_or((0, 0, 0), |p| (p.line + 1, p.column + 1, p.offset));
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

fn hint(input: &Input, error: &oxrdfio::RdfSyntaxError, quote: Option<&str>) -> Option<String> {
    use oxrdfio::RdfFormat;
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
