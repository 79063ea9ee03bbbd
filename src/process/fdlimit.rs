//! Room for large fan-outs (a thousand targets pass the usual soft `RLIMIT_NOFILE` of 1024):
//! the soft limit is raised only when the targets could need it, as COMMAND inherits it.

use rustix::process::{getrlimit, setrlimit, Resource};

/// Descriptors kept for everything but the targets: standard streams, the runtime, the resolver.
const RESERVE: u64 = 64;

/// Descriptors one target may hold at once: a connection to each of an IPv6 and an IPv4
/// address, or for a file its watched folder, the folder above it and the file being read.
const PER_TARGET: u64 = 3;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit when `targets` could exceed it. Best
/// effort: if it cannot be raised, an attempt that runs out says "too many open files".
pub fn make_room(targets: usize) {
    let needed = RESERVE.saturating_add(PER_TARGET.saturating_mul(targets as u64));
    let mut limit = getrlimit(Resource::Nofile);
    // `None` is unlimited. Raising the soft limit up to the hard one needs no privilege, and a
    // failure changes nothing.
    if let (Some(soft), hard) = (limit.current, limit.maximum) {
        if soft < needed.min(hard.unwrap_or(u64::MAX)) {
            limit.current = hard;
            let _ = setrlimit(Resource::Nofile, limit);
        }
    }
}
