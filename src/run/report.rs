//! What a finished wait leaves behind: log lines, `probe`'s stdout lines for the pod's events,
//! the `--touch` marker ([`touch`]) and the `--termination-log` message ([`termination_log`]).

mod termination_log;
mod touch;

use std::time::Duration;

use crate::cli::dashes::HINT;
use crate::engine::Report;
use crate::grammar::duration::humanize;
use crate::plan::{Mode, Plan};
use crate::text;

pub use termination_log::write_termination_log;
pub use touch::touch;

/// Reports a run that did not become ready: a `<target>: <reason>` line per target that missed
/// its goal, logged (`wait`) or on stdout (`probe`); returns the message for the termination
/// log, if the plan has one.
pub fn not_ready(plan: &Plan, report: &Report, elapsed: Duration) -> Option<String> {
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
            let reason = format!("{}{hint}", text::one_line(&reason));
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
