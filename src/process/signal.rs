//! Signals: the ones readygate acts on come through tokio's handlers; COMMAND gets back the
//! signal mask and the ignored signals readygate was started with.

use std::mem::MaybeUninit;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::exit::Exit;

/// The standard signals (bit N-1 for signal N) ignored when the process started.
static IGNORED_AT_START: AtomicU64 = AtomicU64::new(0);
/// The standard signals blocked when the process started.
static MASK_AT_START: AtomicU64 = AtomicU64::new(0);

/// Runs before std's start-up, which ignores SIGPIPE for readygate itself: functions in
/// `.init_array` run before `main` with glibc and musl alike.
#[used]
#[link_section = ".init_array"]
static RECORD_AT_START: extern "C" fn() = record_at_start;

/// The standard signals, whose disposition and mask bit are handed on.
const STANDARD: std::ops::RangeInclusive<libc::c_int> = 1..=31;

extern "C" fn record_at_start() {
    let (mut ignored, mut masked) = (0u64, 0u64);
    // SAFETY: sigaction with a null new action and pthread_sigmask with a null new set only
    // write the current state into zeroed buffers owned here; a failed call leaves bits clear.
    unsafe {
        let mut mask = MaybeUninit::<libc::sigset_t>::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), mask.as_mut_ptr());
        for signal in STANDARD {
            let mut action = MaybeUninit::<libc::sigaction>::zeroed();
            if libc::sigaction(signal, std::ptr::null(), action.as_mut_ptr()) == 0
                && action.assume_init_ref().sa_sigaction == libc::SIG_IGN
            {
                ignored |= 1 << (signal - 1);
            }
            if libc::sigismember(mask.as_ptr(), signal) == 1 {
                masked |= 1 << (signal - 1);
            }
        }
    }
    IGNORED_AT_START.store(ignored, Ordering::Relaxed);
    MASK_AT_START.store(masked, Ordering::Relaxed);
}

/// Gives COMMAND, exec'd in place or spawned, the signal state readygate was started with: std
/// empties the mask and resets SIGPIPE, and tokio's handlers end at exec with every signal it
/// caught at its default, even one the parent had ignored (`nohup`, a shell's background job).
pub fn restore_for(command: &mut Command) {
    let ignored = IGNORED_AT_START.load(Ordering::Relaxed);
    let masked = MASK_AT_START.load(Ordering::Relaxed);
    // SAFETY: the hook only calls signal(2), sigemptyset, sigaddset and pthread_sigmask, which
    // are async-signal-safe, on data it owns: nothing allocates or locks between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let mut mask = MaybeUninit::<libc::sigset_t>::zeroed();
            libc::sigemptyset(mask.as_mut_ptr());
            for signal in STANDARD {
                let bit = 1u64 << (signal - 1);
                if ignored & bit != 0 {
                    libc::signal(signal, libc::SIG_IGN);
                }
                if masked & bit != 0 {
                    libc::sigaddset(mask.as_mut_ptr(), signal);
                }
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, mask.as_ptr(), std::ptr::null_mut());
            Ok(())
        });
    }
}

/// Listens for a set of signals from the moment it is created: readygate is often PID 1, where
/// a signal without a handler is ignored. A signal whose handler cannot be installed is not heard.
pub struct Terminations(Vec<(libc::c_int, Signal)>);

impl Terminations {
    /// SIGTERM and SIGINT; call before any waiting so no signal is missed.
    pub fn listen() -> Terminations {
        Terminations::of(&[libc::SIGTERM, libc::SIGINT])
    }

    /// For a readygate that stands for COMMAND (`--on-exit`): every signal from outside whose
    /// default ends a process, to pass on instead of dying and orphaning COMMAND. Left out: the
    /// faults and resource limits the kernel raises in readygate itself (SIGSEGV, SIGBUS, SIGFPE,
    /// SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGXCPU, SIGXFSZ), which must still end it; SIGPIPE, which
    /// it ignores; and the signals whose default does not end a process.
    pub fn forwarded() -> Terminations {
        use libc::{
            SIGALRM, SIGHUP, SIGINT, SIGIO, SIGPROF, SIGPWR, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
            SIGVTALRM,
        };
        let mut numbers = vec![
            SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,
            SIGPWR,
        ];
        numbers.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
        Terminations::of(&numbers)
    }

    /// Any set of signals (`supervise` listens for SIGCHLD this way).
    pub fn of(numbers: &[libc::c_int]) -> Terminations {
        let listen = |&n: &libc::c_int| Some((n, signal(SignalKind::from_raw(n)).ok()?));
        Terminations(numbers.iter().filter_map(listen).collect())
    }

    /// Resolves with the signal's number when one arrives.
    pub async fn next(&mut self) -> i32 {
        // Cancellation: polling is cancel-safe; a signal that arrives meanwhile stays queued.
        std::future::poll_fn(|cx| {
            for (number, signal) in &mut self.0 {
                if let Poll::Ready(Some(())) = signal.poll_recv(cx) {
                    return Poll::Ready(*number);
                }
            }
            Poll::Pending
        })
        .await
    }

    /// A signal that has already arrived, without waiting.
    pub async fn arrived(&mut self) -> Option<i32> {
        // A yield lets the runtime's driver take in a signal that is still on its way to it.
        tokio::task::yield_now().await;
        tokio::select! {
            biased;
            signal = self.next() => Some(signal),
            () = std::future::ready(()) => None,
        }
    }
}

/// Says that a terminating signal ended the run `when` ("before …", "while …") and gives its
/// exit status.
pub fn stopped(signal: i32, when: &str) -> Exit {
    let status = Exit::Signal(signal).code();
    tracing::warn!(
        event = "signal",
        status,
        "stopped by signal {signal} {when}"
    );
    Exit::Signal(signal)
}
