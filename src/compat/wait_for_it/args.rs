//! The wait-for-it command line, read exactly as the script reads it, into the plan of one
//! wait: HOST and PORT as typed (the script prints them), where to connect, the timeout as bash
//! and `timeout(1)` understand it, and the command.

use std::ffi::OsString;
use std::net::IpAddr;
use std::time::Duration;

use super::super::{all_digits, sign};
use crate::net::endpoint::{Endpoint, Host};
use crate::text::{one_line, quoted};

/// One wait, as the script would carry it out.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct WaitForItPlan {
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
/// `Err` is a usage error: print the complaint (absent with `--help`, or when `-q` came
/// first), then the usage text (always, even with `-q`), and exit 1.
pub(super) fn parse(args: Vec<OsString>) -> Result<WaitForItPlan, Option<String>> {
    let mut plan = WaitForItPlan::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        if arg.contains(':') {
            (plan.host, plan.port) = split_host_port(&arg);
            continue;
        }
        match arg.as_str() {
            "--child" => plan.child = true,
            "-q" | "--quiet" => plan.quiet = true,
            "-s" | "--strict" => plan.strict = true,
            "-h" | "-p" | "-t" => {
                let field = match arg.as_str() {
                    "-h" => &mut plan.host,
                    "-p" => &mut plan.port,
                    _ => &mut plan.timeout,
                };
                *field = args.next().unwrap_or_default().to_string_lossy().into();
                if field.is_empty() {
                    break;
                }
            }
            "--" => {
                plan.command = args.collect();
                break;
            }
            "--help" => return Err(None),
            _ => match arg.split_once('=') {
                Some(("--host", value)) => plan.host = value.into(),
                Some(("--port", value)) => plan.port = value.into(),
                Some(("--timeout", value)) => plan.timeout = value.into(),
                _ => {
                    let complaint = format!("Unknown argument: {}", one_line(&arg));
                    return Err((!plan.quiet).then_some(complaint));
                }
            },
        }
    }
    if plan.host.is_empty() || plan.port.is_empty() {
        let complaint = "Error: you need to provide a host and port to test.";
        return Err((!plan.quiet).then(|| complaint.into()));
    }
    if plan.timeout.is_empty() {
        plan.timeout = "15".into();
    }
    Ok(plan)
}

/// `hostport=(${1//:/ })`: every `:` becomes a space, the result is split into words, and the
/// first two are HOST and PORT (either may come out empty, which is then a usage error).
pub(super) fn split_host_port(arg: &str) -> (String, String) {
    let mut words = arg.split([':', ' ', '\t', '\n']).filter(|w| !w.is_empty());
    let mut word = || words.next().unwrap_or_default().to_string();
    (word(), word())
}

/// TIMEOUT as the script reads it: `[[ $TIMEOUT -gt 0 ]]` in bash arithmetic (a leading `0`
/// means octal, so `08` is an error), then `timeout $TIMEOUT`, which reads it as decimal.
pub(super) fn deadline(text: &str) -> Deadline {
    let (negative, digits) = sign(text);
    let octal = digits.starts_with('0');
    if !all_digits(digits) || (octal && digits.contains(['8', '9'])) {
        Deadline::Unreadable
    } else if negative || digits.bytes().all(|b| b == b'0') {
        Deadline::Never
    } else {
        Deadline::After(Duration::from_secs(digits.parse().unwrap_or(u64::MAX)))
    }
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

/// PORT as getaddrinfo reads it: a number (strtoul saturates on overflow and negates modulo
/// 2^64; htons keeps the low 16 bits), else a TCP service of `/etc/services`.
pub(super) fn port_number(text: &str) -> Result<u16, String> {
    let (negative, digits) = sign(text.trim_start_matches([' ', '\t', '\n']));
    if all_digits(digits) {
        let value = digits.parse::<u64>().unwrap_or(u64::MAX);
        let value = if negative {
            value.wrapping_neg()
        } else {
            value
        };
        return Ok(value as u16);
    }
    tcp_service(text).ok_or_else(|| format!("unknown TCP service {}", quoted(text)))
}

/// The TCP port of service `name` (or an alias) in `/etc/services`, as getaddrinfo finds it;
/// the file is read only if it is a regular file, without blocking, and at most 4 MiB of it.
pub(in crate::compat) fn tcp_service(name: &str) -> Option<u16> {
    let services = crate::regular_file::read_head("/etc/services".as_ref(), 4 << 20).ok()?;
    service_port(&String::from_utf8_lossy(&services), name)
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
    -- COMMAND ARGS             Execute command with args after the test finishes"
    )
}
