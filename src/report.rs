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
            let mut out = std::io::stdout().lock();
            for line in &lines {
                let _ = writeln!(out, "{line}");
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
        .and_then(|()| fs::write(path, message));
        if let Err(e) = written {
            tracing::warn!("cannot write --termination-log {}: {e}", path.display());
        }
    }
}

/// Creates the `--touch` marker (and its parent folders).
pub fn touch(path: &Path) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create --touch folder {}: {e}", parent.display()))?;
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(drop)
        .map_err(|e| format!("cannot create --touch file {}: {e}", path.display()))
}

/// The targets, comma-separated, for the start line.
pub fn names(targets: &[Target]) -> Vec<String> {
    targets.iter().map(Target::to_string).collect()
}
