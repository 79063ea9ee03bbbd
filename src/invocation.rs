//! How the process was invoked, read before any I/O, and running it to an exit status: the
//! tool readygate stands in for (by argv[0]) or its own command line.

use std::sync::Arc;

use clap::Parser;

use crate::cli::{self, Cli, Command};
use crate::compat::DropIn;
use crate::exit::Exit;
use crate::plan::{self, Plan};
use crate::secrets::Secrets;
use crate::{error, output, process, run, runtime, serve};

/// What this process was asked to do.
pub struct Invocation {
    /// The passwords and tokens in the arguments and `READYGATE_*` variables; hidden from
    /// every line written from the start, and learning those the plan finds.
    secrets: Arc<Secrets>,
    /// The command line, as the tool it was invoked as reads it.
    command: Parsed,
}

/// A command line read by its own parser.
enum Parsed {
    /// `wait-for-it` or `wait-for`: a script's command line, read by its own parser on run.
    DropIn(DropIn),
    /// readygate's own command line, or clap's refusal (help and version among them).
    Own(Box<Result<Cli, clap::Error>>),
}

impl Invocation {
    /// Reads the process's arguments and environment.
    pub fn parse() -> Invocation {
        // Known before anything is parsed, so that no usage error can quote them.
        let secrets = Secrets::of_invocation(crate::kind::command::secrets::learn);
        output::hide(secrets.clone());
        let command = match DropIn::of_invocation() {
            Some(drop_in) => Parsed::DropIn(drop_in),
            None => {
                let parsed = Cli::try_parse();
                let json = match &parsed {
                    Ok(cli) => cli.log.log_format == cli::LogFormat::Json,
                    Err(_) => cli::log_format_typed() == Some(cli::LogFormat::Json),
                };
                crate::log::choose_json(json);
                Parsed::Own(Box::new(parsed))
            }
        };
        Invocation { secrets, command }
    }

    /// Runs the invocation and returns the process's exit status, once what it wrote is out.
    pub fn run(self) -> u8 {
        let status = match self.command {
            Parsed::DropIn(drop_in) => drop_in.run(),
            Parsed::Own(parsed) => own(*parsed, self.secrets).report(),
        };
        output::flush();
        status
    }
}

/// Runs readygate's own command line, or reports clap's refusal of it.
fn own(parsed: Result<Cli, clap::Error>, secrets: Arc<Secrets>) -> Exit {
    let exit = match parsed {
        Err(err) => cli::usage_error(err),
        Ok(cli) => match runtime::runtime() {
            Ok(runtime) => runtime.block_on(dispatch(cli, secrets)),
            // The environment lacks what a runtime needs (descriptors, threads): not a usage
            // error.
            Err(err) => Exit::Failed(format!("cannot start: {}", error::describe_io(&err))),
        },
    };
    // No check's command outlives readygate, whatever ended the run.
    crate::kind::command::end_all();
    match exit {
        // A usage error names the variable its value came from, where one did.
        Exit::Usage(message) => Exit::Usage(cli::name_variables(&message)),
        exit => exit,
    }
}

/// Dispatches the parsed command; `secrets` learns those the plan finds.
async fn dispatch(cli: Cli, secrets: Arc<Secrets>) -> Exit {
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
        Command::Install(args) => {
            crate::log::init(plan::install_log(&cli.log));
            process::install::install(&args.dir).await
        }
        Command::Sidecar(command) => {
            let (side, log) = plan::sidecar(command, &cli.log);
            process::sidecar::run(side, log).await
        }
        Command::Completions(args) => cli::generate::completions(args.shell),
    }
}
