//! Input files: format by extension or flag, transparent gzip, `-` for stdin.

use anyhow::{Context, Result, bail};
use oxrdfio::RdfFormat;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// One input as given on the command line.
#[derive(Debug, Clone)]
pub struct Input {
    /// Path, or `-` for stdin.
    pub path: PathBuf,
    /// RDF syntax.
    pub format: RdfFormat,
    /// Whether the bytes are gzip-compressed.
    pub gzip: bool,
}

impl Input {
    /// Resolves an input's format from `--format` or its extension.
    pub fn new(path: &Path, format: Option<RdfFormat>) -> Result<Self> {
        let name = path.to_string_lossy().to_lowercase();
        let gzip = name.ends_with(".gz");
        let stem = name.strip_suffix(".gz").unwrap_or(&name);
        let format = match format {
            Some(format) => format,
            None if path == Path::new("-") => bail!(crate::cmd::UsageError("reading stdin needs --format (nt, nq, ttl, trig or rdfxml)".into())),
            None => format_from_extension(stem).with_context(|| {
                format!("cannot tell the RDF syntax of {} from its extension; pass --format nt|nq|ttl|trig|rdfxml", path.display())
            })?,
        };
        Ok(Self { path: path.to_owned(), format, gzip })
    }

    /// Human name for messages.
    pub fn display_name(&self) -> String {
        if self.is_stdin() { "<stdin>".into() } else { self.path.display().to_string() }
    }

    /// The file name without its directory (`<stdin>` for stdin), for the card:
    /// how the path was spelled must not change the file.
    pub fn file_name(&self) -> String {
        match self.path.file_name() {
            Some(name) if !self.is_stdin() => name.to_string_lossy().into_owned(),
            _ => self.display_name(),
        }
    }

    /// Whether this input is standard input.
    pub fn is_stdin(&self) -> bool {
        self.path == Path::new("-")
    }

    /// Size on disk (0 for stdin).
    pub fn size_bytes(&self) -> u64 {
        if self.is_stdin() { 0 } else { std::fs::metadata(&self.path).map_or(0, |m| m.len()) }
    }

    /// Opens the input, decompressing gzip; `counter` sees the raw bytes read (for progress).
    pub fn open(&self, counter: impl FnMut(usize) + Send + 'static) -> Result<Box<dyn Read + Send>> {
        let raw: Box<dyn Read + Send> = if self.is_stdin() {
            Box::new(std::io::stdin())
        } else {
            Box::new(File::open(&self.path).with_context(|| format!("cannot open {}", self.path.display()))?)
        };
        let counted = CountingReader { inner: raw, counter };
        Ok(if self.gzip {
            Box::new(BufReader::with_capacity(1 << 16, flate2::read::MultiGzDecoder::new(BufReader::new(counted))))
        } else {
            Box::new(BufReader::with_capacity(1 << 16, counted))
        })
    }
}

/// The syntax named by a `--format` value or extension.
pub fn format_from_name(name: &str) -> Option<RdfFormat> {
    Some(match name {
        "nt" | "ntriples" | "n-triples" => RdfFormat::NTriples,
        "nq" | "nquads" | "n-quads" => RdfFormat::NQuads,
        "ttl" | "turtle" => RdfFormat::Turtle,
        "trig" => RdfFormat::TriG,
        "rdf" | "rdfxml" | "rdf/xml" | "owl" | "xml" => RdfFormat::RdfXml,
        _ => return None,
    })
}

fn format_from_extension(name: &str) -> Option<RdfFormat> {
    format_from_name(name.rsplit_once('.')?.1)
}

struct CountingReader<R, F> {
    inner: R,
    counter: F,
}

impl<R: Read, F: FnMut(usize)> Read for CountingReader<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        (self.counter)(n);
        Ok(n)
    }
}
