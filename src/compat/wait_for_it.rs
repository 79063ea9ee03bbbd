//! `wait-for-it` (vishnubob/wait-for-it, the script Debian packages): called by that name,
//! readygate reads that command line and behaves as the script does — the same lines on stderr,
//! the same exit statuses (1 for a bad command line, 124 for a timeout, else the command's own),
//! the same `--strict` rule — while readygate's engine does the waiting. Where the script's
//! behaviour is an accident of bash, `timeout(1)` or its re-invocation of itself, the choice
//! made here is written next to the code and in the README ("Migrating from wait-for-it").

use std::ffi::OsString;
use std::net::IpAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::engine::{self, Condition, NoWatch, Policy, Reason};
use crate::plan::{ATTEMPT_TIMEOUT, INTERVAL, MAX_INTERVAL};
use crate::redact::{one_line, quoted};
use crate::signal::Terminations;
use crate::target::{Endpoint, Host};
use crate::transport::connect_tcp;

/// The script's timeout when none is given, as it prints it.
const DEFAULT_TIMEOUT: &str = "15";
/// The script's status for a bad command line (it exits from `usage`).
const USAGE: u8 = 1;
/// The status of `timeout(1)` when time ran out, which the script passes on.
const TIMED_OUT: u8 = 124;
/// Longer deadlines (centuries) are no deadline at all; this keeps `Instant` arithmetic sound.
const LONGEST: Duration = Duration::from_secs(u32::MAX as u64);
/// Where the script's `/dev/tcp` (through getaddrinfo) looks up a PORT that is a service name.
const SERVICES: &str = "/etc/services";

/// What a wait-for-it command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Invocation {
    /// Print the complaint (absent with `--help`, or when `-q` came first), then the usage
    /// text (always, even with `-q`), and exit 1.
    Usage(Option<String>),
    /// Wait for the port, then maybe run the command.
    Wait(Plan),
}

/// One wait, as the script would carry it out.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    /// HOST as typed: the script prints it verbatim.
    host: String,
    /// PORT as typed: the script prints it verbatim.
    port: String,
    /// TIMEOUT as typed (`15` when absent or empty): the script prints it verbatim.
    timeout: String,
    /// `-s`: run the command only if the port opened.
    strict: bool,
    /// `-q`: no status lines.
    quiet: bool,
    /// `--child`: the script's own re-invocation under `timeout(1)`; waits with no deadline
    /// and never runs the command.
    child: bool,
    /// `-- COMMAND ARGS`; the script runs it only when its first word is not empty.
    command: Vec<OsString>,
}

/// How the script reads TIMEOUT: bash arithmetic decides whether there is a deadline,
/// `timeout(1)` reads the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deadline {
    /// A positive whole number of seconds.
    After(Duration),
    /// Zero or negative: no deadline.
    Never,
    /// Not a number bash reads (`1.5`, `30s`, `08`): bash reports an error and the script
    /// waits with no deadline; readygate does the same, with a one-line warning instead.
    Unreadable,
}

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
pub fn main(cmdname: &str, args: Vec<OsString>) -> ExitCode {
    let plan = match parse(args) {
        Invocation::Usage(complaint) => {
            if let Some(complaint) = complaint {
                eprintln!("{complaint}");
            }
            eprint!("{}", usage(cmdname));
            return ExitCode::from(USAGE);
        }
        Invocation::Wait(plan) => plan,
    };
    let say = |line: String| {
        if !plan.quiet {
            eprintln!("{cmdname}: {}", one_line(&line));
        }
    };
    let deadline = deadline(&plan.timeout);
    if deadline == Deadline::Unreadable {
        eprintln!(
            "{cmdname}: timeout {} is not a whole number of seconds: waiting without a timeout, as wait-for-it does",
            quoted(&plan.timeout)
        );
    }
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
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("{cmdname}: cannot start: {err}");
            return ExitCode::from(USAGE);
        }
    };
    let port = Port(endpoint(&plan.host, &plan.port));
    let status = match runtime.block_on(wait(port, limit, target.clone())) {
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
        Waited::Signal(signal) => return ExitCode::from(crate::exit::Exit::Signal(signal).code()),
    };
    drop(runtime);
    let runs = plan
        .command
        .first()
        .is_some_and(|program| !program.is_empty());
    if plan.child || !runs {
        return ExitCode::from(status);
    }
    if status != 0 && plan.strict {
        say("strict mode, refusing to execute subprocess".into());
        return ExitCode::from(status);
    }
    ExitCode::from(crate::exec::exec(&plan.command).code())
}

