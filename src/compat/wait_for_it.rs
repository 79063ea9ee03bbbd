//! `wait-for-it` (vishnubob/wait-for-it, the script Debian packages): called by that name,
//! readygate keeps its command line, stderr lines and statuses while its engine does the waiting
//! (where the script's behaviour is an accident of bash or `timeout(1)`: docs/compat.md).

pub(super) mod args;

use std::ffi::OsString;

use super::{start, wait, Gate};
use crate::error::Failure;
use crate::net::resolve::Resolver;
use crate::text::{one_line, quoted};
use args::{deadline, endpoint, parse, usage, Deadline};

/// The script's status for a bad command line (it exits from `usage`).
const USAGE: u8 = 1;
/// The status of `timeout(1)` when time ran out, which the script passes on.
const TIMED_OUT: u8 = 124;

/// Runs a wait-for-it command line (`args`: everything after argv[0]) under the name
/// `cmdname`, which the script's messages start with.
pub fn main(cmdname: &str, args: Vec<OsString>) -> u8 {
    let plan = match parse(args) {
        Ok(plan) => plan,
        Err(complaint) => return super::usage(complaint, &usage(cmdname), USAGE),
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
    let Some((runtime, signals)) = start(cmdname) else {
        return USAGE;
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
    let gate = match endpoint(&plan.host, &plan.port) {
        Ok(endpoint) => Gate::Port(endpoint, Resolver::default()),
        Err(reason) => Gate::Never(Failure::Text(reason)),
    };
    let status = match runtime.block_on(wait(gate, limit, target.clone(), signals)) {
        Ok(Some(after)) => {
            let seconds = after.as_secs();
            say(format!("{target} is available after {seconds} seconds"));
            0
        }
        Ok(None) => {
            let seconds = &plan.timeout;
            say(format!(
                "timeout occurred after waiting {seconds} seconds for {target}"
            ));
            TIMED_OUT
        }
        Err(signal) => return crate::exit::Exit::Signal(signal).code(),
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

#[cfg(test)]
mod tests;
