//! SIGTERM and SIGINT while waiting: readygate is often PID 1, where a signal without a handler
//! is ignored, so it handles them itself and exits 128+N.

use tokio::signal::unix::{signal, Signal, SignalKind};

/// Listens for SIGTERM and SIGINT from the moment it is created.
pub struct Terminations {
    term: Option<Signal>,
    int: Option<Signal>,
}

impl Terminations {
    /// Installs the handlers; call before any waiting so no signal is missed.
    pub fn listen() -> Terminations {
        Terminations {
            term: signal(SignalKind::terminate()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    /// Resolves with the signal number (15 or 2) when one arrives.
    pub async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = recv(&mut self.term) => libc::SIGTERM,
            _ = recv(&mut self.int) => libc::SIGINT,
        }
    }
}

/// The next delivery of `signal`; never, if its handler could not be installed.
pub async fn recv(signal: &mut Option<Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// The signal that tells of folder changes (dnotify): SIGURG, whose default action is to
/// ignore it, so one that lands where it is not blocked is dropped instead of killing.
pub const NOTICE: libc::c_int = libc::SIGURG;

thread_local! {
    /// Whether this thread blocked [`NOTICE`] itself (it was not blocked already).
    static NOTICE_BLOCKED_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A signal set holding only [`NOTICE`].
pub fn notice_set() -> libc::sigset_t {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initializes the set it is given; sigaddset then adds a valid signal
    // number to that initialized set.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), NOTICE);
        set.assume_init()
    }
}

/// Blocks [`NOTICE`] in this thread, so it waits to be read through a signalfd; threads started
/// from here later inherit the block.
pub fn block_notices() -> std::io::Result<()> {
    let set = notice_set();
    let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `set` is initialized and `old` is writable; changing the calling thread's mask
    // has no other precondition.
    let failed = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, old.as_mut_ptr()) };
    if failed != 0 {
        return Err(std::io::Error::from_raw_os_error(failed));
    }
    // SAFETY: pthread_sigmask succeeded, so it wrote the previous mask into `old`.
    let was_blocked = unsafe { libc::sigismember(old.as_ptr(), NOTICE) } == 1;
    if !was_blocked {
        NOTICE_BLOCKED_HERE.with(|here| here.set(true));
    }
    Ok(())
}

/// Gives back the signal mask readygate started with, for COMMAND: an exec'd or spawned
/// program inherits the mask (std's `Command` leaves it alone), and one with SIGURG blocked
/// would never hear of urgent socket data. A NOTICE still pending is dropped here.
pub fn restore_mask_for_command() {
    if NOTICE_BLOCKED_HERE.with(|here| here.replace(false)) {
        let set = notice_set();
        // SAFETY: `set` is initialized; unblocking in the calling thread has no precondition.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
    }
}
