//! The retry loop: deadline, attempt timeout, backoff with jitter, success threshold, stable-for,
//! any/all and invert. It knows nothing of protocols: a [`Condition`] is anything that can be attempted.

mod schedule;

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::{sleep, sleep_until, timeout_at, Instant};

use crate::error::Failure;
use crate::grammar::duration::humanize;
use crate::runtime::Attempt;
pub use schedule::{Backoff, Schedule};

/// The least time left for which a new attempt is started.
const FLOOR: Duration = Duration::from_millis(1);

/// How often the "still waiting" line is logged at most.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Something that can be checked for readiness: one target bound to its options.
pub trait Condition: Send + Sync + 'static {
    /// Notices changes between attempts (file-system events); `None` for most kinds.
    type Watch: Watch;

    /// Starts watching for changes, before the first attempt so none is missed; a watch that
    /// asks a server for its changes spaces its own requests by the target's `schedule`.
    fn watch(&self, schedule: Schedule) -> Self::Watch;

    /// One attempt, which ends at `at`'s end; `Err` says why the target is not ready, and
    /// whether it ever can be ([`Failure::Never`]). The engine bounds its duration, and reads
    /// what it told `at`.
    fn attempt(&self, at: &Attempt) -> impl Future<Output = Result<(), Failure>> + Send;
}

/// A source of "something may have changed, try again now" wake-ups.
pub trait Watch: Send + 'static {
    /// Resolves when the condition may have changed; may resolve spuriously.
    fn changed(&mut self) -> impl Future<Output = ()> + Send;
}

/// A watch that may not have been set up; without one, the target is only polled.
impl<W: Watch> Watch for Option<W> {
    async fn changed(&mut self) {
        match self {
            Some(watch) => watch.changed().await,
            None => std::future::pending().await,
        }
    }
}

/// The retry settings, validated once by the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Overall deadline from the start; `None` waits forever.
    pub deadline: Option<Duration>,
    /// Bound on one attempt, clipped to what is left of the deadline.
    pub attempt_timeout: Duration,
    /// Consecutive good attempts a target needs.
    pub success_threshold: u32,
    /// How long a target must keep meeting the goal, every attempt in that span meeting it,
    /// before it counts (zero: at once). Attempts come at the schedule's first delay meanwhile.
    pub stable_for: Duration,
    /// Done when any one target is ready, instead of all of them.
    pub any: bool,
    /// A target is "ready" when its attempts fail.
    pub invert: bool,
    /// Stop a target after this many attempts (`probe`: 1); `None` retries until the deadline.
    pub max_attempts: Option<u32>,
}

/// How one target ended: what its attempts came to, which only the engine counts and the
/// report shows per target (the last miss's [`Failure`] alone has no count and no "met").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetReport {
    /// Reached its goal (ready, or not ready with `--invert`).
    pub ready: bool,
    /// Why the last attempt that missed the goal missed it, if one did.
    pub last_error: Option<Failure>,
    /// How many attempts ended.
    pub attempts: u32,
}

impl TargetReport {
    /// The last miss in words, for the report and the termination log.
    pub fn reason(&self) -> Option<String> {
        self.last_error.as_ref().map(ToString::to_string)
    }
}

/// How the whole wait ended: the goal over all targets (all, any, or none once one can never
/// be ready), which no one target's report can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The overall goal was met (all targets, or any one with `--any`).
    pub ready: bool,
    /// One entry per target, in the order given.
    pub targets: Vec<TargetReport>,
}

/// Where a target stands, kept by its loop and read by the engine.
#[derive(Debug, Default)]
struct Progress {
    /// What the engine reports of it; an attempt cut by the deadline gives the last error only
    /// when no attempt completed before it.
    report: TargetReport,
    /// When the attempt now in flight started, if one is.
    in_flight: Option<Instant>,
    /// The attempt in flight (or the last one), as its check describes it.
    attempt: Attempt,
    /// When the next attempt may start, if the target asked for a wait.
    not_before: Option<Instant>,
    /// With a `stable_for`: when the run of attempts meeting the goal began, if one goes on.
    stable_since: Option<Instant>,
}

