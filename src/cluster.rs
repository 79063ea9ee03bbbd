//! `readygate-cluster`, run: its command line read, then `inject` (no runtime needed), or the
//! webhook or doctor (on the same one-thread runtime as every command).

use clap::Parser;

use crate::cli::cluster::{ClusterCli, ClusterCommand};
use crate::exit::Exit;
use crate::secrets::Secrets;
use crate::{cli, error, inject, output, runtime, webhook};

/// Runs `readygate-cluster` and returns the process's exit status, once what it wrote is out.
pub fn run() -> u8 {
    let secrets = Secrets::of_invocation(crate::kind::command::secrets::learn);
    output::hide(secrets.clone());
    let exit = match ClusterCli::try_parse() {
        Err(err) => cli::usage_error(err),
        Ok(cli) => match cli.command {
            ClusterCommand::Inject(args) => inject::run(args, secrets),
            ClusterCommand::Completions(args) => cli::generate::cluster_completions(args.shell),
            ClusterCommand::Doctor(args) => match runtime::runtime() {
                Ok(runtime) => runtime.block_on(crate::doctor::run(args, secrets)),
                Err(err) => Exit::Failed(format!("cannot start: {}", error::describe_io(&err))),
            },
            ClusterCommand::Webhook(args) => {
                match webhook::WebhookPlan::new(args, &cli.log, secrets) {
                    Err(message) => Exit::Usage(message),
                    Ok(plan) => match runtime::runtime() {
                        Ok(runtime) => runtime.block_on(webhook::serve(plan)),
                        Err(err) => {
                            Exit::Failed(format!("cannot start: {}", error::describe_io(&err)))
                        }
                    },
                }
            }
        },
    };
    let status = exit.report();
    output::flush();
    status
}
