use crate::JsonEvent;
use std::io::{Error, ErrorKind, Result, Write};
#[cfg(feature = "async-tokio")]
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// A JSON streaming writer writing to a [`Write`] implementation.
///
/// ```
/// use json_event_parser::{JsonEvent, WriterJsonSerializer};
///
/// let mut writer = WriterJsonSerializer::new(Vec::new());
/// writer.serialize_event(JsonEvent::StartObject)?;
/// writer.serialize_event(JsonEvent::ObjectKey("foo".into()))?;
/// writer.serialize_event(JsonEvent::Number("1".into()))?;
/// writer.serialize_event(JsonEvent::EndObject)?;
///
/// assert_eq!(writer.finish()?.as_slice(), b"{\"foo\":1}");
/// # std::io::Result::Ok(())
/// ```
pub struct WriterJsonSerializer<W: Write> {
    write: W,
    writer: LowLevelJsonSerializer,
}

impl<W: Write> WriterJsonSerializer<W> {
    pub const fn new(write: W) -> Self {
        Self {
            write,
            writer: LowLevelJsonSerializer::new(),
        }
    }

    pub fn serialize_event(&mut self, event: JsonEvent<'_>) -> Result<()> {
        self.writer.serialize_event(event, &mut self.write)
    }

    #[deprecated(note = "Use serialize_event() instead")]
    pub fn write_event(&mut self, event: JsonEvent<'_>) -> Result<()> {
        self.serialize_event(event)
    }

    pub fn finish(self) -> Result<W> {
        self.writer.validate_eof()?;
        Ok(self.write)
    }
}

/// A JSON streaming writer writing to an [`AsyncWrite`] implementation.
///
/// ```
/// use json_event_parser::{JsonEvent, TokioAsyncWriterJsonSerializer};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> ::std::io::Result<()> {
/// let mut writer = TokioAsyncWriterJsonSerializer::new(Vec::new());
/// writer.serialize_event(JsonEvent::StartObject).await?;
/// writer
///     .serialize_event(JsonEvent::ObjectKey("foo".into()))
///     .await?;
/// writer
///     .serialize_event(JsonEvent::Number("1".into()))
///     .await?;
/// writer.serialize_event(JsonEvent::EndObject).await?;
/// assert_eq!(writer.finish()?.as_slice(), b"{\"foo\":1}");
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "async-tokio")]
pub struct TokioAsyncWriterJsonSerializer<W: AsyncWrite + Unpin> {
    write: W,
    writer: LowLevelJsonSerializer,
    buffer: Vec<u8>,
}

#[cfg(feature = "async-tokio")]
impl<W: AsyncWrite + Unpin> TokioAsyncWriterJsonSerializer<W> {
    pub const fn new(write: W) -> Self {
        Self {
            write,
            writer: LowLevelJsonSerializer::new(),
            buffer: Vec::new(),
        }
    }

    pub async fn serialize_event(&mut self, event: JsonEvent<'_>) -> Result<()> {
        self.writer.serialize_event(event, &mut self.buffer)?;
        self.write.write_all(&self.buffer).await?;
        self.buffer.clear();
        Ok(())
    }

    #[deprecated(note = "Use serialize_event() instead")]
    pub async fn write_event(&mut self, event: JsonEvent<'_>) -> Result<()> {
        self.serialize_event(event).await
    }

    pub fn finish(self) -> Result<W> {
        self.writer.validate_eof()?;
        Ok(self.write)
    }
}

/// A low-level JSON streaming writer writing to a [`Write`] implementation.
///
/// YOu probably want to use [`WriterJsonSerializer`] instead.
///
/// ```
/// use json_event_parser::{JsonEvent, LowLevelJsonSerializer};
///
/// let mut writer = LowLevelJsonSerializer::new();
/// let mut output = Vec::new();
/// writer.serialize_event(JsonEvent::StartObject, &mut output)?;
/// writer.serialize_event(JsonEvent::ObjectKey("foo".into()), &mut output)?;
/// writer.serialize_event(JsonEvent::Number("1".into()), &mut output)?;
/// writer.serialize_event(JsonEvent::EndObject, &mut output)?;
///
/// assert_eq!(output.as_slice(), b"{\"foo\":1}");
/// # std::io::Result::Ok(())
/// ```

