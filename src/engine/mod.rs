//! The retry loop: deadline, attempt timeout, backoff with jitter, success threshold, any/all
//! and invert. It knows nothing of protocols: a [`Condition`] is anything that can be attempted.

mod attempt;
mod schedule;
mod waiting;

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::{sleep, sleep_until, timeout_at, Instant};

use attempt::Scope;
pub use attempt::{attempt_end, retry_not_before};
pub use schedule::{Backoff, Schedule};
use waiting::Waiting;
pub use waiting::{waiting_for, NOTHING_YET};

/// The runtime every command runs on: one thread, with I/O (and signals) and timers.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
}

/// The least time left for which a new attempt is started.
const FLOOR: Duration = Duration::from_millis(1);

/// How often the "still waiting" line is logged at most.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// How an attempt missed the goal, for now or for good, and why (`F`: the condition's own
/// failure type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss<F> {
    /// Not ready yet: the engine tries again.
    NotYet(F),
    /// Never going to be ready (a Job that failed): the engine stops trying this target, and
    /// without `--any` ends the wait at once.
    Never(F),
}

impl<F> From<F> for Miss<F> {
    fn from(failure: F) -> Miss<F> {
        Miss::NotYet(failure)
    }
}

/// Why a target missed its goal, as the engine saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missed<F> {
    /// The condition's own failure.
    Failed(F),
    /// The attempt had not ended by its bound: what it was waiting for, and for how long.
    TimedOut {
        /// `no answer`, `no response`, `body not complete`, ...
        waiting: &'static str,
        /// How long the attempt ran.
        within: Duration,
    },
    /// With `--invert`: the target was still ready.
    StillReady,
}

impl<F: fmt::Display> fmt::Display for Missed<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missed::Failed(failure) => failure.fmt(f),
            Missed::TimedOut { waiting, within } => {
                write!(f, "{waiting} within {}", humanize(*within))
            }
            Missed::StillReady => f.write_str("still ready"),
        }
    }
}

/// Something that can be checked for readiness: one target bound to its options.
pub trait Condition: Send + Sync + 'static {
    /// Notices changes between attempts (file-system events); [`NoWatch`] for most kinds.
    type Watch: Watch;

    /// Why an attempt failed, shown to people through `Display`.
    type Failure: fmt::Display + fmt::Debug + Clone + Send + 'static;

    /// Starts watching for changes, before the first attempt so none is missed.
    fn watch(&self) -> Self::Watch;

    /// One attempt; `Err` says why the target is not ready, and whether it ever can be. The
    /// engine bounds its duration.
    fn attempt(&self) -> impl Future<Output = Result<(), Miss<Self::Failure>>> + Send;
}

/// A source of "something may have changed, try again now" wake-ups.
pub trait Watch: Send + 'static {
    /// Resolves when the condition may have changed; may resolve spuriously.
    fn changed(&mut self) -> impl Future<Output = ()> + Send;
}

/// A watch that never fires: the target is only polled.
pub struct NoWatch;

impl Watch for NoWatch {
    async fn changed(&mut self) {
        std::future::pending::<()>().await
    }
}

/// A watch that may not have been set up; without one, as [`NoWatch`].
impl<W: Watch> Watch for Option<W> {
    async fn changed(&mut self) {
        match self {
            Some(watch) => watch.changed().await,
            None => NoWatch.changed().await,
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
    /// Done when any one target is ready, instead of all of them.
    pub any: bool,
    /// A target is "ready" when its attempts fail.
    pub invert: bool,
    /// Stop a target after this many attempts (`probe`: 1); `None` retries until the deadline.
    pub max_attempts: Option<u32>,
}

/// How one target ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetReport<F> {
    /// Reached its goal (ready, or not ready with `--invert`).
    pub ready: bool,
    /// Why the last attempt that missed the goal missed it, if one did.
    pub last_error: Option<Missed<F>>,
}

impl<F: fmt::Display> TargetReport<F> {
    /// The last miss in words.
    pub fn reason(&self) -> Option<String> {
        self.last_error.as_ref().map(ToString::to_string)
    }
}

/// How the whole wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report<F> {
    /// The overall goal was met (all targets, or any one with `--any`).
    pub ready: bool,
    /// One entry per target, in the order given.
    pub targets: Vec<TargetReport<F>>,
}

