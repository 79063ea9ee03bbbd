//! The process entry point's set-up, done by hand: `main.rs` is `#![no_main]`, so the C library
//! calls readygate's `main` directly and std's own start-up (`lang_start`) never runs.
//!
//! Why: a one-shot `probe` is an exec'd process that lives for under a millisecond, and std's
//! start-up was about a tenth of it (callgrind, perf): it reads and `sscanf`s /proc/self/maps to
//! find the main thread's stack guard, installs SIGSEGV/SIGBUS handlers on an alternate signal
//! stack (an mmap) to print "has overflowed its stack", and names the main thread. readygate
//! needs none of that (a stack overflow is still a SIGSEGV, only without std's message; with
//! `panic = "abort"` no thread name is ever shown). What it does need is kept here:
//! - SIGPIPE ignored, so writing to a closed stdout or stderr is an `EPIPE` error that `say!`
//!   and the report ignore, not a kill that would change the exit status;
//! - fds 0, 1 and 2 open: one that was closed is opened on /dev/null, as std does, so that a
//!   socket or file opened later never becomes stdout or stderr.
//!
//! `std::env::args()` needs no set-up: on glibc std reads argv from `.init_array`. Buffered
//! stdout is flushed by `main` before it returns. COMMAND still starts with SIGPIPE at its
//! default: std's `Command` resets it in the child unless std's start-up chose otherwise.

use std::io::Error;

/// Does the part of std's start-up that readygate relies on; called first thing in `main`.
pub fn init() {
    open_standard_fds();
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// Opens /dev/null on each of fds 0-2 that is closed; in ascending order, so `open` (which
/// returns the lowest free fd) fills exactly the closed one. Aborts, as std does, if /dev/null
/// cannot be opened: running on with a standard fd free would be worse.
fn open_standard_fds() {
    for fd in 0..=2 {
        // SAFETY: F_GETFD only reads the descriptor's flags; a closed fd fails with EBADF.
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1
            && Error::last_os_error().raw_os_error() == Some(libc::EBADF);
        // SAFETY: a NUL-terminated path and plain flags; the fd is deliberately never closed.
        if closed && unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) } == -1 {
            std::process::abort();
        }
    }
}
