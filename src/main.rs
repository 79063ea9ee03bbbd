//! readygate: make Kubernetes workloads start in the right order.

#[macro_use]
mod say;
mod cli;
mod compat;
mod duration;
mod engine;
mod error;
mod exit;
mod expect;
mod header;
mod kind;
mod log;
mod matcher;
mod net;
mod output;
mod percent;
mod plan;
mod process;
#[cfg(test)]
mod proptests;
mod redact;
mod regular_file;
mod report;
mod run;
mod secrets;
mod serve;
mod status;
mod version;

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use cli::{Cli, Command};
use exit::Exit;
use plan::Plan;

fn main() -> ExitCode {
    let status = readygate();
    output::flush();
    ExitCode::from(status)
}

/// Runs readygate (or the tool it was invoked as) and returns the exit status.
fn readygate() -> u8 {
    // Known before anything is parsed, so that no usage error can quote them.
    let secrets = secrets::Secrets::of_invocation();
    output::hide(secrets.clone());
    if let Some(status) = compat::dispatch() {
        return status;
    }
    let exit = match Cli::try_parse() {
        Err(err) => usage_error(err),
        Ok(cli) => match engine::runtime() {
            Ok(runtime) => runtime.block_on(run(cli, secrets)),
            // The environment lacks what a runtime needs (descriptors, threads): not a usage
            // error.
            Err(err) => Exit::Failed(format!("cannot start: {}", error::describe_io(&err))),
        },
    };
    exit.report()
}

/// Dispatches the parsed command; `secrets` learns those the plan finds.
async fn run(cli: Cli, secrets: Arc<secrets::Secrets>) -> Exit {
    match cli.command {
        Command::Wait(args) => {
            let on_exit = args.on_exit.clone().filter(|_| !args.command.is_empty());
            match Plan::for_wait(args, &cli.log, secrets) {
                Ok(plan) => run::wait_or_probe(plan).await,
                Err(message) => {
                    // The sidecar waits for this notice whatever went wrong: a Job whose
                    // manifest is refused must still end (and fail visibly).
                    if let Some(url) = on_exit {
                        process::supervise::notify_refused(&url, plan::ATTEMPT_TIMEOUT).await;
                    }
                    Exit::Usage(message)
                }
            }
        }
        Command::Probe(args) => match Plan::for_probe(args, &cli.log, secrets) {
            Ok(plan) => run::wait_or_probe(plan).await,
            Err(message) => Exit::Usage(message),
        },
        Command::Serve(args) => match serve::ServePlan::new(args, &cli.log, secrets) {
            Ok(plan) => serve::serve(plan).await,
            Err(message) => Exit::Usage(message),
        },
        Command::Install(args) => process::install::install(&args.dir).await,
        Command::Sidecar(command) => {
            let (side, log) = plan::sidecar(command, &cli.log);
            process::sidecar::run(side, log).await
        }
        Command::Completions(args) => cli::generate::completions(args.shell),
    }
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
            let mut line = fault.strip_prefix("error: ").unwrap_or(&fault).to_string();
            // A suggestion for a typo ("tip: a similar subcommand exists: 'wait'") joins it.
            let tips: Vec<&str> = text
                .lines()
                .filter_map(|line| line.trim().strip_prefix("tip: "))
                .filter(|tip| tip.starts_with("a similar") || tip.starts_with("some similar"))
                .collect();
            if !tips.is_empty() {
                line = format!("{line} ({})", tips.join("; "));
            }
            let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
            if let Some(hint) = cli::dashes::in_unknown_option(&err, &argv) {
                line = format!("{line} ({hint})");
            }
            Exit::Usage(redact::one_line(&line))
        }
    }
}
