//! Unsigned LEB128 varints (FORMAT.md §1) and a bounds-checked cursor over
//! untrusted bytes: every read returns an error instead of panicking.

/// Appends `value` as a varint.
pub fn put(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A cursor over bytes read from a file; errors carry the failing position.
pub struct Cursor<'a> {
    bytes: &'a [u8],
    position: usize,
}

/// Why a [`Cursor`] read failed, with the relative position.
#[derive(Debug)]
pub struct CursorError {
    /// Byte position relative to the cursor's start.
    pub position: usize,
    /// What went wrong.
    pub reason: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, position: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Whether every byte was consumed.
    pub fn is_empty(&self) -> bool {
        self.position >= self.bytes.len()
    }

    /// Reads one varint.
    #[inline]
    pub fn varint(&mut self) -> Result<u64, CursorError> {
        // Most varints of a block are one byte (front-coding shares and
        // suffix lengths, deltas): read those without the loop (issue 14).
        if let Some(&byte) = self.bytes.get(self.position)
            && byte < 0x80
        {
            self.position += 1;
            return Ok(u64::from(byte));
        }
        self.varint_long()
    }

    fn varint_long(&mut self) -> Result<u64, CursorError> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.bytes.get(self.position) else {
                return Err(self.error("truncated varint"));
            };
            self.position += 1;
            if shift == 63 && byte > 1 {
                return Err(self.error("varint overflows 64 bits"));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(self.error("varint longer than 10 bytes"))
    }

    /// Reads a varint that counts items of at least `min_item_bytes` bytes
    /// each still to come, so a corrupt count cannot trigger a huge allocation.
    pub fn count(&mut self, min_item_bytes: usize) -> Result<usize, CursorError> {
        let value = self.varint()?;
        let remaining = (self.bytes.len() - self.position) as u64;
        if value.saturating_mul(min_item_bytes as u64) > remaining {
            return Err(self.error("count larger than the bytes that follow"));
        }
        Ok(value as usize)
    }

    /// Reads `length` raw bytes.
    pub fn bytes(&mut self, length: u64) -> Result<&'a [u8], CursorError> {
        let end = usize::try_from(length)
            .ok()
            .and_then(|l| self.position.checked_add(l))
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| self.error("length runs past the end"))?;
        let slice = &self.bytes[self.position..end];
        self.position = end;
        Ok(slice)
    }

    fn error(&self, reason: &'static str) -> CursorError {
        CursorError { position: self.position, reason }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put(&mut out, value);
            let mut cursor = Cursor::new(&out);
            assert_eq!(cursor.varint().unwrap(), value);
            assert!(cursor.is_empty());
        }
    }

    #[test]
    fn rejects_bad_varints() {
        assert_eq!(Cursor::new(&[0x80]).varint().unwrap_err().reason, "truncated varint");
        assert_eq!(Cursor::new(&[0xff; 11]).varint().unwrap_err().reason, "varint overflows 64 bits");
        assert!(Cursor::new(&[5, 1]).count(1).is_err());
        assert!(Cursor::new(&[3, 1, 2]).bytes(5).is_err());
    }
}
