//! Shell completions, generated from the clap definitions at run time, so that they always
//! describe the options this very binary accepts. The man pages, docs/readygate.1 and
//! docs/readygate-cluster.1, come from the same definitions in a test (`man`), which fails when
//! a committed page is out of step.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::aot::{generate, Bash, Fish, Zsh};

use crate::cli::cluster::ClusterCli;
use crate::cli::{Cli, Shell};
use crate::exit::Exit;

/// `readygate completions SHELL`: the completion script on stdout.
pub fn completions(shell: Shell) -> Exit {
    write(shell, Cli::command(), "readygate")
}

/// `readygate-cluster completions SHELL`: the same for the cluster-side commands.
pub fn cluster_completions(shell: Shell) -> Exit {
    write(shell, ClusterCli::command(), "readygate-cluster")
}

/// The script for `cmd`, invoked as `name`, on stdout. It is made in memory first
/// (clap_complete panics when a write fails); a closed pipe or a full disk is status 1.
fn write(shell: Shell, mut cmd: clap::Command, name: &str) -> Exit {
    let mut script = Vec::new();
    match shell {
        Shell::Bash => generate(Bash, &mut cmd, name, &mut script),
        Shell::Zsh => generate(Zsh, &mut cmd, name, &mut script),
        Shell::Fish => generate(Fish, &mut cmd, name, &mut script),
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&script).and_then(|()| stdout.flush()) {
        Ok(()) => Exit::Ready,
        Err(err) => Exit::Failed(format!("cannot write to stdout: {err}")),
    }
}

#[cfg(test)]
mod man;