#[derive(Default)]
pub struct LowLevelJsonSerializer {
    state_stack: Vec<JsonState>,
    element_written: bool,
}

impl LowLevelJsonSerializer {
    pub const fn new() -> Self {
        Self {
            state_stack: Vec::new(),
            element_written: false,
        }
    }

    pub fn serialize_event(&mut self, event: JsonEvent<'_>, mut write: impl Write) -> Result<()> {
        match event {
            JsonEvent::String(s) => {
                self.before_value(&mut write)?;
                write_escaped_json_string(&s, write)
            }
            JsonEvent::Number(number) => {
                self.before_value(&mut write)?;
                write.write_all(number.as_bytes())
            }
            JsonEvent::Boolean(b) => {
                self.before_value(&mut write)?;
                write.write_all(if b { b"true" } else { b"false" })
            }
            JsonEvent::Null => {
                self.before_value(&mut write)?;
                write.write_all(b"null")
            }
            JsonEvent::StartArray => {
                self.before_value(&mut write)?;
                self.state_stack.push(JsonState::OpenArray);
                write.write_all(b"[")
            }
            JsonEvent::EndArray => match self.state_stack.pop() {
                Some(JsonState::OpenArray) | Some(JsonState::ContinuationArray) => {
                    write.write_all(b"]")
                }
                Some(s) => {
                    self.state_stack.push(s);
                    Err(Error::new(
                        ErrorKind::InvalidInput,
                        "Closing a not opened array",
                    ))
                }
                None => Err(Error::new(
                    ErrorKind::InvalidInput,
                    "Closing a not opened array",
                )),
            },
            JsonEvent::StartObject => {
                self.before_value(&mut write)?;
                self.state_stack.push(JsonState::OpenObject);
                write.write_all(b"{")
            }
            JsonEvent::EndObject => match self.state_stack.pop() {
                Some(JsonState::OpenObject) | Some(JsonState::ContinuationObject) => {
                    write.write_all(b"}")
                }
                Some(s) => {
                    self.state_stack.push(s);
                    Err(Error::new(
                        ErrorKind::InvalidInput,
                        "Closing a not opened object",
                    ))
                }
                None => Err(Error::new(
                    ErrorKind::InvalidInput,
                    "Closing a not opened object",
                )),
            },
            JsonEvent::ObjectKey(key) => {
                match self.state_stack.pop() {
                    Some(JsonState::OpenObject) => (),
                    Some(JsonState::ContinuationObject) => write.write_all(b",")?,
                    _ => {
                        return Err(Error::new(
                            ErrorKind::InvalidInput,
                            "Trying to write an object key in an not object",
                        ))
                    }
                }
                self.state_stack.push(JsonState::ContinuationObject);
                self.state_stack.push(JsonState::ObjectValue);
                write_escaped_json_string(&key, &mut write)?;
                write.write_all(b":")
            }
            JsonEvent::Eof => Err(Error::new(
                ErrorKind::InvalidInput,
                "EOF is not allowed in JSON writer",
            )),
        }
    }

    #[deprecated(note = "Use serialize_event() instead")]
    pub fn write_event(&mut self, event: JsonEvent<'_>, write: impl Write) -> Result<()> {
        self.serialize_event(event, write)
    }

    fn before_value(&mut self, mut write: impl Write) -> Result<()> {
        match self.state_stack.pop() {
            Some(JsonState::OpenArray) => {
                self.state_stack.push(JsonState::ContinuationArray);
                Ok(())
            }
            Some(JsonState::ContinuationArray) => {
                self.state_stack.push(JsonState::ContinuationArray);
                write.write_all(b",")?;
                Ok(())
            }
            Some(last_state @ JsonState::OpenObject)
            | Some(last_state @ JsonState::ContinuationObject) => {
                self.state_stack.push(last_state);
                Err(Error::new(
                    ErrorKind::InvalidInput,
                    "Object key expected, string found",
                ))
            }
            Some(JsonState::ObjectValue) => Ok(()),
            None => {
                if self.element_written {
                    Err(Error::new(
                        ErrorKind::InvalidInput,
                        "A root JSON value has already been written",
                    ))
                } else {
                    self.element_written = true;
                    Ok(())
                }
            }
        }
    }

