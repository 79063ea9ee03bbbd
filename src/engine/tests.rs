//! The retry loop under tokio's paused clock: every timing here is exact and instant.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::*;

const MS: Duration = Duration::from_millis(1);
const S: Duration = Duration::from_secs(1);

/// How a [`Scripted`] condition's attempts go.
#[derive(Clone, Copy)]
enum Step {
    Up,
    Down(&'static str),
    /// Not ready, and never will be (a Job that failed).
    Never(&'static str),
    /// Takes this long, then is refused.
    Slow(Duration),
    /// Waits until its attempt ends, then says why, as a DNS lookup that stops waiting does.
    Stalls(&'static str),
    /// A 503 asking not to be tried again for this long (`Retry-After`).
    Busy(Duration),
    /// Up on every other attempt of the script, from its first: never two in a row.
    Flaps(&'static str),
}
use Step::*;

const REFUSED: Step = Down("connection refused");

/// A scripted condition: from each `(at, step)` of `script` on, its attempts go as `step`
/// says; it records when each attempt started.
#[derive(Clone)]
struct Scripted {
    start: Instant,
    script: Vec<(Duration, Step)>,
    /// When its watch fires.
    fires_at: Option<Duration>,
    times: Arc<Mutex<Vec<Duration>>>,
    watches: Arc<AtomicU32>,
}

/// A condition following `steps`, given as milliseconds from now.
fn script(steps: &[(u32, Step)]) -> Scripted {
    Scripted {
        start: Instant::now(),
        script: steps.iter().map(|&(ms, step)| (ms * MS, step)).collect(),
        fires_at: None,
        times: Arc::default(),
        watches: Arc::default(),
    }
}

/// Refused until `ms`, then up.
fn up_from(ms: u32) -> Scripted {
    script(&[(0, REFUSED), (ms, Up)])
}

/// Refused for good.
fn down() -> Scripted {
    script(&[(0, REFUSED)])
}

/// Busy for good, asking each time not to be tried again for `wait`.
fn busy(wait: Duration) -> Scripted {
    script(&[(0, Busy(wait))])
}

impl Scripted {
    fn times(&self) -> Vec<Duration> {
        self.times.lock().unwrap().clone()
    }
}

/// A watch that fires at its instant.
struct FiresAt(Instant);

impl Watch for FiresAt {
    async fn changed(&mut self) {
        tokio::time::sleep_until(self.0).await;
        self.0 += Duration::from_secs(3600);
    }
}

impl Condition for Scripted {
    type Watch = Option<FiresAt>;

    fn watch(&self, _: Schedule) -> Option<FiresAt> {
        self.watches.fetch_add(1, Ordering::SeqCst);
        self.fires_at.map(|at| FiresAt(self.start + at))
    }

    async fn attempt(&self, attempt: &Attempt) -> Result<(), Failure> {
        let at = self.start.elapsed();
        let earlier = {
            let mut times = self.times.lock().unwrap();
            times.push(at);
            times.len() - 1
        };
        let step = self.script.iter().rev().find(|(from, _)| at >= *from);
        match step.expect("a script starts at zero").1 {
            Up => Ok(()),
            Down(why) => Err(why.into()),
            Never(why) => Err(Failure::Never(why.into())),
            Slow(takes) => {
                tokio::time::sleep(takes).await;
                Err("connection refused".into())
            }
            Stalls(why) => {
                tokio::time::sleep_until(attempt.end().expect("in an attempt")).await;
                Err(why.into())
            }
            Busy(wait) => {
                attempt.retry_not_before(wait);
                Err("status 503".into())
            }
            Flaps(why) if earlier % 2 == 1 => Err(why.into()),
            Flaps(_) => Ok(()),
        }
    }
}

/// Waits ten seconds, one attempt a second at most, as `change` says otherwise.
fn with(change: impl FnOnce(&mut Policy)) -> Policy {
    let mut policy = Policy {
        deadline: Some(10 * S),
        attempt_timeout: S,
        success_threshold: 1,
        stable_for: Duration::ZERO,
        any: false,
        invert: false,
        max_attempts: None,
    };
    change(&mut policy);
    policy
}

fn defaults() -> Policy {
    with(|_| {})
}

fn within(deadline: Duration) -> Policy {
    with(|p| p.deadline = Some(deadline))
}

/// Today's local schedule: 10 ms doubling to 100 ms.
const LOCAL: Schedule = Schedule {
    label: "local",
    first: Duration::from_millis(10),
    max: Duration::from_millis(100),
    growth: (2, 1),
    steady: 0,
};

/// The plan's schedule for network peers (the engine itself knows no plan).
const REMOTE: Schedule = Schedule {
    label: "remote",
    first: Duration::from_millis(100),
    max: Duration::from_secs(5),
    growth: (13, 10),
    steady: 15,
};

/// The plan's schedule for the API server and commands: the remote one with no steady start.
const GENTLE: Schedule = Schedule {
    label: "api server",
    steady: 0,
    ..REMOTE
};

/// Spaced `every` apart, without growth.
fn steady(every: Duration) -> Schedule {
    Schedule {
        first: every,
        max: every,
        ..LOCAL
    }
}

/// Runs `conditions`, all on `schedule`: how the run ended in words (`met` or `missed`, then
/// each target: `ready`, its last miss, or both), and how long it took.
async fn go(conditions: &[&Scripted], schedule: Schedule, policy: &Policy) -> (String, Duration) {
    let entries = (conditions.iter().enumerate())
        .map(|(i, &condition)| Entry {
            condition: condition.clone(),
            name: format!("t{i}"),
            schedule,
        })
        .collect();
    let started = Instant::now();
    let report = run(entries, policy).await;
    let targets: Vec<String> = report
        .targets
        .iter()
        .map(|target| match (target.ready, target.reason()) {
            (true, None) => "ready".into(),
            (true, Some(reason)) => format!("ready after {reason}"),
            (false, reason) => reason.unwrap_or_else(|| "-".into()),
        })
        .collect();
    let met = if report.ready { "met" } else { "missed" };
    (format!("{met}: {}", targets.join("; ")), started.elapsed())
}

#[tokio::test(start_paused = true)]
async fn ready_at_once_takes_one_attempt() {
    let up = up_from(0);
    assert_eq!(go(&[&up], LOCAL, &defaults()).await.0, "met: ready");
    assert_eq!(up.times(), [Duration::ZERO]);
}

#[tokio::test(start_paused = true)]
async fn retries_follow_the_jittered_exponential_backoff() {
    let condition = up_from(2000);
    let (ended, noticed) = go(&[&condition], LOCAL, &defaults()).await;
    assert_eq!(ended, "met: ready after connection refused");
    let times = condition.times();
    let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let bases = [10u32, 20, 40, 80];
    for (gap, base) in gaps.iter().zip(bases) {
        assert!(
            *gap >= MS * base / 2 && *gap <= MS * base,
            "gap {gap:?} for base {base}ms"
        );
    }
    for gap in &gaps[bases.len()..] {
        assert!(*gap >= 50 * MS && *gap <= 100 * MS, "capped gap {gap:?}");
    }
    // Noticed within one capped interval of coming up.
    assert!(noticed >= 2 * S && noticed <= 2100 * MS, "{noticed:?}");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_is_exact_even_when_attempts_hang() {
    let hangs = script(&[(0, Slow(3600 * S))]);
    // The attempt in flight at the deadline is cut short: the reason stays the last one that
    // ran its full attempt timeout.
    let ended = go(&[&hangs], LOCAL, &within(2500 * MS)).await;
    assert_eq!(ended, ("missed: no answer within 1.0s".into(), 2500 * MS));
    // Attempts are cut at the attempt timeout (1s), then retried.
    let times = hangs.times();
    assert_eq!(times.len(), 3, "{times:?}");
    assert!(times[1] >= 1005 * MS && times[1] <= 1010 * MS);

    // The attempt timeout is clipped to the deadline.
    let policy = with(|p| (p.deadline, p.attempt_timeout) = (Some(300 * MS), 5 * S));
    let ended = go(&[&hangs], LOCAL, &policy).await;
    assert_eq!(ended, ("missed: no answer within 300ms".into(), 300 * MS));
}

#[tokio::test(start_paused = true)]
async fn a_concrete_failure_outlives_the_attempt_cut_by_the_deadline() {
    // Every attempt fails after 100ms; the one in flight at the deadline has no verdict yet.
    let slow = script(&[(0, Slow(100 * MS))]);
    let (ended, _) = go(&[&slow], steady(10 * MS), &within(1050 * MS)).await;
    let times = slow.times();
    assert!(*times.last().unwrap() > 950 * MS, "{times:?}");
    assert_eq!(ended, "missed: connection refused");
}

#[tokio::test(start_paused = true)]
async fn a_check_that_stops_waiting_keeps_the_earlier_reason_only_at_the_deadline() {
    let stalls = Stalls("DNS: no answer for web in time");
    let fails_once = [(0, Down("no such host web")), (1, stalls)];
    let cases = [
        // The first attempt completes; the second waits until the deadline.
        (&fails_once[..], S, "no such host web"),
        // No attempt completed: what the one in flight was waiting for at the deadline.
        (&[(0, stalls)][..], S, "DNS: no answer for web in time"),
        // Attempts end at their own 100ms timeout, not the deadline: that is their real reason.
        (&fails_once[..], 100 * MS, "DNS: no answer for web in time"),
    ];
    for (steps, attempt_timeout, why) in cases {
        let policy = with(|p| (p.deadline, p.attempt_timeout) = (Some(500 * MS), attempt_timeout));
        let ended = go(&[&script(steps)], LOCAL, &policy).await;
        assert_eq!(ended, (format!("missed: {why}"), 500 * MS));
    }
}

#[tokio::test(start_paused = true)]
async fn good_attempts_towards_the_threshold_come_at_the_first_delay() {
    // Up from 1s, down again from 1.015s, up for good from 1.5s: the first streak breaks.
    // (Whether it does depends on the jitter: `successes_between_failures_never_…` tests that.)
    let flapping = script(&[(0, REFUSED), (1000, Up), (1015, REFUSED), (1500, Up)]);
    let policy = with(|p| p.success_threshold = 3);
    let (ended, took) = go(&[&flapping], LOCAL, &policy).await;
    assert_eq!(ended, "met: ready after connection refused");
    assert!(took >= (1500 + 20) * MS, "{took:?}");
    assert!(took <= (1500 + 100 + 20) * MS, "{took:?}");
    // The last three attempts are `interval` apart.
    let times = flapping.times();
    let n = times.len();
    assert_eq!(times[n - 1] - times[n - 2], 10 * MS);
    assert_eq!(times[n - 2] - times[n - 3], 10 * MS);
}

#[tokio::test(start_paused = true)]
async fn stable_for_needs_the_whole_span_with_every_attempt_good() {
    // Up from 1s, refused at 1.2s, up for good from 1.3s: the first span breaks.
    let flapping = script(&[(0, REFUSED), (1000, Up), (1200, REFUSED), (1300, Up)]);
    let policy = with(|p| p.stable_for = S);
    let (ended, took) = go(&[&flapping], LOCAL, &policy).await;
    assert_eq!(ended, "met: ready after connection refused");
    let times = flapping.times();
    let began = *times.iter().find(|t| **t >= 1300 * MS).unwrap();
    // Met by the attempt that starts just as the span is complete, not a moment later.
    assert_eq!(took, began + S);
    assert_eq!(*times.last().unwrap(), began + S);
    // Within the span, attempts come at the schedule's first delay.
    let span: Vec<_> = times.iter().filter(|t| **t >= began).collect();
    assert!(
        span.windows(2).all(|w| *w[1] - *w[0] <= 10 * MS),
        "{span:?}"
    );
    assert!(span.len() >= 100, "{} attempts in the span", span.len());
}

#[tokio::test(start_paused = true)]
async fn a_deadline_within_the_span_says_how_long_it_held() {
    let up = up_from(1000);
    let policy = with(|p| (p.stable_for, p.deadline) = (2500 * MS, Some(3 * S)));
    // Attempts 5-10ms apart: up by 1.01s, so stable for 1.99-2.0s (LOCAL's 100ms gaps made it
    // 1.9s at times).
    let (ended, took) = go(&[&up], steady(10 * MS), &policy).await;
    assert_eq!(ended, "missed: stable for only 2.0s of the 2.5s needed");
    assert_eq!(took, 3 * S);
    // Zero asks for no span: ready at the first success.
    let policy = with(|p| p.stable_for = Duration::ZERO);
    let (ended, took) = go(&[&up_from(1000)], LOCAL, &policy).await;
    assert_eq!(ended, "met: ready after connection refused");
    assert!(took <= 1100 * MS, "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn stable_for_with_invert_waits_for_a_span_of_failures_and_a_threshold_for_both() {
    // Up until 1s, then refused: inverted, the goal is met once refused for 500ms.
    let going = script(&[(0, Up), (1000, REFUSED)]);
    let policy = with(|p| (p.invert, p.stable_for) = (true, 500 * MS));
    let (ended, took) = go(&[&going], LOCAL, &policy).await;
    assert_eq!(ended, "met: ready after still ready");
    let began = *going.times().iter().find(|t| **t >= S).unwrap();
    assert_eq!(took, began + 500 * MS);
    // With a threshold as well, both must hold. Attempts 400ms apart: the fourth success
    // comes at 1.2s, after 500ms of span; three successes by 800ms, short of a 1s span, whose
    // last attempt comes when the span is complete.
    for (stable_for, threshold, met_at) in [(500, 4, 1200), (1000, 3, 1000), (500, 1, 500)] {
        let policy = with(|p| (p.stable_for, p.success_threshold) = (stable_for * MS, threshold));
        let (ended, took) = go(&[&up_from(0)], steady(400 * MS), &policy).await;
        assert_eq!((ended.as_str(), took), ("met: ready", met_at * MS));
    }
}

#[tokio::test(start_paused = true)]
async fn successes_between_failures_never_reach_the_threshold() {
    // Up, refused, up, refused…: many successes, never two in a row.
    let flapping = script(&[(0, Flaps("connection refused"))]);
    let policy = with(|p| (p.success_threshold, p.deadline) = (2, Some(2 * S)));
    let ended = go(&[&flapping], LOCAL, &policy).await;
    assert_eq!(ended, ("missed: connection refused".into(), 2 * S));
    let attempts = flapping.times().len();
    assert!(attempts >= 20, "{attempts} attempts: too few to tell");

    // Each success is worth one: a threshold of one is met by the first.
    let policy = with(|p| p.success_threshold = 1);
    let ended = go(
        &[&script(&[(0, Flaps("connection refused"))])],
        LOCAL,
        &policy,
    )
    .await;
    assert_eq!(ended, ("met: ready".into(), Duration::ZERO));
}

#[tokio::test(start_paused = true)]
async fn all_waits_for_the_slowest_and_any_for_the_fastest() {
    let (ended, took) = go(&[&up_from(500), &up_from(3000)], LOCAL, &defaults()).await;
    let refused = "ready after connection refused";
    assert_eq!(ended, format!("met: {refused}; {refused}"));
    assert!(took >= 3 * S);

    let any = with(|p| p.any = true);
    let (ended, took) = go(&[&up_from(500), &up_from(3000)], LOCAL, &any).await;
    assert_eq!(ended, format!("met: {refused}; connection refused"));
    assert!(took < 700 * MS, "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn all_fails_at_the_deadline_if_one_never_comes_up() {
    let ended = go(&[&up_from(0), &down()], LOCAL, &within(2 * S)).await;
    assert_eq!(ended, ("missed: ready; connection refused".into(), 2 * S));
}

#[tokio::test(start_paused = true)]
async fn invert_waits_until_not_ready() {
    let going = script(&[(0, Up), (1000, REFUSED)]);
    let (ended, took) = go(&[&going], LOCAL, &with(|p| p.invert = true)).await;
    assert_eq!(ended, "met: ready after still ready");
    assert!(took >= S && took <= 1100 * MS, "{took:?}");

    let invert = with(|p| (p.invert, p.deadline) = (true, Some(S)));
    let (ended, _) = go(&[&up_from(0)], LOCAL, &invert).await;
    assert_eq!(ended, "missed: still ready");
}

#[tokio::test(start_paused = true)]
async fn max_attempts_makes_a_single_probe() {
    let down = down();
    let probe = with(|p| p.max_attempts = Some(1));
    let ended = go(&[&down, &up_from(0)], LOCAL, &probe).await;
    let missed = "missed: connection refused; ready";
    assert_eq!(ended, (missed.into(), Duration::ZERO));
    assert_eq!(down.times().len(), 1);

    let any = Policy { any: true, ..probe };
    let (ended, _) = go(&[&down, &up_from(0)], LOCAL, &any).await;
    assert_eq!(ended, "met: connection refused; ready");
}

#[tokio::test(start_paused = true)]
async fn no_deadline_waits_as_long_as_it_takes() {
    let forever = with(|p| p.deadline = None);
    let (ended, took) = go(&[&up_from(3_600_000)], LOCAL, &forever).await;
    assert_eq!(ended, "met: ready after connection refused");
    assert!(took >= 3600 * S, "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn a_watch_event_triggers_an_immediate_attempt() {
    let watched = Scripted {
        fires_at: Some(1234 * MS),
        ..script(&[(0, Down("no such file")), (1234, Up)])
    };
    let ended = go(&[&watched], steady(10 * S), &defaults()).await;
    assert_eq!(ended, ("met: ready after no such file".into(), 1234 * MS));
    assert_eq!(watched.times().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_single_attempt_sets_up_no_watch() {
    let watched = up_from(1000);
    let (ended, _) = go(&[&watched], LOCAL, &with(|p| p.max_attempts = Some(1))).await;
    assert_eq!(ended, "missed: connection refused");
    assert_eq!(watched.watches.load(Ordering::SeqCst), 0);
    go(&[&watched], LOCAL, &with(|p| p.max_attempts = Some(2))).await;
    assert_eq!(watched.watches.load(Ordering::SeqCst), 1);
}

/// A Job that runs, then fails for good from `ms`.
fn fails_at(ms: u32) -> Scripted {
    script(&[(0, Down("job running")), (ms, Never("job failed"))])
}

/// A Job that runs, then is ready from `ms`.
fn done_at(ms: u32) -> Scripted {
    script(&[(0, Down("job running")), (ms, Up)])
}

#[tokio::test(start_paused = true)]
async fn never_ready_ends_the_wait_at_once_and_stops_attempting() {
    let failing = fails_at(300);
    let (ended, took) = go(&[&failing, &done_at(5000)], LOCAL, &defaults()).await;
    assert_eq!(ended, "missed: job failed; job running");
    assert!(took >= 300 * MS && took <= 400 * MS, "{took:?}");
    let attempts = failing.times().len();
    tokio::time::sleep(S).await;
    assert_eq!(failing.times().len(), attempts);
}

#[tokio::test(start_paused = true)]
async fn never_ready_with_any_leaves_the_others_to_make_it() {
    let failing = fails_at(0);
    let any = with(|p| p.any = true);
    let (ended, took) = go(&[&failing, &done_at(2000)], LOCAL, &any).await;
    assert_eq!(ended, "met: job failed; ready after job running");
    assert!(took >= 2 * S);
    assert_eq!(failing.times().len(), 1);

    // With every target out of the running, the wait ends then, not at the deadline.
    let (ended, took) = go(&[&fails_at(0), &fails_at(1000)], LOCAL, &any).await;
    assert_eq!(ended, "missed: job failed; job failed");
    assert!(took >= S && took <= 1100 * MS, "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn never_ready_is_what_invert_waits_for_even_below_the_threshold() {
    let policy = with(|p| (p.invert, p.success_threshold) = (true, 5));
    let ended = go(&[&fails_at(0)], LOCAL, &policy).await;
    assert_eq!(ended, ("met: ready".into(), Duration::ZERO));
}

#[tokio::test(start_paused = true)]
async fn the_remote_schedule_backs_off_and_the_local_one_keeps_polling() {
    // Attempts per second in `[from, to)` seconds.
    let rate = |times: &[Duration], from: u32, to: u32| {
        let window = from * S..to * S;
        times.iter().filter(|t| window.contains(t)).count() as f64 / f64::from(to - from)
    };
    for _ in 0..20 {
        // Network peers: every 50–100 ms through the steady retries (the 15th by 1.5 s), then
        // backing off as the API server's and commands' schedule does from the first.
        for (schedule, first_seconds, expected) in [(REMOTE, 2, 18..=23), (GENTLE, 1, 4..=12)] {
            let remote = down();
            go(&[&remote], schedule, &within(60 * S)).await;
            let remote = remote.times();
            let early = remote.iter().filter(|t| **t < first_seconds * S).count();
            assert!(expected.contains(&early), "{}: {remote:?}", schedule.label);
            assert!(rate(&remote, 5, 30) <= 1.0, "{remote:?}");
            assert!(rate(&remote, 30, 60) <= 0.5, "{remote:?}");
            // Never slower than its cap: the next attempt comes within 5 s.
            assert!(remote.windows(2).all(|w| w[1] - w[0] <= 5 * S));
        }
        let local = down();
        go(&[&local], LOCAL, &within(10 * S)).await;
        let local = local.times();
        assert!(rate(&local, 1, 10) >= 10.0, "{} attempts", local.len());
        assert!(local.windows(2).all(|w| w[1] - w[0] <= 100 * MS));
    }
}

#[tokio::test(start_paused = true)]
async fn a_network_peer_up_in_the_steady_retries_is_seen_within_one_first_delay() {
    // Up at 0.7 s: the 15 steady retries last at least 0.75 s, so one is at most 100 ms away.
    // Without them the base has grown to 0.2–0.3 s by then.
    let (mut quick, mut slow) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..20 {
        for (schedule, total) in [(REMOTE, &mut quick), (GENTLE, &mut slow)] {
            let up = up_from(700);
            let (ended, took) = go(&[&up], schedule, &defaults()).await;
            assert_eq!(ended, "met: ready after connection refused");
            let seen = took - 700 * MS;
            if schedule.steady > 0 {
                assert!(seen <= 100 * MS, "seen {seen:?} after: {:?}", up.times());
            }
            *total += seen;
        }
    }
    // Means of ~40 ms and ~130 ms (of twenty runs: at most 61 ms and at least 71 ms in 5,000
    // simulated).
    assert!(quick / 20 <= 65 * MS, "mean {:?}", quick / 20);
    assert!(slow / 20 >= 67 * MS, "mean {:?}", slow / 20);
}

#[tokio::test(start_paused = true)]
async fn a_requested_wait_spaces_attempts_but_never_stretches_the_deadline() {
    let three = busy(3 * S);
    let ended = go(&[&three], LOCAL, &defaults()).await;
    assert_eq!(ended, ("missed: status 503".into(), 10 * S));
    assert_eq!(three.times(), [Duration::ZERO, 3 * S, 6 * S, 9 * S]);

    // A wait past the deadline: the deadline ends the run on time.
    let endless = busy(Duration::from_secs(u64::MAX));
    let ended = go(&[&endless], LOCAL, &within(2 * S)).await;
    assert_eq!(ended, ("missed: status 503".into(), 2 * S));
    assert_eq!(endless.times().len(), 1);

    // A wait shorter than the schedule's own delay changes nothing.
    let short = busy(MS);
    go(&[&short], steady(S), &within(2500 * MS)).await;
    let attempts = short.times().len();
    assert!((2..=5).contains(&attempts), "{attempts}");
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_without_time_left() {
    // The target asks to come back just when the deadline comes, or half a millisecond
    // before: no attempt starts then, and the reason stays the last real one.
    for deadline in [1000 * MS, Duration::from_micros(1_000_500)] {
        let second = busy(S);
        let (ended, _) = go(&[&second], LOCAL, &within(deadline)).await;
        assert_eq!(ended, "missed: status 503");
        assert_eq!(second.times(), [Duration::ZERO], "{deadline:?}");
    }
}
