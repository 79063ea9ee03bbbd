//! Signals: the ones readygate acts on come through tokio's handlers; COMMAND gets back the
//! signal mask and the ignored signals readygate was started with.

use std::mem::MaybeUninit;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::signal::unix::{signal, Signal, SignalKind};

/// The signals (bit N-1 for signal N) that were ignored when the process started.
static IGNORED_AT_START: AtomicU64 = AtomicU64::new(0);

/// The signal mask the process started with, as a bit set like [`IGNORED_AT_START`].
static MASK_AT_START: AtomicU64 = AtomicU64::new(0);

/// Runs before std's start-up, which ignores SIGPIPE for readygate itself: functions in
/// `.init_array` run before `main` with glibc and musl alike.
#[used]
#[link_section = ".init_array"]
static RECORD_AT_START: extern "C" fn() = record_at_start;

/// The signals whose disposition readygate changes (std ignores SIGPIPE; tokio's handlers take
/// the others it listens for), and so must hand back; any other stays as it was across exec.
const HANDLED: [libc::c_int; 7] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGPIPE,
    libc::SIGTERM,
    libc::SIGCHLD,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// The standard signals, whose mask bits are kept.
const STANDARD: std::ops::RangeInclusive<libc::c_int> = 1..=31;

extern "C" fn record_at_start() {
    let (mut ignored, mut masked) = (0u64, 0u64);
    // SAFETY: sigaction with a null new action and pthread_sigmask with a null new set only
    // write the current state into buffers owned here; a failed call leaves its bit clear.
    unsafe {
        let mut mask = MaybeUninit::<libc::sigset_t>::zeroed();
        let got_mask =
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), mask.as_mut_ptr()) == 0;
        for signal in HANDLED {
            let mut action = MaybeUninit::<libc::sigaction>::zeroed();
            if libc::sigaction(signal, std::ptr::null(), action.as_mut_ptr()) == 0
                && action.assume_init_ref().sa_sigaction == libc::SIG_IGN
            {
                ignored |= 1 << (signal - 1);
            }
        }
        for signal in STANDARD {
            if got_mask && libc::sigismember(mask.as_ptr(), signal) == 1 {
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

/// One signal's stream, or nothing if its handler cannot be installed (then it is not heard).
pub struct Listener(Option<Signal>);

impl Listener {
    /// Listens for signal `number` from now on.
    pub fn new(number: libc::c_int) -> Listener {
        Listener(signal(SignalKind::from_raw(number)).ok())
    }

    /// Resolves when the signal arrives.
    pub async fn recv(&mut self) {
        std::future::poll_fn(|cx| self.poll(cx)).await
    }

    /// Ready when the signal has arrived; cancel-safe, as tokio's `Signal::poll_recv`.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.0 {
            Some(signal) => match signal.poll_recv(cx) {
                Poll::Ready(Some(())) => Poll::Ready(()),
                Poll::Ready(None) | Poll::Pending => Poll::Pending,
            },
            None => Poll::Pending,
        }
    }
}

/// The signals that end readygate when it stands for COMMAND (`--on-exit`), so that they are
/// passed on to COMMAND instead of killing readygate and orphaning it: every signal whose
/// default action ends a process and that comes from outside — SIGHUP, SIGINT, SIGQUIT,
/// SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR and the real-time
/// signals. Left out: faults the kernel raises in readygate itself (SIGSEGV, SIGBUS, SIGFPE,
/// SIGILL, SIGTRAP, SIGSYS, SIGABRT) and its own resource limits (SIGXCPU, SIGXFSZ), which
/// must still end readygate; SIGPIPE, which readygate ignores; and the signals whose default
/// does not end a process (SIGCHLD, SIGWINCH, SIGURG, SIGCONT, the stop signals).
pub fn forwarded() -> Vec<libc::c_int> {
    let mut numbers = vec![
        libc::SIGHUP,
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGTERM,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGIO,
        libc::SIGPWR,
    ];
    numbers.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    numbers
}

/// Listens for the signals that stop readygate from the moment it is created: readygate is
/// often PID 1, where a signal without a handler is ignored.
pub struct Terminations {
    /// Each signal with its stream.
    listeners: Vec<(libc::c_int, Listener)>,
}

impl Terminations {
    /// SIGTERM and SIGINT; call before any waiting so no signal is missed.
    pub fn listen() -> Terminations {
        Terminations::of(&[libc::SIGTERM, libc::SIGINT])
    }

    /// Every signal of [`forwarded`]: for a readygate that stands for COMMAND.
    pub fn forwarded() -> Terminations {
        Terminations::of(&forwarded())
    }

    fn of(numbers: &[libc::c_int]) -> Terminations {
        Terminations {
            listeners: numbers.iter().map(|&n| (n, Listener::new(n))).collect(),
        }
    }

    /// Resolves with the signal's number when one arrives.
    pub async fn next(&mut self) -> i32 {
        // Cancellation: polling is cancel-safe; a signal that arrives meanwhile stays queued.
        std::future::poll_fn(|cx| {
            for (number, listener) in &mut self.listeners {
                if listener.poll(cx).is_ready() {
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
