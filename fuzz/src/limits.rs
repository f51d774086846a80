//! The limits of every target, kept here rather than by libFuzzer alone:
//!
//! - one allocation over [`MAX_ALLOCATION_BYTES`] aborts the process, which
//!   libFuzzer reports as a crash and saves the input. libFuzzer's own
//!   `-malloc_limit_mb` needs a sanitizer's malloc hooks, and the campaigns
//!   run without one (README.md says why); `-rss_limit_mb` bounds the total;
//! - an input that takes more than [`MAX_CPU_SECONDS`] of CPU time aborts
//!   likewise ([`within_time_limit`]). libFuzzer's `-timeout` counts wall
//!   time, and a campaign at `nice -n 19` on a busy machine waits seconds for
//!   a core: a 3 ms input was reported as a 1 s timeout. The campaigns pass a
//!   wall-clock `-timeout` of 30 s to catch a hang that never returns.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;

/// The limit: 256 MiB.
pub const MAX_ALLOCATION_BYTES: usize = 256 << 20;

/// The system allocator with a size limit.
pub struct Limited;

/// The time limit per input: 1 s of CPU time.
pub const MAX_CPU_SECONDS: f64 = 1.0;

/// Runs one input and aborts if it used more than [`MAX_CPU_SECONDS`] of the
/// process's CPU time (every thread's).
pub fn within_time_limit<T>(run: impl FnOnce() -> T) -> T {
    let before = process_cpu_seconds();
    let result = run();
    let used = process_cpu_seconds() - before;
    if used > MAX_CPU_SECONDS {
        eprintln!("\n==rete-fuzz== input took {used:.3} s of CPU time, over the {MAX_CPU_SECONDS} s limit");
        std::process::abort();
    }
    result
}

/// CPU time this process used, every thread's (seconds).
pub fn process_cpu_seconds() -> f64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    if status != 0 {
        return 0.0;
    }
    now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9
}

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
