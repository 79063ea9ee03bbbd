//! readygate: make Kubernetes workloads start in the right order.
//!
//! `no_main`: the C library calls [`main`] below directly, without std's start-up, which a
//! one-shot `probe` paid for at every run; `entry` keeps the part of it readygate needs. Tests
//! keep std's `main` (the test harness's).
#![cfg_attr(not(test), no_main)]

#[macro_use]
mod say;
mod atomic;
mod check;
mod cli;
mod compat;
mod duration;
mod engine;
#[cfg(not(test))]
mod entry;
mod exec;
mod exit;
mod fast_cli;
mod fdlimit;
mod generate;
mod header;
mod install;
mod log;
mod matcher;
mod percent;
mod plan;
#[cfg(test)]
mod proptests;
mod redact;
mod report;
mod resolve;
mod run;
mod sidecar;
mod signal;
mod status;
mod supervise;
mod target;
mod tls;
mod transport;

use clap::Parser;

use cli::{Cli, Command};
use exit::Exit;
use plan::Plan;

/// The process's entry point, called by the C library's start-up (see `entry`); argv is read
/// through `std::env::args_os` instead of `argc`/`argv`.
#[cfg(not(test))]
#[no_mangle]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    entry::init();
    let status = readygate();
    // std's start-up would flush stdout after `fn main`; `probe` reports there.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    status.into()
}

/// Runs readygate (or the tool it was invoked as) and returns the exit status.
#[cfg_attr(test, allow(dead_code))]
fn readygate() -> u8 {
    if let Some(status) = compat::dispatch() {
        return status;
    }
    let fast = fast_cli::parse(std::env::args_os(), fast_cli::environment());
    let cli = match fast.map(Ok).unwrap_or_else(Cli::try_parse) {
        Ok(cli) => cli,
        Err(err) => return usage_error(err).report(),
    };
    let runtime = match engine::runtime() {
        Ok(runtime) => runtime,
        Err(err) => return Exit::Usage(format!("cannot start: {err}")).report(),
    };
    runtime.block_on(run(cli)).report()
}

/// Dispatches the parsed command.
async fn run(cli: Cli) -> Exit {
    match cli.command {
        Command::Wait(args) => match Plan::for_wait(args) {
            Ok(plan) => start(plan).await,
            Err(message) => Exit::Usage(message),
        },
        Command::Probe(args) => match Plan::for_probe(args) {
            Ok(plan) => start(plan).await,
            Err(message) => Exit::Usage(message),
        },
        Command::Install(args) => install::install(&args.dir),
        Command::Sidecar(command) => sidecar::run(command).await,
        Command::Completions(args) => generate::completions(args.shell),
        Command::Man(_) => generate::man(),
    }
}

async fn start(plan: Plan) -> Exit {
    log::init(plan.log);
    fdlimit::make_room(plan.targets.len());
    run::wait_or_probe(plan).await
}

/// Help and version go to stdout with status 0; every other clap error becomes one line.
fn usage_error(err: clap::Error) -> Exit {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = err.print();
            Exit::Ready
        }
        _ => {
            // clap's first paragraph names the fault (continued on indented lines, as in
            // "required arguments were not provided:\n  <DIR>"); usage and tips follow it.
            let text = err.to_string();
            let fault: Vec<&str> = text
                .lines()
                .take_while(|line| !line.trim().is_empty())
                .map(str::trim)
                .collect();
            let fault = fault.join(" ");
            let fault = fault.strip_prefix("error: ").unwrap_or(&fault);
            Exit::Usage(redact::one_line(fault))
        }
    }
}
