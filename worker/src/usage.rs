//! What one request used, for the `x-rete-*` headers and the per-request
//! budgets: R2 operations and the bytes they returned (counted where the
//! binding is called, `r2.rs`), and its rounds of reads (core's [`Rounds`],
//! which also holds their limit: the pointer, the open and every round of
//! blocks each count once, here and nowhere else).

use rete_core::read::Rounds;
use std::cell::{Cell, RefCell};

/// One request's counters.
#[derive(Debug)]
pub struct Usage {
    /// R2 operations (gets and lists).
    pub reads: Cell<u64>,
    /// Body bytes R2 returned.
    pub bytes: Cell<u64>,
    /// Sequential rounds of reads, and their limit.
    pub rounds: RefCell<Rounds>,
}

impl Usage {
    /// Nothing used yet; at most `rounds`' limit of rounds.
    pub fn new(rounds: Rounds) -> Self {
        Self { reads: Cell::new(0), bytes: Cell::new(0), rounds: RefCell::new(rounds) }
    }

    /// Counts one R2 operation that returned `bytes` body bytes.
    pub fn count_read(&self, bytes: usize) {
        self.reads.set(self.reads.get() + 1);
        self.bytes.set(self.bytes.get() + bytes as u64);
    }

    /// Counts a round of the open (a pointer, a first read).
    pub fn count_open_round(&self) {
        self.rounds.borrow_mut().count_open_round();
    }

    /// Rounds so far.
    pub fn round_count(&self) -> u64 {
        self.rounds.borrow().count()
    }
}
