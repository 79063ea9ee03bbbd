//! Room for large fan-outs. Each target holds sockets (or watched folders) while it is
//! attempted, all at once; with the soft `RLIMIT_NOFILE` still at the common 1024, a thousand
//! targets would fail with "too many open files". The soft limit is raised to the hard one, but
//! only when the targets could need it, so COMMAND (which inherits the limits over exec) sees
//! the limits it was given in every ordinary case.

/// Descriptors kept for everything that is not a target's connection: standard streams, the
/// runtime's epoll and eventfd, the signalfds, the resolver, log output.
const RESERVE: u64 = 64;

/// Descriptors one target may hold at once: a connection to each of an IPv6 and an IPv4
/// address, or for a file its watched folder, the folder above it and the file being read.
const PER_TARGET: u64 = 3;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit when `targets` could exceed it. Best
/// effort: if it cannot be raised, an attempt that runs out says "too many open files".
pub fn make_room(targets: usize) {
    let needed = RESERVE.saturating_add(PER_TARGET.saturating_mul(targets as u64));
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given, which lives on this stack frame.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    if limit.rlim_cur == libc::RLIM_INFINITY
        || limit.rlim_cur >= needed
        || limit.rlim_cur >= limit.rlim_max
    {
        return;
    }
    limit.rlim_cur = limit.rlim_max;
    // SAFETY: setrlimit only reads the struct; raising the soft limit up to the hard one needs
    // no privilege, and a failure leaves the limits as they were.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
}
