//! What a finished wait leaves behind: log lines, `probe`'s stdout lines for the pod's events,
//! the `--touch` marker and the `--termination-log` message.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::engine::Report;
use crate::error::Failure;
use crate::plan::{Mode, Plan};
use crate::target::Target;

/// One `<target>: <reason>` line per target that missed its goal.
pub fn failures(plan: &Plan, report: &Report<Failure>) -> Vec<String> {
    plan.targets
        .iter()
        .zip(&report.targets)
        .enumerate()
        .filter(|(_, (_, outcome))| !outcome.ready)
        .map(|(index, (target, outcome))| {
            let reason = outcome
                .reason()
                .unwrap_or_else(|| "no answer before the deadline".into());
            let hint = match plan.may_be_the_command(index) {
                true => format!(" ({})", crate::plan::FORGOT_DASHES),
                false => String::new(),
            };
            format!("{target}: {}{hint}", crate::redact::one_line(&reason))
        })
        .collect()
}

/// Warns of a later target that is an executable file while `wait` has no `-- COMMAND`: it
/// would be waited for (and found at once), not run.
pub fn warn_of_commands(plan: &Plan) {
    use std::os::unix::fs::PermissionsExt;
    for (index, target) in plan.targets.iter().enumerate() {
        let crate::target::Kind::File(path) = &target.kind else {
            continue;
        };
        let executable = fs::metadata(path)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0);
        if executable && plan.may_be_the_command(index) {
            tracing::warn!(
                "{target} is an executable file: it is waited for, not run ({})",
                crate::plan::FORGOT_DASHES
            );
        }
    }
}

/// Reports a run that did not become ready: log lines (`wait`) or stdout lines (`probe`), and
/// the termination log.
pub fn not_ready(plan: &Plan, report: &Report<Failure>, elapsed: std::time::Duration) {
    let lines = failures(plan, report);
    match plan.mode {
        Mode::Probe => {
            for line in &lines {
                crate::output::stdout(line);
            }
        }
        Mode::Wait => {
            let what = if plan.policy.invert {
                "still ready"
            } else {
                "not ready"
            };
            for line in &lines {
                tracing::error!("{what} after {}: {line}", crate::engine::humanize(elapsed));
            }
        }
    }
    if let Some(path) = &plan.termination_log {
        let message = format!("readygate: not ready: {}\n", lines.join("; "));
        // Its parent folders are made as --touch's are: a path in a fresh emptyDir works.
        let written = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => fs::create_dir_all(parent),
            None => Ok(()),
        }
        .and_then(|()| open_regular(path))
        .and_then(|mut file| {
            file.set_len(0)?;
            file.write_all(crate::redact::secrets(&message).as_bytes())
        });
        if let Err(e) = written {
            tracing::warn!(
                "cannot write --termination-log {}: {}",
                path.display(),
                crate::error::describe_io(&e)
            );
        }
    }
}

/// Creates the `--touch` marker (and its parent folders).
pub fn touch(path: &Path) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create --touch folder {}: {e}", parent.display()))?;
    }
    open_regular(path).map(drop).map_err(|e| {
        format!(
            "cannot create --touch file {}: {}",
            path.display(),
            crate::error::describe_io(&e)
        )
    })
}

/// Opens (creating it if need be) a file to write, refusing anything but a regular file: the
/// open is non-blocking, so a FIFO or a device named by mistake cannot hang readygate.
fn open_regular(path: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let not_regular =
        || std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file");
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        // A FIFO without a reader refuses a non-blocking writer with ENXIO.
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => not_regular(),
            _ => e,
        })?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// The targets, comma-separated, for the start line.
pub fn names(targets: &[Target]) -> Vec<String> {
    targets.iter().map(Target::to_string).collect()
}