/// Retries the port through readygate's engine until it accepts, `limit` passes, or a signal.
async fn wait(port: Port, limit: Option<Duration>, name: String) -> Waited {
    let mut signals = Terminations::listen();
    let policy = Policy {
        deadline: limit.filter(|limit| *limit <= LONGEST),
        attempt_timeout: ATTEMPT_TIMEOUT,
        interval: INTERVAL,
        max_interval: MAX_INTERVAL,
        success_threshold: 1,
        any: false,
        invert: false,
        max_attempts: None,
    };
    let names = [name];
    let started = Instant::now();
    tokio::select! {
        report = engine::run(vec![port], &names, &policy) => if report.ready {
            Waited::Available(started.elapsed())
        } else {
            Waited::TimedOut
        },
        signal = signals.next() => Waited::Signal(signal),
    }
}

/// The script's argument loop, case for case: a word with a `:` is always `host:port`; `-h`,
/// `-p` and `-t` take the next word, and an empty one ends the loop; `--` takes the rest.
fn parse(args: Vec<OsString>) -> Invocation {
    let mut host = String::new();
    let mut port = String::new();
    let mut timeout = String::new();
    let (mut strict, mut quiet, mut child) = (false, false, false);
    let mut command = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        if arg.contains(':') {
            (host, port) = split_host_port(&arg);
            continue;
        }
        match arg.as_str() {
            "--child" => child = true,
            "-q" | "--quiet" => quiet = true,
            "-s" | "--strict" => strict = true,
            "-h" | "-p" | "-t" => {
                let value = args
                    .next()
                    .map(|value| value.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let stop = value.is_empty();
                match arg.as_str() {
                    "-h" => host = value,
                    "-p" => port = value,
                    _ => timeout = value,
                }
                if stop {
                    break;
                }
            }
            "--" => {
                command = args.collect();
                break;
            }
            "--help" => return Invocation::Usage(None),
            _ => {
                if let Some(value) = arg.strip_prefix("--host=") {
                    host = value.to_string();
                } else if let Some(value) = arg.strip_prefix("--port=") {
                    port = value.to_string();
                } else if let Some(value) = arg.strip_prefix("--timeout=") {
                    timeout = value.to_string();
                } else {
                    let complaint = format!("Unknown argument: {}", one_line(&arg));
                    return Invocation::Usage((!quiet).then_some(complaint));
                }
            }
        }
    }
    if host.is_empty() || port.is_empty() {
        let complaint = "Error: you need to provide a host and port to test.".to_string();
        return Invocation::Usage((!quiet).then_some(complaint));
    }
    if timeout.is_empty() {
        timeout = DEFAULT_TIMEOUT.into();
    }
    Invocation::Wait(Plan {
        host,
        port,
        timeout,
        strict,
        quiet,
        child,
        command,
    })
}

/// `hostport=(${1//:/ })`: every `:` becomes a space, the result is split into words, and the
/// first two are HOST and PORT (either may come out empty, which is then a usage error).
fn split_host_port(arg: &str) -> (String, String) {
    let spaced = arg.replace(':', " ");
    let mut words = spaced.split([' ', '\t', '\n']).filter(|w| !w.is_empty());
    let host = words.next().unwrap_or_default().to_string();
    let port = words.next().unwrap_or_default().to_string();
    (host, port)
}

