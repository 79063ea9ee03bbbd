//! What `serve` counts, and `/metrics`, its Prometheus exposition: each target's and group's
//! readiness as the last attempts left it, attempts by result and their durations, answers by
//! code, connections refused at the cap and those closed before they were done, by why. A scrape
//! only reads these: it never starts an attempt.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use super::answer::App;
use crate::metrics::{Exposition, Histogram, Type};

/// A target's attempts: how many ended each way, and how long they took.
#[derive(Default)]
pub struct Tally {
    ready: AtomicU64,
    not_ready: AtomicU64,
    durations: Histogram,
}

impl Tally {
    /// Counts one attempt that ended ready (after `--invert`) or not, after `took`.
    pub fn attempted(&self, ready: bool, took: Duration) {
        let count = match ready {
            true => &self.ready,
            false => &self.not_ready,
        };
        count.fetch_add(1, Ordering::Relaxed);
        self.durations.observe(took);
    }
}

/// What an answer counts as: its HTTP status, or how a gRPC call ended (`SERVING`,
/// `NOT_SERVING`, or the failed call's status name). A gRPC answer carries it as an extension.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Http(u16),
    Grpc(&'static str),
}

/// The server's own counts, beside the targets'.
#[derive(Default)]
pub struct Counts {
    /// Answers by code: a handful of codes, so a list.
    answers: Mutex<Vec<(Code, u64)>>,
    /// Connections closed at once at the cap (no room could be made for them).
    refused: AtomicU64,
    /// Connections closed before they were done, by [`Eviction`] (its index in `EVICTIONS`).
    evicted: [AtomicU64; EVICTIONS.len()],
}

/// Why serve closed a connection that held one of its places without being done with it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Eviction {
    /// To make room at the cap for a newer connection.
    Cap,
    /// Its request head was not whole within the head timeout.
    HeadTimeout,
    /// It had lived its lifetime (`--attempt-timeout` and a linger).
    Lifetime,
    /// It sent more than a connection may (a flood of frames).
    ReadBudget,
}

/// Every eviction, with its `reason` label, in the order they are exposed.
const EVICTIONS: [(Eviction, &str); 4] = [
    (Eviction::Cap, "cap"),
    (Eviction::HeadTimeout, "head_timeout"),
    (Eviction::Lifetime, "lifetime"),
    (Eviction::ReadBudget, "read_budget"),
];

impl Counts {
    /// Counts one answer.
    pub fn answered(&self, code: Code) {
        let Ok(mut answers) = self.answers.lock() else {
            return;
        };
        match answers.iter_mut().find(|(seen, _)| *seen == code) {
            Some((_, count)) => *count += 1,
            None => answers.push((code, 1)),
        }
    }

    /// Counts one connection refused at the cap.
    pub fn refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one connection closed before it was done, for `why`.
    pub fn evicted(&self, why: Eviction) {
        if let Some(index) = EVICTIONS.iter().position(|(each, _)| *each == why) {
            self.evicted[index].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The exposition of everything counted so far.
pub fn render(app: &App) -> String {
    let targets = &app.targets;
    // Labelled as the body names them, redacted as log lines are; by position alone with
    // `--quiet-body`, which keeps the targets out of every answer.
    let labels: Vec<String> = (0..targets.len())
        .map(|index| match app.plan.quiet_body {
            true => (index + 1).to_string(),
            false => {
                let name = crate::text::one_line(targets.name(index));
                app.plan.plan.secrets.hide(&name)
            }
        })
        .collect();
    let mut out = Exposition::default();
    out.family(
        "readygate_ready",
        Type::Gauge,
        "Whether /ready would answer 200 (1) or 503 (0) from the last attempts; no sample until they decide it.",
    );
    if let Some(ready) = verdict(app, &app.all) {
        out.sample("readygate_ready", &[], ready.into());
    }
    out.family(
        "readygate_group_ready",
        Type::Gauge,
        "Whether /ready/GROUP would answer 200 (1) or 503 (0) from the last attempts.",
    );
    for group in &app.plan.groups {
        if let Some(ready) = verdict(app, &group.members) {
            let labels = [("group", group.name.as_str())];
            out.sample("readygate_group_ready", &labels, ready.into());
        }
    }
    out.family(
        "readygate_target_ready",
        Type::Gauge,
        "Whether the target's last attempt found it ready (1) or not (0); no sample before its first.",
    );
    for (index, label) in labels.iter().enumerate() {
        if let Some(ready) = targets.last(index) {
            out.sample("readygate_target_ready", &[("target", label)], ready.into());
        }
    }
    out.family(
        "readygate_attempts_total",
        Type::Counter,
        "Attempts made, by target and result (ready or not_ready, after --invert).",
    );
    for (index, label) in labels.iter().enumerate() {
        let tally = targets.tally(index);
        for (result, count) in [("ready", &tally.ready), ("not_ready", &tally.not_ready)] {
            let labels = [("target", label.as_str()), ("result", result)];
            out.sample(
                "readygate_attempts_total",
                &labels,
                count.load(Ordering::Relaxed),
            );
        }
    }
    out.family(
        "readygate_attempt_duration_seconds",
        Type::Histogram,
        "How long attempts took, by target.",
    );
    for (index, label) in labels.iter().enumerate() {
        let labels = [("target", label.as_str())];
        out.histogram(
            "readygate_attempt_duration_seconds",
            &labels,
            &targets.tally(index).durations,
        );
    }
    out.family(
        "readygate_answers_total",
        Type::Counter,
        "Answers given, by protocol and code (HTTP status; gRPC SERVING, NOT_SERVING or the call's status).",
    );
    let answers = app
        .counts
        .answers
        .lock()
        .map(|a| a.clone())
        .unwrap_or_default();
    for (code, count) in answers {
        let status;
        let labels = match code {
            Code::Http(code) => {
                status = code.to_string();
                [("protocol", "http"), ("code", status.as_str())]
            }
            Code::Grpc(name) => [("protocol", "grpc"), ("code", name)],
        };
        out.sample("readygate_answers_total", &labels, count);
    }
    out.family(
        "readygate_connections_refused_total",
        Type::Counter,
        "Connections closed at once because no room could be made for them at the cap.",
    );
    let refused = app.counts.refused.load(Ordering::Relaxed);
    out.sample("readygate_connections_refused_total", &[], refused);
    out.family(
        "readygate_connections_evicted_total",
        Type::Counter,
        "Connections closed before they were done, by reason (cap, head_timeout, lifetime, read_budget).",
    );
    for ((_, reason), count) in EVICTIONS.iter().zip(&app.counts.evicted) {
        let count = count.load(Ordering::Relaxed);
        out.sample(
            "readygate_connections_evicted_total",
            &[("reason", reason)],
            count,
        );
    }
    out.into_text()
}

/// Whether `members` are ready as their last attempts left them (any one with `--any`), when
/// those attempts decide it; `READYGATE_DISABLED` is always ready, as `/ready` answers.
fn verdict(app: &App, members: &[usize]) -> Option<bool> {
    if app.plan.plan.disabled {
        return Some(true);
    }
    let last: Vec<Option<bool>> = members.iter().map(|&i| app.targets.last(i)).collect();
    // With --any one ready member decides, else one not ready; or else every member counts.
    let decisive = app.plan.plan.policy.any;
    if last.contains(&Some(decisive)) {
        return Some(decisive);
    }
    match last.iter().all(Option::is_some) {
        true => Some(!decisive),
        false => None,
    }
}
