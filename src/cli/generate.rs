//! Shell completions, generated from the clap definitions at run time, so that they always
//! describe the options this very binary accepts. The man page, docs/readygate.1, comes from
//! the same definitions in a test (`man`), which fails when the committed page is out of step.

use std::io::Write;

use clap::CommandFactory;
use clap_complete::aot::{generate, Bash, Fish, Zsh};

use crate::cli::{Cli, Shell};
use crate::exit::Exit;

/// `readygate completions SHELL`: the completion script on stdout.
pub fn completions(shell: Shell) -> Exit {
    write_stdout(&completion_script(shell))
}

/// The completion script for `shell`.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    match shell {
        Shell::Bash => generate(Bash, &mut cmd, "readygate", &mut out),
        Shell::Zsh => generate(Zsh, &mut cmd, "readygate", &mut out),
        Shell::Fish => generate(Fish, &mut cmd, "readygate", &mut out),
    }
    out
}

/// Writes generated text to stdout; a closed pipe or a full disk is a failure (status 1).
fn write_stdout(bytes: &[u8]) -> Exit {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Exit::Ready,
        Err(err) => Exit::Failed(format!("cannot write to stdout: {err}")),
    }
}

#[cfg(test)]
mod man;
