//! What a finished wait leaves behind: log lines, `probe`'s stdout lines for the pod's events,
//! the `--touch` marker and the `--termination-log` message.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

use crate::cli::dashes::HINT;
use crate::duration::humanize;
use crate::engine::Report;
use crate::error::{describe_io, Failure};
use crate::plan::{Mode, Plan, TerminationLog, KUBELET_TERMINATION_LOG};
use crate::process::atomic::make_parents;
use crate::redact;
use crate::secrets::Secrets;

/// Reports a run that did not become ready: a `<target>: <reason>` line per target that missed
/// its goal, logged (`wait`) or on stdout (`probe`); returns the message for the termination
/// log, if the plan has one.
pub fn not_ready(plan: &Plan, report: &Report<Failure>, elapsed: Duration) -> Option<String> {
    let missed: Vec<(String, String, u32)> = plan
        .targets
        .iter()
        .zip(&report.targets)
        .enumerate()
        .filter(|(_, (_, outcome))| !outcome.ready)
        .map(|(index, (target, outcome))| {
            let reason = outcome
                .reason()
                .unwrap_or_else(|| "no answer before the deadline".into());
            let hint = match plan.may_be_the_command(index) {
                true => format!(" ({HINT})"),
                false => String::new(),
            };
            let reason = format!("{}{hint}", redact::one_line(&reason));
            (target.to_string(), reason, outcome.attempts)
        })
        .collect();
    let lines: Vec<String> = missed
        .iter()
        .map(|(target, reason, _)| format!("{target}: {reason}"))
        .collect();
    let what = if plan.policy.invert {
        "still ready"
    } else {
        "not ready"
    };
    let status = crate::exit::Exit::NotReady.code();
    for (line, (target, reason, attempt)) in lines.iter().zip(&missed) {
        match plan.mode {
            Mode::Probe | Mode::Serve => crate::output::stdout(line),
            Mode::Wait => tracing::error!(
                event = "giving_up",
                target,
                attempt,
                status,
                reason,
                "{what} after {}: {line}",
                humanize(elapsed)
            ),
        }
    }
    plan.termination_log
        .is_some()
        .then(|| format!("readygate: not ready: {}\n", lines.join("; ")))
}

/// Writes `message`, the run's `secrets` hidden, to the termination log, replacing what it held
/// (a message left by an earlier run may be longer). A `--termination-log` FILE is made with
/// its parent folders, as --touch's are: a path in a fresh emptyDir works. The kubelet's file is
/// written only if it is there.
pub fn write_termination_log(
    log: &TerminationLog,
    message: &str,
    secrets: &Secrets,
) -> io::Result<()> {
    let file = match log {
        TerminationLog::File(path) => make_parents(path).and_then(|()| open_regular(path, true)),
        TerminationLog::Kubelet => open_regular(Path::new(KUBELET_TERMINATION_LOG), false),
    };
    file.and_then(|mut file| {
        file.set_len(0)?;
        file.write_all(secrets.hide(message).as_bytes())
    })
}

/// Creates the `--touch` marker (and its parent folders).
pub fn touch(path: &Path) -> Result<(), String> {
    let folder = path.parent().unwrap_or(path).display();
    make_parents(path).map_err(|e| format!("cannot create --touch folder {folder}: {e}"))?;
    open_regular(path, true).map(drop).map_err(|e| {
        let shown = path.display();
        format!("cannot create --touch file {shown}: {}", describe_io(&e))
    })
}

/// Opens (creating it if `create`) a file to write, refusing anything but a regular file: the
/// open is non-blocking, so a FIFO or a device named by mistake cannot hang readygate.
fn open_regular(path: &Path, create: bool) -> io::Result<fs::File> {
    let not_regular = || io::Error::new(io::ErrorKind::InvalidInput, "not a regular file");
    let file = OpenOptions::new()
        .create(create)
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
