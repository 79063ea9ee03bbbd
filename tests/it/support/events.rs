//! Waiting for something observable to happen (a state to hold, a path to appear, a file to be
//! read by another process) instead of sleeping for a time that merely tends to be enough.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
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
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) -> Instant {
    let deadline = Instant::now() + EVENT_LIMIT;
    loop {
        if done() {
            return Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within {EVENT_LIMIT:?}"
        );
        std::thread::sleep(POLL);
    }
}

/// Whether `done()` comes to hold within [`EVENT_LIMIT`], for a test that asserts on it
/// afterwards with a message of its own (e.g. a server thread that may still be counting).
pub fn comes_to_hold(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + EVENT_LIMIT;
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
    true
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
