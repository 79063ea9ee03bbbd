//! Signals as data: the ones readygate acts on are blocked and read from a signalfd, instead
//! of being caught by handlers.
//!
//! SIGTERM and SIGINT while waiting: readygate is often PID 1, where a signal without a handler
//! is ignored, so it listens for them itself and exits 128+N. A signalfd costs three system
//! calls; tokio's signal driver, a handler-and-pipe registry for every signal number, cost
//! 36 k instructions and ~10 KB of fresh heap at each start, about a sixth of a one-shot
//! `probe`'s work (callgrind).
//!
//! A blocked signal stays blocked across exec and fork, so COMMAND gets back the mask readygate
//! started with ([`restore_mask_for`]).

use std::cell::Cell;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// The signal that tells of folder changes (dnotify): SIGURG, whose default action is to
/// ignore it, so one that lands where it is not blocked is dropped instead of killing.
pub const NOTICE: libc::c_int = libc::SIGURG;

thread_local! {
    /// This thread's signal mask before readygate first blocked anything in it.
    static ORIGINAL_MASK: Cell<Option<libc::sigset_t>> = const { Cell::new(None) };
}

/// A signal set holding exactly `signals`.
fn set_of(signals: &[libc::c_int]) -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initializes the set it is given; sigaddset then adds signal numbers
    // (valid ones: the callers pass libc's constants) to that initialized set.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for &signal in signals {
            libc::sigaddset(set.as_mut_ptr(), signal);
        }
        set.assume_init()
    }
}

/// Blocks `set` in this thread, so its signals wait to be read through a signalfd; threads
/// started from here later inherit the block. Call before any such thread is started.
fn block(set: &libc::sigset_t) -> io::Result<()> {
    let mut old = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `set` is initialized and `old` is writable; changing the calling thread's mask
    // has no other precondition.
    let failed = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, set, old.as_mut_ptr()) };
    if failed != 0 {
        return Err(io::Error::from_raw_os_error(failed));
    }
    // SAFETY: pthread_sigmask succeeded, so it wrote the previous mask into `old`.
    let old = unsafe { old.assume_init() };
    ORIGINAL_MASK.with(|original| {
        if original.get().is_none() {
            original.set(Some(old));
        }
    });
    Ok(())
}

/// Blocks every signal in this thread, one that never acts on any: a worker thread that
/// outlives its job (a check stuck on a dead mount) must not be where the kernel delivers a
/// signal that readygate blocks and reads elsewhere, such as `--on-exit`'s SIGHUP, whose default
/// action would stop readygate.
pub fn block_all() {
    let mut all = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigfillset initializes the set it is given; changing the calling thread's mask
    // has no other precondition.
    unsafe {
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), std::ptr::null_mut());
    }
}

/// Gives COMMAND back the signal mask readygate started with, whether it is exec'd in place
/// or spawned as a child: a program inherits the mask (std's `Command` leaves it alone), and
/// one started with SIGTERM or SIGURG blocked would never hear of them. Set just before the
/// program starts, so a signal still pending then takes its default action: a SIGTERM that
/// came after readiness stops readygate instead of being lost (as PID 1, the kernel drops it).
pub fn restore_mask_for(command: &mut Command) {
    let Some(original) = ORIGINAL_MASK.with(Cell::get) else {
        return;
    };
    // SAFETY: the hook only calls pthread_sigmask, which is async-signal-safe, on a mask it
    // owns: nothing that allocates or locks runs between fork and exec.
    unsafe {
        command.pre_exec(move || {
            libc::pthread_sigmask(libc::SIG_SETMASK, &original, std::ptr::null_mut());
            Ok(())
        });
    }
}

/// A signalfd for the blocked signals of `set`, registered with the runtime.
fn signalfd(set: &libc::sigset_t) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: `set` is initialized; -1 asks for a new descriptor, owned below.
    let fd = unsafe { libc::signalfd(-1, set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) };
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by signalfd and nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: the `OwnedFd` keeps the descriptor open, unchanged, until dropped, and it is
    // dropped only with the `AsyncFd` that holds it.
    unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(|e| e.into_parts().1)
}

/// Takes one pending signal off `fd`: its number, or `None` when none is pending.
fn read_one(fd: &AsyncFd<OwnedFd>) -> io::Result<Option<libc::c_int>> {
    let mut info = MaybeUninit::<libc::signalfd_siginfo>::uninit();
    let size = std::mem::size_of::<libc::signalfd_siginfo>();
    loop {
        // SAFETY: the buffer is a writable signalfd_siginfo of `size` bytes.
        let n = unsafe { libc::read(fd.as_raw_fd(), info.as_mut_ptr().cast(), size) };
        if n == size as isize {
            // SAFETY: the kernel wrote a whole signalfd_siginfo.
            return Ok(Some(unsafe { info.assume_init() }.ssi_signo as libc::c_int));
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::WouldBlock => return Ok(None),
            io::ErrorKind::Interrupted => continue,
            _ => return Err(err),
        }
    }
}

/// Some signals, blocked and read in arrival order.
pub struct Listener {
    /// The signalfd; `None` if it could not be set up (then nothing is heard, as before
    /// handlers existed).
    fd: Option<AsyncFd<OwnedFd>>,
}

impl Listener {
    /// Listens for `signals` from now on, or fails saying why it cannot.
    pub fn try_new(signals: &[libc::c_int]) -> io::Result<Listener> {
        let set = set_of(signals);
        block(&set)?;
        Ok(Listener {
            fd: Some(signalfd(&set)?),
        })
    }

    /// Listens for `signals` from now on; hears nothing if that cannot be set up.
    pub fn new(signals: &[libc::c_int]) -> Listener {
        Listener::try_new(signals).unwrap_or(Listener { fd: None })
    }

    /// Waits for the signalfd to be readable, then takes one pending signal: its number, or
    /// `None` when another reader of the same signalfd took it first.
    pub async fn take(&self) -> Option<libc::c_int> {
        let Some(fd) = &self.fd else {
            return std::future::pending().await;
        };
        let Ok(mut guard) = fd.readable().await else {
            return std::future::pending().await;
        };
        match read_one(fd) {
            Ok(Some(signal)) => Some(signal),
            Ok(None) => {
                guard.clear_ready();
                None
            }
            Err(_) => std::future::pending().await,
        }
    }

    /// The next signal's number.
    pub async fn next(&self) -> libc::c_int {
        loop {
            if let Some(signal) = self.take().await {
                return signal;
            }
        }
    }
}

/// Listens for SIGTERM and SIGINT from the moment it is created.
pub struct Terminations(Listener);

impl Terminations {
    /// Starts listening; call before any waiting (and any thread) so no signal is missed.
    pub fn listen() -> Terminations {
        Terminations(Listener::new(&[libc::SIGTERM, libc::SIGINT]))
    }

    /// Resolves with the signal number (15 or 2) when one arrives.
    pub async fn next(&mut self) -> i32 {
        self.0.next().await
    }
}