/// TIMEOUT as the script reads it: `[[ $TIMEOUT -gt 0 ]]` in bash arithmetic (a leading `0`
/// means octal, so `08` is an error), then `timeout $TIMEOUT`, which reads it as decimal.
fn deadline(text: &str) -> Deadline {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Deadline::Unreadable;
    }
    if digits.starts_with('0') && digits.bytes().any(|b| b == b'8' || b == b'9') {
        return Deadline::Unreadable;
    }
    if negative || digits.bytes().all(|b| b == b'0') {
        return Deadline::Never;
    }
    Deadline::After(Duration::from_secs(digits.parse().unwrap_or(u64::MAX)))
}

/// Where the script's `/dev/tcp/$HOST/$PORT` connects. HOST is never refused up front: an
/// address literal is used as is, anything else is looked up on every attempt. PORT is read
/// as glibc's getaddrinfo reads it: a number (sign allowed, wrapping at 16 bits), else a TCP
/// service name. What cannot be connected to is never ready, as with the script.
fn endpoint(host: &str, port: &str) -> Result<Endpoint, Reason> {
    let port = port_number(port)?;
    if port == 0 {
        return Err("port 0 cannot be connected to".into());
    }
    let host = match host.parse::<IpAddr>() {
        Ok(ip) => Host::Ip(ip),
        Err(_) => Host::Name(host.to_string()),
    };
    Ok(Endpoint { host, port })
}

fn port_number(text: &str) -> Result<u16, Reason> {
    let trimmed = text.trim_start_matches([' ', '\t', '\n']);
    let (negative, digits) = match trimmed.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, trimmed.strip_prefix('+').unwrap_or(trimmed)),
    };
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        // strtoul: saturates on overflow, negates modulo 2^64; htons keeps the low 16 bits.
        let value = digits.parse::<u64>().unwrap_or(u64::MAX);
        let value = if negative {
            value.wrapping_neg()
        } else {
            value
        };
        return Ok(value as u16);
    }
    let services = std::fs::read_to_string(SERVICES).unwrap_or_default();
    service_port(&services, text).ok_or_else(|| format!("unknown TCP service {}", quoted(text)))
}

/// The TCP port of service `name` (or an alias) in an `/etc/services` text.
fn service_port(services: &str, name: &str) -> Option<u16> {
    services.lines().find_map(|line| {
        let line = line.split('#').next().unwrap_or_default();
        let mut words = line.split_whitespace();
        let official = words.next()?;
        let (port, protocol) = words.next()?.split_once('/')?;
        let named = official == name || words.any(|alias| alias == name);
        (protocol == "tcp" && named)
            .then(|| port.parse().ok())
            .flatten()
    })
}

/// The one port waited for, as the engine retries it: a TCP connection, or the reason no
/// connection can ever be made.
struct Port(Result<Endpoint, Reason>);

impl Condition for Port {
    type Watch = NoWatch;

    fn watch(&self) -> NoWatch {
        NoWatch
    }

    async fn attempt(&self) -> Result<(), Reason> {
        match &self.0 {
            Ok(endpoint) => connect_tcp(endpoint).await.map(drop),
            Err(reason) => Err(reason.clone()),
        }
    }
}

/// The script's usage text, word for word.
fn usage(cmdname: &str) -> String {
    format!(
        "Usage:
    {cmdname} host:port [-s] [-t timeout] [-- command args]
    -h HOST | --host=HOST       Host or IP under test
    -p PORT | --port=PORT       TCP port under test
                                Alternatively, you specify the host and port as host:port
    -s | --strict               Only execute subcommand if the test succeeds
    -q | --quiet                Don't output any status messages
    -t TIMEOUT | --timeout=TIMEOUT
                                Timeout in seconds, zero for no timeout
    -- COMMAND ARGS             Execute command with args after the test finishes
"
    )
}

#[cfg(test)]
mod tests;