impl Progress {
    /// Whether the target missed for good: no point waiting for all targets.
    fn never(&self) -> bool {
        matches!(self.report.last_error, Some(Failure::Never(_)))
    }

    /// The attempt in flight ended, missing the goal when `miss` says why. One `cut` by the
    /// deadline gives its reason only when no earlier attempt gave one of its own (`no such
    /// host web`, `status 503`, or `no answer within 1.0s` at its own timeout).
    fn ended(&mut self, miss: Option<Failure>, cut: bool) {
        self.in_flight = None;
        let last = &mut self.report.last_error;
        match miss {
            Some(reason) if cut => _ = last.get_or_insert(reason),
            Some(reason) => *last = Some(reason),
            None => {}
        }
    }
}

type Shared = Arc<Mutex<Progress>>;

/// One condition to wait for, with its name and its pace.
pub struct Entry<C> {
    pub condition: C,
    /// How log lines name it (secrets already hidden).
    pub name: String,
    /// How its attempts are spaced.
    pub schedule: Schedule,
}

/// Runs every entry's condition until the policy's goal is met or the deadline passes.
pub async fn run<C: Condition>(entries: Vec<Entry<C>>, policy: &Policy) -> Report {
    let total = entries.len();
    let names: Vec<String> = entries.iter().map(|entry| entry.name.clone()).collect();
    let start = Instant::now();
    // No deadline, or one the clock cannot represent (hundreds of billions of years): never.
    let deadline = policy
        .deadline
        .and_then(|d| start.checked_add(d))
        .unwrap_or_else(|| far_future(start));
    let shared: Vec<Shared> = names.iter().map(|_| Shared::default()).collect();
    let mut tasks = JoinSet::new();
    let seed = fastrand::u64(..);
    for (index, entry) in entries.into_iter().enumerate() {
        let Entry {
            condition,
            name,
            schedule,
        } = entry;
        if policy.max_attempts != Some(1) {
            let target = &name;
            tracing::debug!(event = "schedule", target, "{target}: {schedule}");
        }
        let backoff = Backoff::new(schedule, seed.wrapping_add(index as u64));
        let (policy, progress) = (policy.clone(), shared[index].clone());
        tasks.spawn(async move {
            let met = target_loop(condition, &name, &policy, deadline, backoff, &progress);
            (index, met.await)
        });
    }

    let (mut ready_count, mut finished) = (0, 0);
    let mut progress_at = start + PROGRESS_EVERY;
    let met = loop {
        if finished == total {
            // Only none of none is met here: any other goal was met as its target ended.
            break ready_count == total;
        }
        // Cancellation: every arm is cancel-safe; dropping `tasks` aborts the target loops.
        tokio::select! {
            joined = tasks.join_next() => {
                finished += 1;
                // A target loop cannot panic by design; if one did, it is simply not ready.
                let Some(Ok((index, met))) = joined else { continue };
                if !met && !policy.any && lock(&shared[index]).never() {
                    break false;
                }
                if met {
                    ready_count += 1;
                    let attempt = {
                        let mut progress = lock(&shared[index]);
                        progress.report.ready = true;
                        progress.report.attempts
                    };
                    let target = &names[index];
                    tracing::info!(event = "ready", target, attempt, "{target}: {} after {}",
                        if policy.invert { "not ready" } else { "ready" },
                        humanize(start.elapsed()));
                    if policy.any || ready_count == total {
                        break true;
                    }
                }
            }
            _ = sleep_until(deadline) => {
                // An attempt that ends at the deadline too (a check that stopped waiting then)
                // reports its own reason first.
                tokio::task::yield_now().await;
                for progress in &shared {
                    let mut progress = lock(progress);
                    // Short of its stable span: that, not the attempt in flight, is why.
                    if let Some(since) = progress.stable_since.filter(|_| !progress.report.ready) {
                        let held = humanize(since.elapsed());
                        let needed = humanize(policy.stable_for);
                        let short = format!("stable for only {held} of the {needed} needed");
                        progress.report.last_error = Some(short.into());
                    } else if let Some(started) = progress.in_flight {
                        let reason = progress.attempt.within(started.elapsed());
                        progress.ended(Some(reason), true);
                    }
                }
                break false;
            }
            _ = sleep_until(progress_at) => {
                progress_at += PROGRESS_EVERY;
                log_progress(&shared, &names, start);
            }
        }
    };
    tasks.abort_all();
    Report {
        ready: met,
        targets: shared.iter().map(|p| lock(p).report.clone()).collect(),
    }
}

