//! `wait --on-exit URL -- COMMAND`: COMMAND runs as a child so that a Job's old-style sidecar
//! can be told (`POST URL`) when it ends; readygate forwards signals, passes the status through
//! and, as PID 1, reaps orphans.

use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;

use rustix::process::{kill_process, waitpid, Pid, Signal, WaitOptions};
use tokio::time::{sleep, timeout};

use crate::exit::Exit;
use crate::kind::http::HttpTarget;
use crate::kind::target::Target;
use crate::kind::Kind;
use crate::kind::{http, Context, Options};
use crate::process::signal::Terminations;

/// Reap even if a SIGCHLD was somehow not seen: a bound on how late an exit is noticed.
const REAP_POLL: Duration = Duration::from_secs(1);

/// Runs COMMAND as a child to its end, forwarding `signals` to it, and returns its exit
/// status; the caller sends the notice ([`notify`]) afterwards, as on every exit of this mode.
pub async fn supervise(command: &[OsString], url: &HttpTarget, signals: &mut Terminations) -> Exit {
    // Listening before the child exists, so no exit is missed.
    let mut exits = Terminations::of(&[libc::SIGCHLD]);
    let (program, args) = command.split_first().expect("a command was given");
    // A check's command still running must not live on beside COMMAND, nor be reaped here.
    crate::kind::command::end_all();
    let mut child = Command::new(program);
    child.args(args);
    crate::process::signal::restore_for(&mut child);
    let pid = match child.spawn() {
        Ok(child) => Pid::from_child(&child),
        Err(err) => return crate::process::exec::cannot_run(program, &err),
    };
    tracing::info!(
        event = "command",
        "running {} as pid {pid}; POST {} when it exits",
        crate::text::quoted(&program.to_string_lossy()),
        shown(url)
    );
    let exit = wait(pid, signals, &mut exits).await;
    match &exit {
        Exit::Signal(n) => tracing::info!(
            event = "command",
            status = exit.code(),
            "the command was killed by signal {n}"
        ),
        other => tracing::info!(
            event = "command",
            status = other.code(),
            "the command exited with status {}",
            other.code()
        ),
    }
    exit
}

/// Waits for COMMAND to exit, forwarding signals to it and reaping every other child.
async fn wait(pid: Pid, signals: &mut Terminations, exits: &mut Terminations) -> Exit {
    loop {
        if let Some(exit) = reap(pid) {
            return exit;
        }
        // Cancellation: every arm is cancel-safe; a signal that arrives meanwhile stays queued.
        let forward = tokio::select! {
            number = signals.next() => Some(number),
            // A child (COMMAND, or an orphan handed to PID 1) may have exited.
            _ = exits.next() => None,
            () = sleep(REAP_POLL) => None,
        };
        if let Some(number) = forward {
            tracing::info!(
                event = "signal",
                "forwarding signal {number} to the command"
            );
            // The pid is COMMAND's, not reaped yet, so it cannot have been recycled.
            if let Some(signal) = signal_of(number) {
                let _ = kill_process(pid, signal);
            }
        }
    }
}

/// Collects every exited child without blocking (as PID 1 or a subreaper, orphans would stay
/// zombies otherwise); COMMAND's status if it is among them.
fn reap(command: Pid) -> Option<Exit> {
    let mut found = None;
    loop {
        match waitpid(None, WaitOptions::NOHANG) {
            Ok(Some((pid, status))) => {
                if pid == command {
                    found = Some(match status.terminating_signal() {
                        Some(signal) => Exit::Signal(signal),
                        None => Exit::Child(status.exit_status().unwrap_or(0) as u8),
                    });
                }
            }
            Err(rustix::io::Errno::INTR) => {}
            // None exited since the last call, or no child is left.
            _ => return found,
        }
    }
}

/// The signal to pass on for `number`: a standard one, or a real-time one.
fn signal_of(number: i32) -> Option<Signal> {
    if let Some(signal) = Signal::from_named_raw(number) {
        return Some(signal);
    }
    let real_time = libc::SIGRTMIN()..=libc::SIGRTMAX();
    // SAFETY: a real-time signal from libc's SIGRTMIN() to SIGRTMAX(), the range libc leaves to
    // applications (its own reserved ones lie below it), as rustix requires of one it sends.
    real_time
        .contains(&number)
        .then(|| unsafe { Signal::from_raw_unchecked(number) })
}

/// Sends `POST url` over a fresh connection, bounded by `attempt_timeout`, and logs how it
/// went; a failure is never fatal. `run` is the run's context, of which the notice takes only
/// its TLS trust and its memory.
pub async fn notify(url: &HttpTarget, attempt_timeout: Duration, run: &Context) {
    let context = run.notice();
    let shown = shown(url);
    // Bounded here rather than by an engine's attempt.
    let at = crate::runtime::Attempt::unbounded();
    match timeout(attempt_timeout, http::send(url, &context, &at)).await {
        Ok(Ok(status)) if status.is_success() => {
            tracing::info!(
                event = "on_exit",
                "POST {shown}: status {}",
                status.as_u16()
            );
        }
        Ok(Ok(status)) => {
            tracing::warn!(
                event = "on_exit",
                "POST {shown}: status {}",
                status.as_u16()
            )
        }
        Ok(Err(reason)) => {
            tracing::warn!(event = "on_exit", reason = %reason, "POST {shown} failed: {reason}")
        }
        Err(_) => tracing::warn!(
            event = "on_exit",
            "POST {shown} failed: no answer within {}",
            crate::grammar::duration::humanize(attempt_timeout)
        ),
    }
}

/// Sends the notice when the plan itself was refused (a usage error), if `url` is a valid
/// `http(s)://` URL: with default options, as nothing else of the plan can be trusted.
pub async fn notify_refused(url: &str, attempt_timeout: Duration) {
    if let Ok(Kind::Http(url)) = Target::parse(url).map(|target| target.kind) {
        notify(&url, attempt_timeout, &Context::new(Options::default())).await;
    }
}

/// The URL for logs: built from its parts, so credentials it carried are never shown.
fn shown(url: &HttpTarget) -> String {
    let scheme = if url.tls { "https" } else { "http" };
    format!("{scheme}://{}{}", url.authority, url.path)
}
