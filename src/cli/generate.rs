//! Shell completions, generated from the clap definitions at run time, so that they always
//! describe the options this very binary accepts. The man page, docs/readygate.1, comes from
//! the same definitions in a test (`man`), which fails when the committed page is out of step.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::aot::{generate, Bash, Fish, Zsh};

use crate::cli::{Cli, Shell};
use crate::exit::Exit;

/// `readygate completions SHELL`: the completion script on stdout. It is made in memory first
/// (clap_complete panics when a write fails); a closed pipe or a full disk is status 1.
pub fn completions(shell: Shell) -> Exit {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    match shell {
        Shell::Bash => generate(Bash, &mut cmd, "readygate", &mut script),
        Shell::Zsh => generate(Zsh, &mut cmd, "readygate", &mut script),
        Shell::Fish => generate(Fish, &mut cmd, "readygate", &mut script),
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&script).and_then(|()| stdout.flush()) {
        Ok(()) => Exit::Ready,
        Err(err) => Exit::Failed(format!("cannot write to stdout: {err}")),
    }
}

#[cfg(test)]
mod man;