/// The longest wait a target may ask for (a `Retry-After`), unless the schedule's cap
/// (`--max-interval`) is longer: a server's mistake must not stop retries for days.
const MAX_ASKED_WAIT: Duration = Duration::from_secs(300);

/// Attempts one condition until it meets the goal (`true`), runs out of attempts, or can never
/// be ready (its last miss says which). Deadline expiry is handled by the caller, which drops
/// this future.
async fn target_loop<C: Condition>(
    condition: C,
    name: &str,
    policy: &Policy,
    deadline: Instant,
    mut backoff: Backoff,
    progress: &Mutex<Progress>,
) -> bool {
    // One attempt only (`probe`) has nothing to be woken for: no watch to set up and close.
    let mut watch = (policy.max_attempts != Some(1)).then(|| condition.watch(backoff.schedule()));
    let mut streak = 0;
    let mut attempts = 0;
    // With a `stable_for`: when the run of good attempts began.
    let mut since: Option<Instant> = None;
    loop {
        let now = Instant::now();
        // Too little time left for an attempt to tell anything: the last reason stands, and
        // the deadline, which the caller waits for, ends this loop.
        if attempts > 0 && deadline.saturating_duration_since(now) < FLOOR {
            std::future::pending::<()>().await;
        }
        // The attempt ends at its timeout or the deadline, the very instant the engine stops
        // waiting there, so a check that stops waiting then too can tell why it ends.
        let end = now
            .checked_add(policy.attempt_timeout)
            .map_or(deadline, |end| end.min(deadline));
        let attempt = Attempt::until(end);
        {
            let mut progress = lock(progress);
            progress.in_flight = Some(now);
            progress.attempt = attempt.clone();
            progress.not_before = None;
        }
        let failure = bounded(&condition, &attempt, now, end).await.err();
        attempts += 1;
        lock(progress).report.attempts = attempts;
        {
            let said: &dyn fmt::Display = match (&failure, policy.invert) {
                (Some(reason), _) => reason,
                (None, false) => &"ready",
                (None, true) => &"still ready",
            };
            let reason = failure.as_ref().map(tracing::field::display);
            tracing::debug!(
                event = "attempt",
                target = name,
                attempt = attempts,
                reason,
                "{name}: attempt {attempts}: {said}"
            );
        }
        let never = matches!(failure, Some(Failure::Never(_)));
        let miss = goal_missed(failure, policy.invert);
        if never {
            // Not ready for good: with --invert that is the goal, for good too.
            lock(progress).ended(miss, false);
            return policy.invert;
        }
        // A check that stopped waiting at the deadline (`DNS: no answer for web in time`) was
        // cut by it as much as one the engine stopped.
        let cut = !policy.invert && end == deadline && Instant::now() >= end;
        let good = miss.is_none();
        lock(progress).ended(miss, cut);
        let delay = if good {
            streak += 1;
            let began = *since.get_or_insert(now);
            if streak >= policy.success_threshold && now - began >= policy.stable_for {
                return true;
            }
            if !policy.stable_for.is_zero() {
                lock(progress).stable_since = Some(began);
            }
            backoff.reset();
            // The attempt that completes the span comes just when it is complete.
            let complete = (began + policy.stable_for).saturating_duration_since(Instant::now());
            match streak >= policy.success_threshold {
                true => backoff.first().min(complete),
                false => backoff.first(),
            }
        } else {
            streak = 0;
            since = None;
            lock(progress).stable_since = None;
            let delay = backoff.next_delay();
            // The target asked for a wait (a `Retry-After`): no sooner, though the deadline
            // still ends the wait when it comes, and a wait longer than the cap (a server's
            // `Retry-After: 999999999`) is the cap.
            let cap = MAX_ASKED_WAIT.max(backoff.max());
            match attempt.asked_wait().map(|asked| asked.min(cap)) {
                Some(asked) if asked > delay => {
                    let asked_text = humanize(asked);
                    tracing::debug!(
                        event = "retry_after",
                        target = name,
                        "{name}: next attempt in {asked_text}, as the target asked"
                    );
                    let now = Instant::now();
                    let at = now.checked_add(asked).unwrap_or_else(|| far_future(now));
                    lock(progress).not_before = Some(at);
                    asked
                }
                _ => delay,
            }
        };
        if policy.max_attempts.is_some_and(|max| attempts >= max) {
            return false;
        }
        // Cancellation: both arms are cancel-safe.
        tokio::select! {
            _ = sleep(delay) => {}
            _ = watch.changed() => {}
        }
    }
}