/// What a target's loop tells the engine as it goes.
#[derive(Debug)]
struct Progress<F> {
    ready: bool,
    /// Why the last completed attempt missed; an attempt cut by the deadline fills it only
    /// when no attempt completed before it.
    last_error: Option<Missed<F>>,
    /// When the attempt now in flight started, if one is.
    in_flight: Option<Instant>,
    /// What the attempt in flight waits for.
    waiting: Waiting,
    /// When the next attempt may start, if the target asked for a wait.
    not_before: Option<Instant>,
}

impl<F> Default for Progress<F> {
    fn default() -> Self {
        Progress {
            ready: false,
            last_error: None,
            in_flight: None,
            waiting: Waiting::default(),
            not_before: None,
        }
    }
}

impl<F> Progress<F> {
    /// An attempt cut by the deadline: its reason is what it was waiting for then, kept only
    /// when no earlier attempt gave a reason of its own (`no such host web`, `status 503`, or
    /// `no answer within 1.0s` at its own timeout).
    fn cut_by_deadline(&mut self, reason: Missed<F>) {
        self.in_flight = None;
        self.last_error.get_or_insert(reason);
    }
}

/// How a target loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The goal was met (ready, or not ready with `--invert`).
    Met,
    /// Out of attempts (`probe`).
    OutOfAttempts,
    /// The target can never be ready: no point waiting for it, or for all targets.
    Never,
}

/// What a target loop reports to the engine.
enum Event<F> {
    /// An attempt starts now.
    Started,
    /// An attempt ended (at its own timeout too); with the reason when it missed the goal.
    Ended(Option<Missed<F>>),
    /// An attempt was cut by the deadline.
    CutByDeadline(Missed<F>),
    /// The target asked not to be tried again before then.
    NotBefore(Instant),
}

/// Runs every condition until the policy's goal is met or the deadline passes. `names` label
/// the conditions in log lines (already redacted); `schedules` space their attempts.
pub async fn run<C: Condition>(
    conditions: Vec<C>,
    names: &[String],
    schedules: &[Schedule],
    policy: &Policy,
) -> Report<C::Failure> {
    assert_eq!(conditions.len(), names.len(), "one name per condition");
    assert_eq!(
        conditions.len(),
        schedules.len(),
        "one schedule per condition"
    );
    let start = Instant::now();
    // A deadline the clock cannot represent (hundreds of billions of years) is no deadline.
    let deadline = policy.deadline.and_then(|d| start.checked_add(d));
    // Each its own: a cloned `Progress` would share its `Waiting`.
    let shared: Arc<Mutex<Vec<Progress<C::Failure>>>> = Arc::new(Mutex::new(
        conditions.iter().map(|_| Progress::default()).collect(),
    ));
    let mut tasks = JoinSet::new();
    let seed = fastrand::u64(..);
    for (index, condition) in conditions.into_iter().enumerate() {
        let policy = policy.clone();
        let shared = Arc::clone(&shared);
        let seed = seed.wrapping_add(index as u64);
        let name = names[index].clone();
        let waiting = shared.lock().expect("progress lock")[index].waiting.clone();
        let backoff = Backoff::new(schedules[index], seed);
        if policy.max_attempts != Some(1) {
            tracing::debug!("{name}: {}", schedules[index]);
        }
        tasks.spawn(async move {
            let end = target_loop(
                condition,
                &name,
                &policy,
                deadline,
                backoff,
                &waiting,
                |event| {
                    let mut progress = shared.lock().expect("progress lock");
                    let progress = &mut progress[index];
                    match event {
                        Event::Started => {
                            progress.in_flight = Some(Instant::now());
                            progress.not_before = None;
                        }
                        Event::NotBefore(at) => progress.not_before = Some(at),
                        Event::Ended(reason) => {
                            progress.in_flight = None;
                            if reason.is_some() {
                                progress.last_error = reason;
                            }
                        }
                        Event::CutByDeadline(reason) => progress.cut_by_deadline(reason),
                    }
                },
            )
            .await;
            (index, end)
        });
    }

    let total = names.len();
    let mut ready_count = 0;
    let mut finished = 0;
    let mut progress_at = start + PROGRESS_EVERY;
    let met = loop {
        if finished == total {
            break ready_count == total || (policy.any && ready_count > 0);
        }
        // Cancellation: every arm is cancel-safe; dropping `tasks` aborts the target loops.
        tokio::select! {
            joined = tasks.join_next() => {
                finished += 1;
                // A target loop cannot panic by design; if one did, it is simply not ready.
                let (index, end) = match joined {
                    Some(Ok(done)) => done,
                    Some(Err(_)) | None => (usize::MAX, End::OutOfAttempts),
                };
                if end == End::Never && !policy.any {
                    break false;
                }
                if end == End::Met {
                    ready_count += 1;
                    shared.lock().expect("progress lock")[index].ready = true;
                    tracing::info!("{}: {} after {}", names[index],
                        if policy.invert { "not ready" } else { "ready" },
                        humanize(start.elapsed()));
                    if policy.any || ready_count == total {
                        break true;
                    }
                }
            }
            _ = sleep_until_deadline(deadline) => {
                // An attempt that ends at the deadline too (a check that stopped waiting then)
                // reports its own reason first.
                tokio::task::yield_now().await;
                note_attempts_cut_by_deadline(&shared);
                break false;
            }
            _ = sleep_until(progress_at) => {
                progress_at += PROGRESS_EVERY;
                log_progress(&shared, names, start);
            }
        }
    };
    tasks.abort_all();
    let progress = std::mem::take(&mut *shared.lock().expect("progress lock"));
    Report {
        ready: met,
        targets: progress
            .into_iter()
            .map(|p| TargetReport {
                ready: p.ready,
                last_error: p.last_error,
            })
            .collect(),
    }
}

