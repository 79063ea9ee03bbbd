//! Waiting for something observable to happen (a state to hold, a path to appear, a file to be
//! read by another process) instead of sleeping for a time that merely tends to be enough.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long an awaited event may take: generous, as a loaded 2-core machine can stall a
/// process for seconds; reaching it means the event is not coming.
pub const EVENT_LIMIT: Duration = Duration::from_secs(30);

/// How often [`wait_until`] looks again: it polls a cheap, observable state, so the interval
/// only sets how late the test notices, never whether it passes.
const POLL: Duration = Duration::from_millis(5);

/// Waits until `done()` holds; fails the test naming `what` after [`EVENT_LIMIT`]. Returns when
/// it was first seen to hold.
#[track_caller]
pub fn wait_until(what: &str, done: impl FnMut() -> bool) -> Instant {
    match poll_until(EVENT_LIMIT, POLL, done) {
        Some(seen) => seen,
        None => panic!("{what}: not within {EVENT_LIMIT:?}"),
    }
}

/// Whether `done()` comes to hold within [`EVENT_LIMIT`], for a test that asserts on it
/// afterwards with a message of its own (e.g. a server thread that may still be counting).
pub fn comes_to_hold(done: impl FnMut() -> bool) -> bool {
    poll_until(EVENT_LIMIT, POLL, done).is_some()
}

/// Looks at `done()` every `every` until it holds (when it was first seen to), for at most
/// `limit`: the one polling loop of the suite, for states that give no signal of their own (a
/// server's count, a log a command prints); `every` sets only how soon a change is seen, and
/// how much the looking costs.
pub fn poll_until(
    limit: Duration,
    every: Duration,
    mut done: impl FnMut() -> bool,
) -> Option<Instant> {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return Some(Instant::now());
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(every);
    }
}

/// Waits up to `limit` for `child` to exit: its status, or `None` while it still runs. The
/// kernel tells of the exit (a pidfd turns readable), so no time is lost between looks.
pub fn exit_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    // SAFETY: pidfd_open on our own child, not yet reaped; the descriptor is closed below.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id(), 0) };
    match libc::c_int::try_from(pidfd) {
        Ok(fd) if fd >= 0 => {
            let deadline = Instant::now() + limit;
            let mut pollfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // Again after a signal's interruption, for the time left.
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let millis = libc::c_int::try_from(left.as_millis()).unwrap_or(libc::c_int::MAX);
                // SAFETY: one valid pollfd.
                let polled = unsafe { libc::poll(&mut pollfd, 1, millis) };
                let interrupted = polled < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
                if !interrupted || left.is_zero() {
                    break;
                }
            }
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(fd) };
            child.try_wait().expect("wait for the child")
        }
        // No pidfd (an old kernel, an emulator): looked at as any other state.
        _ => {
            let mut status = None;
            poll_until(limit, POLL, || {
                status = child.try_wait().expect("wait for the child");
                status.is_some()
            });
            status
        }
    }
}

/// A signal to stop, for threads that act at a pace until the test is done with them (an
/// attacker, a client that keeps asking): their pause between acts ends as soon as it is given.
#[derive(Default)]
pub struct Stop {
    /// Whether it has been given.
    given: Mutex<bool>,
    /// Wakes the paused threads when it is given.
    changed: Condvar,
}

impl Stop {
    /// Tells every thread to stop, waking those paused.
    pub fn give(&self) {
        *self.given.lock().unwrap() = true;
        self.changed.notify_all();
    }

    /// Whether it has been given.
    pub fn given(&self) -> bool {
        *self.given.lock().unwrap()
    }

    /// Pauses for `pace`, or until it is given: whether the thread is to go on.
    pub fn pause(&self, pace: Duration) -> bool {
        let given = self.given.lock().unwrap();
        let (given, _) = self
            .changed
            .wait_timeout_while(given, pace, |given| !*given)
            .unwrap();
        !*given
    }
}

/// Waits until `path` exists.
#[track_caller]
pub fn wait_for_path(path: &Path) -> Instant {
    wait_until(&format!("{} to appear", path.display()), || path.exists())
}

/// Reads of one file by any process, as the kernel reports them (inotify): how a test knows
/// that readygate has read a file, when readygate says nothing about it.
pub struct FileReads {
    /// The inotify descriptor.
    fd: libc::c_int,
}

impl FileReads {
    /// Starts noting reads of the existing file `path` (each open for reading, then closed).
    #[track_caller]
    pub fn watch(path: &Path) -> FileReads {
        // SAFETY: plain syscalls; the descriptor is owned by the value and closed on drop.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(
            fd >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        let reads = FileReads { fd };
        let name = CString::new(path.as_os_str().as_bytes()).expect("path without NUL");
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let watch = unsafe { libc::inotify_add_watch(fd, name.as_ptr(), libc::IN_CLOSE_NOWRITE) };
        assert!(
            watch >= 0,
            "inotify_add_watch {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        );
        reads
    }

    /// Waits until the file has been opened for reading and closed again since [`watch`]
    /// (or since the last call); fails the test after [`EVENT_LIMIT`].
    ///
    /// [`watch`]: FileReads::watch
    #[track_caller]
    pub fn next_read(&self) -> Instant {
        let deadline = Instant::now() + EVENT_LIMIT;
        loop {
            let mut buffer = [0u8; 4096];
            // SAFETY: reading into a buffer of the stated size from our own descriptor.
            let n = unsafe { libc::read(self.fd, buffer.as_mut_ptr().cast(), buffer.len()) };
            if n > 0 {
                return Instant::now();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "the file was not read within {EVENT_LIMIT:?}"
            );
            let mut pollfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let millis = libc::c_int::try_from(left.as_millis()).unwrap_or(libc::c_int::MAX);
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut pollfd, 1, millis.max(1)) };
        }
    }
}

impl Drop for FileReads {
    fn drop(&mut self) {
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(self.fd) };
    }
}
