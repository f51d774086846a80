//! Why a query failed, typed by who must react: a syntax error is the
//! client's (400), a budget error names the limit, a read error may be a
//! range an asynchronous host must fetch before evaluating again.

use crate::{ByteRange, ReadError};

/// A query could not be answered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The query text is not SPARQL 1.1.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// The query uses something this engine does not evaluate.
    #[error("unsupported: {feature}")]
    Unsupported {
        /// What is unsupported, e.g. "SERVICE <http://…>".
        feature: String,
    },
    /// Evaluation went over one of the caller's [`super::Budget`] limits.
    #[error("{}", budget_message(*limit, *max))]
    Budget {
        /// The limit that was reached.
        limit: Limit,
        /// Its value in the budget.
        max: u64,
    },
    /// The store could not be read. [`ReadError::Missing`] means an
    /// asynchronous host must fetch these ranges and evaluate again
    /// ([`QueryError::missing_ranges`]).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Any other evaluation failure, with the evaluator's message.
    #[error("query evaluation failed: {0}")]
    Evaluation(String),
}

impl QueryError {
    /// The byte ranges to fetch when evaluation stopped because the source
    /// has not got them yet.
    pub fn missing_ranges(&self) -> Option<&[ByteRange]> {
        match self {
            Self::Read(ReadError::Missing(ranges)) => Some(ranges),
            _ => None,
        }
    }
}

/// The limits of a [`super::Budget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Quads read from the store.
    QuadsScanned,
    /// Solutions or triples handed to the caller.
    RowsProduced,
    /// Units of evaluation work (intermediate rows, lookups, term decodes).
    Steps,
    /// Bytes of terms computed by expressions.
    ComputedBytes,
    /// The caller's `should_stop` callback said the time is up (a deadline).
    Deadline,
    /// The caller's `should_stop` callback said the request nears the CPU
    /// time its runtime allows (a Worker's `is_near_cpu_limit`).
    Cpu,
}

impl Limit {
    /// A short name for headers and logs: `quads-scanned`, `rows-produced`, …
    pub fn name(self) -> &'static str {
        match self {
            Self::QuadsScanned => "quads-scanned",
            Self::RowsProduced => "rows-produced",
            Self::Steps => "steps",
            Self::ComputedBytes => "computed-bytes",
            Self::Deadline => "deadline",
            Self::Cpu => "cpu",
        }
    }
}

fn budget_message(limit: Limit, max: u64) -> String {
    match limit {
        Limit::QuadsScanned => format!("query exceeded the limit of {max} quads scanned"),
        Limit::RowsProduced => format!("query exceeded the limit of {max} result rows"),
        Limit::Steps => format!("query exceeded the limit of {max} evaluation steps"),
        Limit::ComputedBytes => format!("query exceeded the limit of {max} bytes of computed values"),
        Limit::Deadline => "query exceeded its time limit".to_owned(),
        Limit::Cpu => "query stopped near the CPU time limit of a request".to_owned(),
    }
}

/// A position in the query text; every field counts from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextPosition {
    /// Line.
    pub line: u64,
    /// Column, in code points.
    pub column: u64,
    /// Byte offset from the start of the query.
    pub offset: u64,
}

/// The query is not valid SPARQL 1.1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    message: String,
    location: Option<TextPosition>,
    line_text: String,
}

impl SyntaxError {
    /// Builds the error from spargebra's, whose message is the only place
    /// the position is given ("error at L:C: expected …", 1-based).
    /// `rewritten` is the text spargebra parsed (see `tokens.rs`).
    pub(crate) fn from_spargebra(error: &spargebra::SparqlSyntaxError, query: &str, rewritten: &super::tokens::Rewritten) -> Self {
        let text = error.to_string();
        let parsed = text.strip_prefix("error at ").and_then(|rest| {
            let (position, message) = rest.split_once(": ")?;
            let (line, column) = position.split_once(':')?;
            Some((line.parse::<u64>().ok()?, column.parse::<u64>().ok()?, message))
        });
        let Some((line, column, message)) = parsed else {
            return Self { message: text, location: None, line_text: String::new() };
        };
        let (mut line, mut column) = (line.saturating_sub(1) as usize, column.saturating_sub(1) as usize);
        column = rewritten.original_column(line, column);
        let lines: Vec<&str> = query.split_inclusive('\n').collect();
        // An error at the end of input after blank lines points just past
        // the last line with text, which is where the query stops.
        if lines.get(line).is_none_or(|text| text.trim().is_empty()) {
            if let Some(last) = lines.iter().take(line + 1).rposition(|text| !text.trim().is_empty()) {
                line = last;
                column = lines[last].trim_end().chars().count();
            }
        }
        let line_start: usize = lines.iter().take(line).map(|text| text.len()).sum();
        let line_text = lines.get(line).map_or("", |text| text.trim_end_matches(['\n', '\r']));
        let column_bytes: usize = line_text.chars().take(column).map(char::len_utf8).sum();
        Self { message: message.to_owned(), location: Some(TextPosition { line: line as u64, column: column as u64, offset: (line_start + column_bytes) as u64 }), line_text: line_text.to_owned() }
    }

    pub(crate) fn without_location(message: String) -> Self {
        Self { message, location: None, line_text: String::new() }
    }

    /// What is wrong, without the position.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where, when the parser said.
    pub fn location(&self) -> Option<TextPosition> {
        self.location
    }

    /// The query line holding the error and a caret under its column, for
    /// showing to a person (tabs are kept so the caret lines up).
    pub fn pointer(&self) -> Option<String> {
        let location = self.location?;
        let pad: String = self.line_text.chars().take(location.column as usize).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        Some(format!("{}\n{pad}^", self.line_text))
    }
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.location {
            Some(at) => write!(f, "invalid query at line {} column {}: {}", at.line + 1, at.column + 1, self.message),
            None => write!(f, "invalid query: {}", self.message),
        }
    }
}

impl std::error::Error for SyntaxError {}
