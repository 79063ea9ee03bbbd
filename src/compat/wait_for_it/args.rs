//! The wait-for-it command line, read exactly as the script reads it, into the plan of one
//! wait: HOST and PORT as typed (the script prints them), where to connect, the timeout as bash
//! and `timeout(1)` understand it, and the command.

use std::ffi::OsString;
use std::net::IpAddr;
use std::time::Duration;

use crate::redact::{one_line, quoted};
use crate::target::{Endpoint, Host};

/// The script's timeout when none is given, as it prints it.
const DEFAULT_TIMEOUT: &str = "15";
/// Where the script's `/dev/tcp` (through getaddrinfo) looks up a PORT that is a service name.
const SERVICES: &str = "/etc/services";

/// What a wait-for-it command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Invocation {
    /// Print the complaint (absent with `--help`, or when `-q` came first), then the usage
    /// text (always, even with `-q`), and exit 1.
    Usage(Option<String>),
    /// Wait for the port, then maybe run the command.
    Wait(Plan),
}

/// One wait, as the script would carry it out.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// HOST as typed: the script prints it verbatim.
    pub(super) host: String,
    /// PORT as typed: the script prints it verbatim.
    pub(super) port: String,
    /// TIMEOUT as typed (`15` when absent or empty): the script prints it verbatim.
    pub(super) timeout: String,
    /// `-s`: run the command only if the port opened.
    pub(super) strict: bool,
    /// `-q`: no status lines.
    pub(super) quiet: bool,
    /// `--child`: the script's own re-invocation under `timeout(1)`; waits with no deadline
    /// and never runs the command.
    pub(super) child: bool,
    /// `-- COMMAND ARGS`; the script runs it only when its first word is not empty.
    pub(super) command: Vec<OsString>,
}

/// How the script reads TIMEOUT: bash arithmetic decides whether there is a deadline,
/// `timeout(1)` reads the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Deadline {
    /// A positive whole number of seconds.
    After(Duration),
    /// Zero or negative: no deadline.
    Never,
    /// Not a whole number (`1.5`, `30s`, `08`, `abc`): bash reports an error or reads 0, and
    /// the script waits with no deadline; readygate does the same, with a one-line warning.
    Unreadable,
}

/// The script's argument loop, case for case: a word with a `:` is always `host:port`; `-h`,
/// `-p` and `-t` take the next word, and an empty one ends the loop; `--` takes the rest.
pub(super) fn parse(args: Vec<OsString>) -> Invocation {
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
pub(super) fn split_host_port(arg: &str) -> (String, String) {
    let spaced = arg.replace(':', " ");
    let mut words = spaced.split([' ', '\t', '\n']).filter(|w| !w.is_empty());
    let host = words.next().unwrap_or_default().to_string();
    let port = words.next().unwrap_or_default().to_string();
    (host, port)
}

/// TIMEOUT as the script reads it: `[[ $TIMEOUT -gt 0 ]]` in bash arithmetic (a leading `0`
/// means octal, so `08` is an error), then `timeout $TIMEOUT`, which reads it as decimal.
pub(super) fn deadline(text: &str) -> Deadline {
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
pub(super) fn endpoint(host: &str, port: &str) -> Result<Endpoint, String> {
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

pub(super) fn port_number(text: &str) -> Result<u16, String> {
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
    let services = services();
    service_port(&services, text).ok_or_else(|| format!("unknown TCP service {}", quoted(text)))
}

/// The TCP port of service `name` (or an alias) in `/etc/services`, as getaddrinfo finds it.
pub(in crate::compat) fn tcp_service(name: &str) -> Option<u16> {
    service_port(&services(), name)
}

/// `/etc/services`, read only if it is a regular file, without blocking, and at most 4 MiB of it.
fn services() -> String {
    crate::regular_file::read_head(std::path::Path::new(SERVICES), 4 << 20)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

/// The TCP port of service `name` (or an alias) in an `/etc/services` text.
pub(super) fn service_port(services: &str, name: &str) -> Option<u16> {
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

/// The script's usage text, word for word.
pub(super) fn usage(cmdname: &str) -> String {
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
