//! `rete dump`: every quad as N-Quads, in SPO order.

use anyhow::Result;
use rete_core::TermId;
use rete_core::read::{GraphFilter, QuadPattern};
use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes all quads to `out`.
pub fn run(path: &Path, out: &mut impl Write) -> Result<()> {
    let store = super::open(path)?;
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let pattern = QuadPattern { subject: None, predicate: None, object: None, graph: GraphFilter::Any };
    let mut last: [(TermId, String); 4] = Default::default();
    for quad in store.quads(pattern) {
        let quad = quad?;
        for (i, &id) in quad.iter().enumerate() {
            if id != 0 && last[i].0 != id {
                last[i] = (id, store.term(id)?.to_string());
            }
        }
        write!(out, "{} {} {}", last[0].1, last[1].1, last[2].1)?;
        if quad[3] != 0 {
            write!(out, " {}", last[3].1)?;
        }
        out.write_all(b" .\n")?;
    }
    out.flush()?;
    Ok(())
}
