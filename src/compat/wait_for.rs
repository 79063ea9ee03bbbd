//! `wait-for` (eficode/wait-for, the POSIX sh script): called by that name, readygate reads its
//! command line and keeps its contract — one `host:port` (as `nc -z` checks it) or
//! `http(s)://` URL (as `wget` fetches it: redirects followed to any host, ready on a final
//! 2xx), `-t` seconds with 0 for none, "Operation timed out" and status 1 when time runs out,
//! the command only on success — while readygate's engine does the waiting. Deliberate
//! differences are written next to the code and in docs/compat.md.

mod args;

use std::ffi::OsString;
use std::time::Duration;

use crate::check::{Check, CheckWatch, Context, Options, Redirects};
use crate::engine::{self, Condition, Miss, NoWatch, Policy};
use crate::error::Failure;
use crate::plan::ATTEMPT_TIMEOUT;
use crate::process::signal::Terminations;
use crate::status::StatusRanges;
use crate::target::{Kind, Target};
use args::{parse, usage, Gate, Invocation, SCRIPT_VERSION};

/// The script's status when time ran out (and for an unknown word).
const TIMED_OUT: u8 = 1;
/// Longer deadlines (centuries) are no deadline at all; this keeps `Instant` arithmetic sound.
const LONGEST: Duration = Duration::from_secs(u32::MAX as u64);

/// Runs a wait-for command line (`args`: everything after argv[0]); `argv0` is the name the
/// usage text shows, as the script's `$0`.
pub fn main(argv0: &str, args: Vec<OsString>) -> u8 {
    let plan = match parse(args) {
        Invocation::Usage { complaint, status } => {
            if let Some(complaint) = complaint {
                say!("{complaint}");
            }
            let usage = usage(argv0);
            crate::output::stderr(usage.strip_suffix('\n').unwrap_or(&usage));
            return status;
        }
        Invocation::Version => {
            crate::output::stdout(&format!(
                "{SCRIPT_VERSION} (readygate {})",
                env!("CARGO_PKG_VERSION")
            ));
            return 0;
        }
        Invocation::Wait(plan) => plan,
    };
    let runtime = match engine::runtime() {
        Ok(runtime) => runtime,
        Err(err) => {
            say!("wait-for: cannot start: {err}");
            return TIMED_OUT;
        }
    };
    let name = match &plan.target {
        Gate::Tcp { host, port } => format!("{host}:{port}"),
        Gate::Http(url) => url.clone(),
    };
    let gate = Attempt::new(plan.target);
    let waited = runtime.block_on(wait(gate, plan.timeout, name));
    drop(runtime);
    match waited {
        Ok(true) if plan.command.is_empty() => 0,
        Ok(true) => crate::process::exec::exec(&plan.command).code(),
        Ok(false) => {
            // Printed even with -q: the script echoes it straight to stderr.
            say!("Operation timed out");
            TIMED_OUT
        }
        Err(signal) => crate::exit::Exit::Signal(signal).code(),
    }
}

/// Retries the target until it is ready (`Ok(true)`), the timeout passes (`Ok(false)`), or a
/// terminating signal arrives (`Err(signal)`).
async fn wait(gate: Attempt, timeout: Option<Duration>, name: String) -> Result<bool, i32> {
    let mut signals = Terminations::listen();
    let policy = Policy {
        deadline: timeout.filter(|limit| *limit <= LONGEST),
        // nc -w 1 and wget --timeout=1: one second per attempt.
        attempt_timeout: ATTEMPT_TIMEOUT,
        success_threshold: 1,
        any: false,
        invert: false,
        max_attempts: None,
    };
    let local = match &gate {
        Attempt::Check(check) => check.target.is_local(false),
        Attempt::Never(_) => true,
    };
    let schedules = [crate::plan::schedule(local, None)];
    let names = [name];
    tokio::select! {
        report = engine::run(vec![gate], &names, &schedules, &policy) => Ok(report.ready),
        signal = signals.next() => Err(signal),
    }
}

/// The one target, as readygate checks it; or the reason it can never be reached, which the
/// script would also only find out by failing every attempt.
enum Attempt {
    /// A target readygate checks.
    Check(Box<Check>),
    /// A port or URL no attempt can succeed with.
    Never(Failure),
}

impl Attempt {
    /// `host:port` becomes a TCP target (PORT a number or a service name, as nc reads it);
    /// a URL an HTTP target judged as wget judges it.
    fn new(gate: Gate) -> Attempt {
        let text = match gate {
            Gate::Tcp { host, port } => match tcp_port(&port) {
                Some(port) => format!("tcp://{host}:{port}"),
                None => return Attempt::Never(Failure::Protocol(format!("invalid port {port:?}"))),
            },
            Gate::Http(url) => url,
        };
        let target = match Target::parse(&text) {
            Ok(target) if matches!(target.kind, Kind::Tcp(_) | Kind::Http(_)) => target,
            Ok(_) => return Attempt::Never(Failure::Protocol(format!("cannot wait for {text:?}"))),
            Err(reason) => return Attempt::Never(Failure::Protocol(reason)),
        };
        let options = Options {
            // wget succeeds on a final 2xx only, after following redirects to any host.
            statuses: StatusRanges::parse("200-299").unwrap_or_default(),
            redirects: Redirects::AnyHost,
            ..Options::default()
        };
        Attempt::Check(Box::new(Check::new(target, Context::new(options))))
    }
}

/// PORT as nc takes it: a number from 1 to 65535, or a TCP service of `/etc/services`.
fn tcp_port(port: &str) -> Option<u16> {
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        return port.parse::<u16>().ok().filter(|port| *port != 0);
    }
    super::wait_for_it::args::tcp_service(port)
}

impl Condition for Attempt {
    type Watch = CheckWatch;
    type Failure = Failure;

    fn watch(&self) -> CheckWatch {
        match self {
            Attempt::Check(check) => check.watch(),
            Attempt::Never(_) => CheckWatch::None(NoWatch),
        }
    }

    async fn attempt(&self) -> Result<(), Miss<Failure>> {
        match self {
            Attempt::Check(check) => check.attempt().await,
            Attempt::Never(reason) => Err(Miss::NotYet(reason.clone())),
        }
    }
}

#[cfg(test)]
mod tests;