/// Attempts one condition until it meets the goal, runs out of attempts, or can never be ready.
/// Deadline expiry is handled by the caller, which drops this future.
async fn target_loop<C: Condition>(
    condition: C,
    name: &str,
    policy: &Policy,
    deadline: Option<Instant>,
    mut backoff: Backoff,
    waiting: &Waiting,
    mut record: impl FnMut(Event<C::Failure>),
) -> End {
    // One attempt only (`probe`) has nothing to be woken for: no watch to set up and close.
    let mut watch = (policy.max_attempts != Some(1)).then(|| condition.watch());
    let mut streak = 0;
    let mut attempts = 0;
    loop {
        // The attempt ends at its timeout or the deadline, the very instant the engine stops
        // waiting there, so a check that stops waiting then too can tell why it ends.
        let now = Instant::now();
        // Too little time left for an attempt to tell anything: the last reason stands, and
        // the deadline, which the caller waits for, ends this loop.
        if attempts > 0 && deadline.is_some_and(|d| d.saturating_duration_since(now) < FLOOR) {
            std::future::pending::<()>().await;
        }
        let end = match (now.checked_add(policy.attempt_timeout), deadline) {
            (Some(end), Some(deadline)) => end.min(deadline),
            (Some(end), None) => end,
            (None, Some(deadline)) => deadline,
            (None, None) => far_future(now),
        };
        let bound = end.saturating_duration_since(now);
        record(Event::Started);
        let scope = Scope::new(end);
        let attempt = waiting.scope(scope.run(condition.attempt()));
        let outcome = match timeout_at(end, attempt).await {
            Ok(outcome) => outcome.map_err(|miss| match miss {
                Miss::NotYet(failure) => Miss::NotYet(Missed::Failed(failure)),
                Miss::Never(failure) => Miss::Never(Missed::Failed(failure)),
            }),
            Err(_) => Err(Miss::NotYet(waiting.within(bound))),
        };
        attempts += 1;
        let good = match (outcome, policy.invert) {
            // Not ready for good: with --invert that is the goal, for good too.
            (Err(Miss::Never(reason)), invert) => {
                tracing::debug!("{name}: attempt {attempts}: {reason}");
                record(Event::Ended((!invert).then_some(reason)));
                return if invert { End::Met } else { End::Never };
            }
            (Err(Miss::NotYet(reason)), true) => {
                tracing::debug!("{name}: attempt {attempts}: {reason}");
                record(Event::Ended(None));
                true
            }
            (Ok(()), false) => {
                tracing::debug!("{name}: attempt {attempts}: ready");
                record(Event::Ended(None));
                true
            }
            (Ok(()), true) => {
                tracing::debug!(
                    "{name}: attempt {attempts}: {}",
                    Missed::<C::Failure>::StillReady
                );
                record(Event::Ended(Some(Missed::StillReady)));
                false
            }
            (Err(Miss::NotYet(reason)), false) => {
                tracing::debug!("{name}: attempt {attempts}: {reason}");
                // A check that stopped waiting at the deadline (`DNS: no answer for web in
                // time`) was cut by it as much as one the engine stopped.
                let cut = Some(end) == deadline && Instant::now() >= end;
                record(match cut {
                    true => Event::CutByDeadline(reason),
                    false => Event::Ended(Some(reason)),
                });
                false
            }
        };
        let delay = if good {
            streak += 1;
            if streak >= policy.success_threshold {
                return End::Met;
            }
            backoff.reset();
            backoff.first()
        } else {
            streak = 0;
            let delay = backoff.next_delay();
            // The target asked for a wait (a `Retry-After`): no sooner, though the deadline
            // still ends the wait when it comes.
            match scope.not_before() {
                Some(asked) if asked > delay => {
                    tracing::debug!(
                        "{name}: next attempt in {}, as the target asked",
                        humanize(asked)
                    );
                    record(Event::NotBefore(later(Instant::now(), asked)));
                    asked
                }
                _ => delay,
            }
        };
        if policy.max_attempts.is_some_and(|max| attempts >= max) {
            return End::OutOfAttempts;
        }
        // Cancellation: both arms are cancel-safe.
        tokio::select! {
            _ = sleep(delay) => {}
            _ = watch.changed() => {}
        }
    }
}

