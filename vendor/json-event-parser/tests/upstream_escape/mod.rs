//! Upstream json-event-parser 0.2.3's string escaping, the reference for rete's change (its
//! test, `tests/rete.rs`, and its benchmark, `examples/escape_bench.rs`).

use std::io::{Result, Write};

/// Upstream 0.2.3's `write_escaped_json_string`, unchanged but for its name.
pub fn upstream_escaped(s: &str, mut write: impl Write) -> Result<()> {
    write.write_all(b"\"")?;
    let mut buffer = [b'\\', b'u', 0, 0, 0, 0];
    for c in s.chars() {
        match c {
            '\\' => write.write_all(b"\\\\"),
            '"' => write.write_all(b"\\\""),
            c => {
                if c < char::from(32) {
                    match c {
                        '\x08' => write.write_all(b"\\b"),
                        '\x0C' => write.write_all(b"\\f"),
                        '\n' => write.write_all(b"\\n"),
                        '\r' => write.write_all(b"\\r"),
                        '\t' => write.write_all(b"\\t"),
                        c => {
                            let mut c = c as u8;
                            for i in (2..6).rev() {
                                let ch = c % 16;
                                buffer[i] = if ch < 10 { b'0' + ch } else { b'a' + ch - 10 };
                                c /= 16;
                            }
                            write.write_all(&buffer)
                        }
                    }
                } else {
                    write.write_all(c.encode_utf8(&mut buffer[2..]).as_bytes())
                }
            }
        }?;
    }
    write.write_all(b"\"")?;
    Ok(())
}

