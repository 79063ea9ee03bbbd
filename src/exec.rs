//! `-- COMMAND`: once ready, the process is replaced by COMMAND (exec, no shell, no fork), so
//! its PID, signals and exit status are COMMAND's own.

use std::ffi::{OsStr, OsString};
use std::io::{self, ErrorKind};
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::exit::Exit;

/// Replaces this process with `command`; returns only when that fails (126 or 127).
pub fn exec(command: &[OsString]) -> Exit {
    let (program, args) = command.split_first().expect("a command was given");
    let err = Command::new(program).args(args).exec();
    cannot_run(program, &err)
}

/// Says why `program` could not be started (by exec or as a child) and picks 127 or 126.
pub fn cannot_run(program: &OsStr, err: &io::Error) -> Exit {
    let shown = crate::redact::quoted(&program.to_string_lossy());
    match err.kind() {
        ErrorKind::NotFound => {
            eprintln!("readygate: cannot run {shown}: command not found");
            Exit::CommandNotFound
        }
        _ => {
            eprintln!(
                "readygate: cannot run {shown}: {}",
                crate::transport::describe_io(err)
            );
            Exit::CannotExecute
        }
    }
}
