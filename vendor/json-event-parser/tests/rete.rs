//! Tests of rete's change to json-event-parser (vendor/README.md): strings are escaped by
//! copying runs of bytes, with the same output as upstream's character-by-character loop,
//! copied here as the reference.

use json_event_parser::{JsonEvent, WriterJsonSerializer};
use std::io::{Result, Write};

mod upstream_escape;
use upstream_escape::upstream_escaped;

/// A writer counting the calls it gets.
#[derive(Default)]
struct Counting {
    bytes: Vec<u8>,
    calls: usize,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> Result<usize> {
        self.calls += 1;
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

fn serialized(event: JsonEvent<'_>) -> Counting {
    let mut writer = WriterJsonSerializer::new(Counting::default());
    writer.serialize_event(event).unwrap();
    writer.finish().unwrap()
}

fn expected(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    upstream_escaped(s, &mut out).unwrap();
    out
}

/// Strings with every character that is escaped, at the start, the end, next to each other
/// and between multi-byte characters.
fn cases() -> Vec<String> {
    let mut cases: Vec<String> = (0u32..0x80).map(|c| char::from_u32(c).unwrap().to_string()).collect();
    cases.extend((0u32..0x80).map(|c| format!("a{}é{}\u{1F600}", char::from_u32(c).unwrap(), char::from_u32(c).unwrap())));
    // Each escaped character at every offset of strings longer than the 8-byte words scanned.
    for c in ['"', '\\', '\n', '\u{0}', '\u{1f}'] {
        for at in 0..24 {
            let mut case: String = "abcdefghijklmnopqrstuvwx".into();
            case.insert(at, c);
            cases.push(case.clone());
            cases.push(format!("é{case}\u{1F600}{case}"));
        }
    }
    cases.extend(
        [
            "",
            "plain",
            "\"quoted\"",
            "back\\slash\\",
            "\n\r\t\u{8}\u{c}\u{0}\u{1f}",
            "line one\nline two\r\n",
            "ünïcödé \u{7f} \u{80} \u{2028} \u{FFFF} 𝄞 \"é\"\\",
            "\u{0}\u{0}\u{0}",
            "http://example.org/a?b=\"c\"&d=\\e",
        ]
        .map(String::from),
    );
    cases.push("x".repeat(10_000) + "\"" + &"ß".repeat(5_000) + "\n");
    cases
}

#[test]
fn escaping_writes_what_upstream_writes() {
    for case in cases() {
        assert_eq!(serialized(JsonEvent::String(case.as_str().into())).bytes, expected(&case), "{case:?}");
        let mut writer = WriterJsonSerializer::new(Vec::new());
        writer.serialize_event(JsonEvent::StartObject).unwrap();
        writer.serialize_event(JsonEvent::ObjectKey(case.as_str().into())).unwrap();
        writer.serialize_event(JsonEvent::Null).unwrap();
        writer.serialize_event(JsonEvent::EndObject).unwrap();
        let mut object = b"{".to_vec();
        object.extend(expected(&case));
        object.extend(b":null}");
        assert_eq!(writer.finish().unwrap(), object, "{case:?}");
    }
}

#[test]
fn a_run_without_escapes_is_one_write() {
    // Upstream wrote each of the 10,000 characters with its own call.
    let long = "é".repeat(5_000) + &"x".repeat(5_000);
    assert_eq!(serialized(JsonEvent::String(long.as_str().into())).calls, 3, "quote, run, quote");
    let escaped = "a\"b\nc";
    let written = serialized(JsonEvent::String(escaped.into()));
    assert_eq!(written.bytes, b"\"a\\\"b\\nc\"");
    assert_eq!(written.calls, 7, "quote, a, \\\", b, \\n, c, quote");
}
