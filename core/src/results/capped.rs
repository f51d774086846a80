//! A writer that keeps what is written up to a cap and past it only counts.
//! Hosts that read in rounds write each run's answer into one: a run that
//! missed blocks is thrown away, a complete one is sent as kept, or, when it
//! was larger than the cap, evaluated once more and streamed (the CLI's
//! `rete query URL`, the Worker's `/sparql`).

use std::io::{self, Write};

/// Keeps up to `cap_bytes` of what is written; past that, only counts.
#[derive(Debug)]
pub struct Capped {
    cap_bytes: usize,
    kept: Vec<u8>,
    total_bytes: u64,
    overflowed: bool,
}

impl Capped {
    /// Keeps at most `cap_bytes`.
    pub fn new(cap_bytes: usize) -> Self {
        Self { cap_bytes, kept: Vec::new(), total_bytes: 0, overflowed: false }
    }

    /// Forgets everything written (a run whose answer is thrown away).
    pub fn clear(&mut self) {
        self.kept = Vec::new();
        self.total_bytes = 0;
        self.overflowed = false;
    }

    /// Bytes written, kept or not.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Whether more than the cap was written (nothing is kept then).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Everything written, when it fit under the cap.
    pub fn into_bytes(self) -> Option<Vec<u8>> {
        (!self.overflowed).then_some(self.kept)
    }
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.total_bytes += data.len() as u64;
        if !self.overflowed && self.kept.len() + data.len() <= self.cap_bytes {
            self.kept.extend_from_slice(data);
        } else {
            self.overflowed = true;
            self.kept = Vec::new();
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_the_cap_then_counts() {
        let mut capped = Capped::new(8);
        capped.write_all(b"abcd").unwrap();
        capped.write_all(b"efgh").unwrap();
        assert_eq!((capped.total_bytes(), capped.overflowed()), (8, false));
        capped.write_all(b"i").unwrap();
        assert_eq!((capped.total_bytes(), capped.overflowed()), (9, true));
        assert_eq!(capped.into_bytes(), None);
        let mut capped = Capped::new(8);
        capped.write_all(b"too long for it").unwrap();
        capped.clear();
        capped.write_all(b"short").unwrap();
        assert_eq!(capped.into_bytes().as_deref(), Some(&b"short"[..]));
    }
}