/// At the deadline, an attempt still in flight is the reason its target is not ready only if no
/// earlier attempt ended: a peer that resets every connection is reported as `connection
/// reset`, not as the unfinished last attempt's `no answer within 30ms`.
fn note_attempts_cut_by_deadline<F>(shared: &Mutex<Vec<Progress<F>>>) {
    for progress in shared.lock().expect("progress lock").iter_mut() {
        if let Some(started) = progress.in_flight {
            let reason = progress.waiting.within(started.elapsed());
            progress.cut_by_deadline(reason);
        }
    }
}

/// An instant as far ahead as the timer goes (about 30 years), for an attempt without bound.
fn far_future(now: Instant) -> Instant {
    now + Duration::from_secs(86400 * 365 * 30)
}

/// `by` after `now`, or the far future if the clock cannot say.
fn later(now: Instant, by: Duration) -> Instant {
    now.checked_add(by).unwrap_or_else(|| far_future(now))
}

/// Sleeps until the deadline, or forever without one.
async fn sleep_until_deadline(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

fn log_progress<F: fmt::Display>(
    shared: &Mutex<Vec<Progress<F>>>,
    names: &[String],
    start: Instant,
) {
    let progress = shared.lock().expect("progress lock");
    let now = Instant::now();
    let waiting: Vec<String> = progress
        .iter()
        .zip(names)
        .filter(|(p, _)| !p.ready)
        .map(|(p, name)| {
            let asked = match p.not_before {
                Some(at) if at > now => {
                    format!("; next attempt in {}, as it asked", humanize(at - now))
                }
                _ => String::new(),
            };
            match &p.last_error {
                Some(reason) => format!("{name} ({reason}{asked})"),
                None => name.clone(),
            }
        })
        .collect();
    tracing::info!(
        "still waiting after {}: {}",
        humanize(start.elapsed()),
        waiting.join(", ")
    );
}

/// A duration rounded for people: `1.5s`, `250ms`.
pub fn humanize(duration: Duration) -> String {
    if duration >= Duration::from_secs(1) {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

#[cfg(test)]
mod tests;
