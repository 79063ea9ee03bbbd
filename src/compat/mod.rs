//! Answering to other tools' names: an image that calls `wait-for-it` or `wait-for` keeps its
//! command lines when that file becomes a link to (or a copy of) readygate, and loses the
//! shell, nc and wget the scripts need.

mod wait_for;
mod wait_for_it;

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

use crate::engine::{self, Condition, Policy, Schedule};
use crate::error::Failure;
use crate::kind::{Check, CheckWatch, Reach};
use crate::net::endpoint::Endpoint;
use crate::net::resolve::Resolver;
use crate::net::transport::connect_tcp;
use crate::process::signal::Terminations;
use crate::runtime::Attempt;

/// Longer deadlines (centuries) are no deadline at all; this keeps `Instant` arithmetic sound.
const LONGEST: Duration = Duration::from_secs(u32::MAX as u64);

/// A tool readygate stands in for, judged by the file name in argv[0], with its arguments.
pub enum DropIn {
    /// `wait-for-it` or `wait-for-it.sh`, by the name it was called.
    WaitForIt(String, Vec<OsString>),
    /// `wait-for` or `wait-for.sh`, by the whole argv[0] (its usage text shows it).
    WaitFor(String, Vec<OsString>),
}

impl DropIn {
    /// The tool readygate was invoked as; `None` means readygate was called by its own name (or
    /// any other) and parses its own command line.
    pub fn of_invocation() -> Option<DropIn> {
        let mut args = std::env::args_os();
        let argv0 = args.next()?;
        let name = Path::new(&argv0).file_name()?.to_str()?;
        match name {
            "wait-for-it" | "wait-for-it.sh" => {
                Some(DropIn::WaitForIt(name.into(), args.collect()))
            }
            "wait-for" | "wait-for.sh" => {
                let argv0 = argv0.to_string_lossy().into_owned();
                Some(DropIn::WaitFor(argv0, args.collect()))
            }
            _ => None,
        }
    }

    /// Runs the tool on its command line and returns its exit status.
    pub fn run(self) -> u8 {
        match self {
            DropIn::WaitForIt(name, args) => wait_for_it::main(&name, args),
            DropIn::WaitFor(argv0, args) => wait_for::main(&argv0, args),
        }
    }
}

/// Prints the complaint (if any), then the script's usage text, on stderr; returns `status`.
fn usage(complaint: Option<String>, text: &str, status: u8) -> u8 {
    if let Some(complaint) = complaint {
        say!("{complaint}");
    }
    crate::output::stderr(text);
    status
}

/// The runtime, and the terminating signals listened for from now on (so that one sent once a
/// "waiting" line is read is not missed); `None` (after saying why, as `name`) when the
/// runtime cannot start.
fn start(name: &str) -> Option<(Runtime, Terminations)> {
    let runtime = crate::runtime::runtime()
        .inspect_err(|err| say!("{name}: cannot start: {err}"))
        .ok()?;
    let signals = {
        let _context = runtime.enter();
        Terminations::listen()
    };
    Some((runtime, signals))
}

/// A number's optional sign: whether it is `-`, and the text after it.
fn sign(text: &str) -> (bool, &str) {
    match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    }
}

/// Whether `text` is one or more ASCII digits.
fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// The one target a drop-in waits for, as the engine retries it.
enum Gate {
    /// A target checked as readygate checks its own.
    Check(Box<Check>),
    /// A TCP port whose host is never refused up front: a name is looked up on every attempt,
    /// by the run's resolver.
    Port(Endpoint, Resolver),
    /// The reason no attempt can succeed, which the script would also only find out by failing
    /// every attempt.
    Never(Failure),
}

impl Condition for Gate {
    type Watch = CheckWatch;

    fn watch(&self, schedule: Schedule) -> CheckWatch {
        match self {
            Gate::Check(check) => check.watch(schedule),
            Gate::Port(..) | Gate::Never(_) => None,
        }
    }

    async fn attempt(&self, at: &Attempt) -> Result<(), Failure> {
        match self {
            Gate::Check(check) => check.attempt(at).await,
            Gate::Port(endpoint, resolver) => {
                Ok(connect_tcp(endpoint, resolver, at).await.map(drop)?)
            }
            Gate::Never(reason) => Err(reason.clone()),
        }
    }
}

/// Retries `gate` through readygate's engine until it is ready (`Ok(Some(time taken))`), `limit`
/// passes (`Ok(None)`), or a terminating signal arrives (`Err(signal)`).
async fn wait(
    gate: Gate,
    limit: Option<Duration>,
    name: String,
    mut signals: Terminations,
) -> Result<Option<Duration>, i32> {
    let policy = Policy {
        deadline: limit.filter(|limit| *limit <= LONGEST),
        // nc -w 1, wget --timeout=1, and readygate's own default: one second per attempt.
        attempt_timeout: crate::plan::ATTEMPT_TIMEOUT,
        success_threshold: 1,
        stable_for: Duration::ZERO,
        any: false,
        invert: false,
        max_attempts: None,
    };
    let reach = match &gate {
        Gate::Check(check) => check.target.reach(false),
        Gate::Port(endpoint, _) if endpoint.host.is_local() => Reach::Local,
        Gate::Port(..) | Gate::Never(_) => Reach::Network,
    };
    let schedule = crate::plan::schedule(reach);
    let entries = vec![engine::Entry {
        condition: gate,
        name,
        schedule,
    }];
    let started = Instant::now();
    tokio::select! {
        report = engine::run(entries, &policy) => {
            Ok(report.ready.then(|| started.elapsed()))
        }
        signal = signals.next() => Err(signal),
    }
}
