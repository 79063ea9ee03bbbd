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
    let mut command = Command::new(program);
    command.args(args);
    crate::signal::restore_for(&mut command);
    let err = command.exec();
    // std resets SIGPIPE to its default before the exec; the exec failed, so ignore it again, or the message below would kill readygate (not exit 126/127) on a closed stderr.
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    cannot_run(program, &err)
}

/// Says why `program` could not be started (by exec or as a child) and picks 127 or 126.
pub fn cannot_run(program: &OsStr, err: &io::Error) -> Exit {
    let shown = crate::redact::quoted(&program.to_string_lossy());
    match err.kind() {
        ErrorKind::NotFound => {
            say!("readygate: cannot run {shown}: command not found");
            Exit::CommandNotFound
        }
        _ => {
            say!(
                "readygate: cannot run {shown}: {}",
                crate::transport::describe_io(err)
            );
            Exit::CannotExecute
        }
    }
}