    fn validate_eof(&self) -> Result<()> {
        if !self.state_stack.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "The written JSON is not balanced: an object or an array has not been closed",
            ));
        }
        if !self.element_written {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "A JSON file can't be empty",
            ));
        }
        Ok(())
    }
}

enum JsonState {
    OpenArray,
    ContinuationArray,
    OpenObject,
    ContinuationObject,
    ObjectValue,
}

// rete: each run of bytes that needs no escaping is copied with one `write_all`, and only the
// bytes that do are escaped one by one; upstream wrote every character with its own
// `write_all`, which dominated the CPU of writing large SPARQL JSON results (docs/BENCHMARK.md).
// The output is the same: only `"`, `\` and the control characters below U+0020 are escaped,
// each one byte in UTF-8, and no byte of a multi-byte UTF-8 character is below 0x80.
// rete: public, so that rete's own SPARQL JSON row writer escapes strings as this serializer does.
/// Writes `s` as a JSON string: in quotes, with `"`, `\` and the control characters escaped.
pub fn write_escaped_json_string(s: &str, mut write: impl Write) -> Result<()> {
    write.write_all(b"\"")?;
    let mut rest = s.as_bytes();
    let mut buffer = [b'\\', b'u', b'0', b'0', 0, 0];
    loop {
        let run = plain_run(rest);
        if run > 0 {
            write.write_all(&rest[..run])?;
        }
        let Some(&byte) = rest.get(run) else { break };
        let escaped: &[u8] = match byte {
            b'\\' => b"\\\\",
            b'"' => b"\\\"",
            0x08 => b"\\b",
            0x0C => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            _ => {
                let hex = |digit: u8| if digit < 10 { b'0' + digit } else { b'a' + digit - 10 };
                buffer[4] = hex(byte / 16);
                buffer[5] = hex(byte % 16);
                &buffer
            }
        };
        write.write_all(escaped)?;
        rest = &rest[run + 1..];
    }
    write.write_all(b"\"")?;
    Ok(())
}

/// rete: how many bytes from the start of `bytes` need no escaping (all of
/// them when none does): `"`, `\` and bytes below 0x20 are looked for eight
/// at a time in a `u64` (the classic "has a zero byte" test, whose lowest
/// flag is always exact), then byte by byte for the last few. With a byte
/// loop, `serialize_event` was a fifth of LUBM q14's CPU in the Worker's
/// wasm (issue 14).
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut done = 0;
    while let Some(chunk) = bytes.get(done..done + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let found = (x.wrapping_sub(ONES * 0x20) & !x & HIGHS) | zero_byte(x ^ (ONES * u64::from(b'"'))) | zero_byte(x ^ (ONES * u64::from(b'\\')));
        if found != 0 {
            return done + (found.trailing_zeros() / 8) as usize;
        }
        done += 8;
    }
    done + bytes[done..].iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\').unwrap_or(bytes.len() - done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_serialization() -> Result<()> {
        let events = [
            JsonEvent::StartArray,
            JsonEvent::StartObject,
            JsonEvent::ObjectKey("f\to".into()),
            JsonEvent::String("\0\x08\x0c\n\r\t\"\\".into()),
            JsonEvent::EndObject,
            JsonEvent::Number("112".into()),
            JsonEvent::Boolean(true),
            JsonEvent::Boolean(false),
            JsonEvent::Null,
            JsonEvent::EndArray,
        ];
        let mut serializer = WriterJsonSerializer::new(Vec::new());
        for event in events {
            serializer.serialize_event(event)?;
        }
        assert_eq!(
            serializer.finish()?,
            br#"[{"f\to":"\u0000\b\f\n\r\t\"\\"},112,true,false,null]"#
        );
        Ok(())
    }
}
