//! The allocation limit of every target: one allocation over
//! [`MAX_ALLOCATION_BYTES`] aborts the process, which libFuzzer reports as a
//! crash and saves the input. libFuzzer's own `-malloc_limit_mb` needs a
//! sanitizer's malloc hooks, and the campaigns run without one (README.md
//! says why), so the limit is kept here; `-rss_limit_mb` bounds the total.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;

/// The limit: 256 MiB.
pub const MAX_ALLOCATION_BYTES: usize = 256 << 20;

/// The system allocator with a size limit.
pub struct Limited;

fn over_limit(size: usize) -> ! {
    // Stderr is unbuffered and the message is built on the stack: nothing here allocates.
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = size;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut stderr = std::io::stderr();
    let _ = stderr.write_all(b"\n==rete-fuzz== allocation of ");
    let _ = stderr.write_all(&digits[at..]);
    let _ = stderr.write_all(b" bytes is over the 256 MiB limit\n");
    std::process::abort()
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, after a size check that only aborts.
unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOCATION_BYTES {
            over_limit(layout.size());
        }
        // SAFETY: forwarded as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOCATION_BYTES {
            over_limit(layout.size());
        }
        // SAFETY: forwarded as given.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as given.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MAX_ALLOCATION_BYTES {
            over_limit(new_size);
        }
        // SAFETY: forwarded as given.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
