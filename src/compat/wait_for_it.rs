//! `wait-for-it` (vishnubob/wait-for-it, the script Debian packages): called by that name,
//! readygate reads that command line and behaves as the script does — the same lines on stderr,
//! the same exit statuses (1 for a bad command line, 124 for a timeout, else the command's own),
//! the same `--strict` rule — while readygate's engine does the waiting. Where the script's
//! behaviour is an accident of bash, `timeout(1)` or its re-invocation of itself, the choice
//! made here is written next to the code and in docs/compat.md.

pub(super) mod args;

use std::ffi::OsString;
use std::time::{Duration, Instant};

use crate::engine::{self, Condition, Miss, NoWatch, Policy};
use crate::error::Failure;
use crate::net::transport::connect_tcp;
use crate::plan::ATTEMPT_TIMEOUT;
use crate::process::signal::Terminations;
use crate::redact::{one_line, quoted};
use crate::target::Endpoint;
use args::{deadline, endpoint, parse, usage, Deadline, Invocation};

/// The script's status for a bad command line (it exits from `usage`).
const USAGE: u8 = 1;
/// The status of `timeout(1)` when time ran out, which the script passes on.
const TIMED_OUT: u8 = 124;
/// Longer deadlines (centuries) are no deadline at all; this keeps `Instant` arithmetic sound.
const LONGEST: Duration = Duration::from_secs(u32::MAX as u64);

/// How the wait ended.
enum Waited {
    /// The port accepted a connection after this long.
    Available(Duration),
    /// The deadline passed first.
    TimedOut,
    /// Stopped by this signal before either.
    Signal(i32),
}

/// Runs a wait-for-it command line (`args`: everything after argv[0]) under the name
/// `cmdname`, which the script's messages start with.
pub fn main(cmdname: &str, args: Vec<OsString>) -> u8 {
    let plan = match parse(args) {
        Invocation::Usage(complaint) => {
            if let Some(complaint) = complaint {
                say!("{complaint}");
            }
            let usage = usage(cmdname);
            crate::output::stderr(usage.strip_suffix('\n').unwrap_or(&usage));
            return USAGE;
        }
        Invocation::Wait(plan) => plan,
    };
    let say = |line: String| {
        if !plan.quiet {
            say!("{cmdname}: {}", one_line(&line));
        }
    };
    let deadline = deadline(&plan.timeout);
    if deadline == Deadline::Unreadable {
        say!(
            "{cmdname}: timeout {} is not a whole number of seconds: waiting without a timeout, as wait-for-it does",
            quoted(&plan.timeout)
        );
    }
    let runtime = match engine::runtime() {
        Ok(runtime) => runtime,
        Err(err) => {
            say!("{cmdname}: cannot start: {err}");
            return USAGE;
        }
    };
    // Listening before the "waiting" line: a signal sent once it is read is not missed.
    let signals = {
        let _context = runtime.enter();
        Terminations::listen()
    };
    let target = format!("{}:{}", plan.host, plan.port);
    let limit = match deadline {
        Deadline::After(limit) => {
            say(format!("waiting {} seconds for {target}", plan.timeout));
            // The script's child has no deadline of its own: `timeout(1)` was its deadline.
            (!plan.child).then_some(limit)
        }
        Deadline::Never | Deadline::Unreadable => {
            say(format!("waiting for {target} without a timeout"));
            None
        }
    };
    let port = Port(endpoint(&plan.host, &plan.port));
    let status = match runtime.block_on(wait(port, limit, target.clone(), signals)) {
        Waited::Available(after) => {
            say(format!(
                "{target} is available after {} seconds",
                after.as_secs()
            ));
            0
        }
        Waited::TimedOut => {
            say(format!(
                "timeout occurred after waiting {} seconds for {target}",
                plan.timeout
            ));
            TIMED_OUT
        }
        Waited::Signal(signal) => return crate::exit::Exit::Signal(signal).code(),
    };
    drop(runtime);
    let runs = plan
        .command
        .first()
        .is_some_and(|program| !program.is_empty());
    if plan.child || !runs {
        return status;
    }
    if status != 0 && plan.strict {
        say("strict mode, refusing to execute subprocess".into());
        return status;
    }
    crate::process::exec::exec(&plan.command).code()
}

/// Retries the port through readygate's engine until it accepts, `limit` passes, or a signal.
async fn wait(
    port: Port,
    limit: Option<Duration>,
    name: String,
    mut signals: Terminations,
) -> Waited {
    let policy = Policy {
        deadline: limit.filter(|limit| *limit <= LONGEST),
        attempt_timeout: ATTEMPT_TIMEOUT,
        success_threshold: 1,
        any: false,
        invert: false,
        max_attempts: None,
    };
    let local = port
        .0
        .as_ref()
        .is_ok_and(|endpoint| endpoint.host.is_local());
    let schedules = [crate::plan::schedule(local, None)];
    let names = [name];
    let started = Instant::now();
    tokio::select! {
        report = engine::run(vec![port], &names, &schedules, &policy) => if report.ready {
            Waited::Available(started.elapsed())
        } else {
            Waited::TimedOut
        },
        signal = signals.next() => Waited::Signal(signal),
    }
}

/// The one port waited for, as the engine retries it: a TCP connection, or the reason no
/// connection can ever be made.
struct Port(Result<Endpoint, String>);

impl Condition for Port {
    type Watch = NoWatch;
    type Failure = Failure;

    fn watch(&self) -> NoWatch {
        NoWatch
    }

    async fn attempt(&self) -> Result<(), Miss<Failure>> {
        match &self.0 {
            Ok(endpoint) => Ok(connect_tcp(endpoint).await.map(drop)?),
            Err(reason) => Err(Miss::NotYet(Failure::Protocol(reason.clone()))),
        }
    }
}

#[cfg(test)]
mod tests;
