//! `-- COMMAND`: once ready, the process is replaced by COMMAND (exec, no shell, no fork), so
//! its PID, signals and exit status are COMMAND's own.

use std::ffi::{OsStr, OsString};
use std::io::{self, ErrorKind};
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::exit::Exit;
use crate::log::json::Fields;

/// Replaces this process with `command`; returns only when that fails (126 or 127).
pub fn exec(command: &[OsString]) -> Exit {
    let (program, args) = command.split_first().expect("a command was given");
    let mut command = Command::new(program);
    command.args(args);
    crate::process::signal::restore_for(&mut command);
    let shown = crate::text::quoted(&program.to_string_lossy());
    tracing::info!(target: crate::log::JSON_ONLY, event = "exec", "running {shown}");
    // A check's command still running would become COMMAND's child, unseen and unreaped.
    crate::kind::command::end_all();
    // Lines still queued would be lost with this process image.
    crate::output::flush();
    let err = command.exec();
    // std reset SIGPIPE to its default for COMMAND: ignore it again, or the message below would
    // kill readygate (not exit 126/127) on a closed stderr.
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    cannot_run(program, &err)
}

/// Says why `program` could not be started (by exec or as a child) and picks 127 or 126.
pub fn cannot_run(program: &OsStr, err: &io::Error) -> Exit {
    let shown = crate::text::quoted(&program.to_string_lossy());
    let (why, exit) = match err.kind() {
        // The program is there: what exec did not find is the interpreter it names.
        ErrorKind::NotFound => match missing_interpreter(program) {
            Some(interpreter) => (
                format!("its interpreter {interpreter} was not found"),
                Exit::CannotExecute,
            ),
            None => ("command not found".into(), Exit::CommandNotFound),
        },
        _ => (crate::error::describe_io(err), Exit::CannotExecute),
    };
    say_cannot_run(&shown, why, exit)
}

/// Says that COMMAND (`shown`, quoted) cannot run and why, as text or as an `exec` JSON line.
pub fn say_cannot_run(shown: &str, why: String, exit: Exit) -> Exit {
    let mut fields = Fields::new("exec", &format!("cannot run {shown}: {why}"));
    (fields.status, fields.reason) = (Some(exit.code().into()), Some(why));
    crate::log::say(tracing::Level::ERROR, fields);
    exit
}

/// When exec said "not found" for a program that exists, the interpreter it names is missing:
/// the `#!` line of a script, or the dynamic loader of a binary built for another libc.
fn missing_interpreter(program: &OsStr) -> Option<String> {
    let path = find_program(program)?;
    let head = crate::regular_file::read_head(&path, 256).ok()?;
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
        let text = String::from_utf8_lossy(line);
        let interpreter = text.split_whitespace().next()?;
        return Some(crate::text::quoted(interpreter));
    }
    head.starts_with(b"\x7fELF")
        .then(|| "(the dynamic loader this binary was linked for)".to_string())
}

/// Where exec found `program`: itself when it holds a `/`, else the first regular file of that
/// name in `PATH`.
pub fn find_program(program: &OsStr) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if program.as_bytes().contains(&b'/') {
        return Some(program.into());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|folder| folder.join(program))
        .find(|candidate| candidate.is_file())
}