/// One attempt of `condition` started at `now` and cut at `end`: why it failed, if it did
/// (the check's own miss, or `WHAT within DURATION`).
async fn bounded<C: Condition>(
    condition: &C,
    attempt: &Attempt,
    now: Instant,
    end: Instant,
) -> Result<(), Failure> {
    match timeout_at(end, condition.attempt(attempt)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(attempt.within(end - now)),
    }
}

/// How an attempt that failed for `failure` (if it did) missed the goal: with `invert`, a
/// failure is the goal and success misses it.
fn goal_missed(failure: Option<Failure>, invert: bool) -> Option<Failure> {
    match (failure, invert) {
        (failure, false) => failure,
        (Some(_), true) => None,
        (None, true) => Some("still ready".into()),
    }
}

/// One attempt of `condition` within `bound`, made and judged as the retry loop makes each
/// of its attempts: what `serve` runs on demand for a request.
pub async fn once<C: Condition>(
    condition: &C,
    bound: Duration,
    invert: bool,
) -> Result<(), Failure> {
    let now = Instant::now();
    let end = now.checked_add(bound).unwrap_or_else(|| far_future(now));
    let failure = bounded(condition, &Attempt::until(end), now, end)
        .await
        .err();
    goal_missed(failure, invert).map_or(Ok(()), Err)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().expect("progress lock")
}

/// An instant as far ahead as the timer goes (about 30 years).
fn far_future(now: Instant) -> Instant {
    now + Duration::from_secs(86400 * 365 * 30)
}

fn log_progress(shared: &[Shared], names: &[String], start: Instant) {
    let now = Instant::now();
    let mut waiting = Vec::new();
    // Each target's last reason, as a field of JSON lines: `[{"target":…,"reason":…}]`.
    let mut reasons = Vec::new();
    for (progress, name) in shared.iter().zip(names) {
        let progress = lock(progress);
        if progress.report.ready {
            continue;
        }
        let mut reason = serde_json::Map::new();
        reason.insert("target".into(), name.as_str().into());
        if let Some(last) = &progress.report.last_error {
            reason.insert("reason".into(), last.to_string().into());
        }
        reasons.push(serde_json::Value::Object(reason));
        let asked = match progress.not_before {
            Some(at) if at > now => {
                format!("; next attempt in {}, as it asked", humanize(at - now))
            }
            _ => String::new(),
        };
        let stable = progress
            .stable_since
            .map(|since| format!("stable for {}", humanize(now - since)));
        waiting.push(match (stable, &progress.report.last_error) {
            (Some(stable), _) => format!("{name} ({stable})"),
            (None, Some(reason)) => format!("{name} ({reason}{asked})"),
            (None, None) => name.clone(),
        });
    }
    let elapsed = humanize(start.elapsed());
    tracing::info!(
        event = "waiting",
        reasons = %serde_json::Value::Array(reasons),
        "still waiting after {elapsed}: {}",
        first_few(&waiting)
    );
}

/// Most items a summary line names; the rest are counted.
const FEW: usize = 5;

/// `a, b, c, d, e and 1995 more`: a summary line stays a line, however many targets there are.
pub fn first_few(items: &[String]) -> String {
    match items.len() {
        n if n > FEW => format!("{} and {} more", items[..FEW].join(", "), n - FEW),
        _ => items.join(", "),
    }
}

#[cfg(test)]
mod tests;
