//! `wait-for` (eficode/wait-for, the POSIX sh script): called by that name, readygate keeps its
//! command line and contract while its engine does the waiting (differences: docs/compat.md).

mod args;

use std::ffi::OsString;

use super::{start, wait, Gate};
use crate::error::Failure;
use crate::grammar::status::StatusRanges;
use crate::kind::target::Target;
use crate::kind::Kind;
use crate::kind::{Check, Context, Options, Redirects};
use args::{parse, usage, Address, WaitForInvocation, SCRIPT_VERSION};

/// The script's status when time ran out (and for an unknown word).
const TIMED_OUT: u8 = 1;

/// Runs a wait-for command line (`args`: everything after argv[0]); `argv0` is the name the
/// usage text shows, as the script's `$0`.
pub fn main(argv0: &str, args: Vec<OsString>) -> u8 {
    let plan = match parse(args) {
        WaitForInvocation::Usage(complaint, status) => {
            return super::usage(complaint, &usage(argv0), status)
        }
        WaitForInvocation::Version => {
            let version = env!("CARGO_PKG_VERSION");
            crate::output::stdout(&format!("{SCRIPT_VERSION} (readygate {version})"));
            return 0;
        }
        WaitForInvocation::Wait(plan) => plan,
    };
    let Some((runtime, signals)) = start("wait-for") else {
        return TIMED_OUT;
    };
    let name = match &plan.target {
        Address::Tcp { host, port } => format!("{host}:{port}"),
        Address::Http(url) => url.clone(),
    };
    let waited = runtime.block_on(wait(gate(plan.target), plan.timeout, name, signals));
    drop(runtime);
    match waited {
        Ok(Some(_)) if plan.command.is_empty() => 0,
        Ok(Some(_)) => crate::process::exec::exec(&plan.command).code(),
        Ok(None) => {
            // Printed even with -q: the script echoes it straight to stderr.
            say!("Operation timed out");
            TIMED_OUT
        }
        Err(signal) => crate::exit::Exit::Signal(signal).code(),
    }
}

/// `host:port` becomes a TCP target (PORT a number or a service name, as nc reads it); a URL
/// an HTTP target judged as wget judges it: a final 2xx, after redirects to any host.
fn gate(address: Address) -> Gate {
    let text = match address {
        Address::Tcp { host, port } => match tcp_port(&port) {
            Some(port) => format!("tcp://{host}:{port}"),
            None => return never(format!("invalid port {port:?}")),
        },
        Address::Http(url) => url,
    };
    let target = match Target::parse(&text) {
        Ok(target) if matches!(target.kind, Kind::Tcp(_) | Kind::Http(_)) => target,
        Ok(_) => return never(format!("cannot wait for {text:?}")),
        Err(reason) => return never(reason),
    };
    let options = Options {
        statuses: StatusRanges::parse("200-299").unwrap_or_default(),
        redirects: Redirects::AnyHost,
        ..Options::default()
    };
    Gate::Check(Box::new(Check::new(target, Context::new(options))))
}

/// A target no attempt can succeed with, for `reason`.
fn never(reason: String) -> Gate {
    Gate::Never(Failure::Text(reason))
}

/// PORT as nc takes it: a number from 1 to 65535, or a TCP service of `/etc/services`.
fn tcp_port(port: &str) -> Option<u16> {
    if super::all_digits(port) {
        return port.parse::<u16>().ok().filter(|port| *port != 0);
    }
    super::wait_for_it::args::tcp_service(port)
}

#[cfg(test)]
mod tests;
