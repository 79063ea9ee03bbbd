//! The retry loop under tokio's paused clock: every timing here is exact and instant.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::*;

const MS: Duration = Duration::from_millis(1);

/// A scripted condition: ready from `ready_at` on (and, if set, unready again from `gone_at`),
/// each attempt taking `takes`; it records when each attempt started.
#[derive(Clone)]
struct Scripted {
    start: Instant,
    ready_at: Option<Duration>,
    gone_at: Option<Duration>,
    takes: Duration,
    attempts: Arc<Mutex<Vec<Duration>>>,
}

impl Scripted {
    fn new(ready_at: Option<Duration>) -> Self {
        Scripted {
            start: Instant::now(),
            ready_at,
            gone_at: None,
            takes: Duration::ZERO,
            attempts: Arc::default(),
        }
    }

    fn attempt_times(&self) -> Vec<Duration> {
        self.attempts.lock().unwrap().clone()
    }
}

impl Condition for Scripted {
    type Watch = NoWatch;
    type Failure = String;

    fn watch(&self) -> NoWatch {
        NoWatch
    }

    async fn attempt(&self) -> Result<(), Miss<String>> {
        let at = self.start.elapsed();
        self.attempts.lock().unwrap().push(at);
        tokio::time::sleep(self.takes).await;
        let up = self.ready_at.is_some_and(|r| at >= r) && !self.gone_at.is_some_and(|g| at >= g);
        if up {
            Ok(())
        } else {
            Err(Miss::NotYet("connection refused".into()))
        }
    }
}

fn defaults() -> Policy {
    Policy {
        deadline: Some(Duration::from_secs(10)),
        attempt_timeout: Duration::from_secs(1),
        success_threshold: 1,
        any: false,
        invert: false,
        max_attempts: None,
    }
}

/// Today's local schedule: 10 ms doubling to 100 ms.
const LOCAL: Schedule = Schedule {
    label: "local",
    first: Duration::from_millis(10),
    max: Duration::from_millis(100),
    growth: (2, 1),
};

fn local(n: usize) -> Vec<Schedule> {
    vec![LOCAL; n]
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("target-{i}")).collect()
}

#[tokio::test(start_paused = true)]
async fn ready_at_once_takes_one_attempt() {
    let condition = Scripted::new(Some(Duration::ZERO));
    let report = run(vec![condition.clone()], &names(1), &local(1), &defaults()).await;
    assert!(report.ready);
    assert_eq!(condition.attempt_times(), vec![Duration::ZERO]);
    assert_eq!(report.targets[0].reason(), None);
}

#[tokio::test(start_paused = true)]
async fn retries_follow_the_jittered_exponential_backoff() {
    let condition = Scripted::new(Some(Duration::from_secs(2)));
    let started = Instant::now();
    let report = run(vec![condition.clone()], &names(1), &local(1), &defaults()).await;
    assert!(report.ready);
    let times = condition.attempt_times();
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
    let noticed = started.elapsed();
    assert!(
        noticed >= Duration::from_secs(2) && noticed <= Duration::from_millis(2100),
        "{noticed:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_is_exact_even_when_attempts_hang() {
    let mut condition = Scripted::new(None);
    condition.takes = Duration::from_secs(3600);
    let policy = Policy {
        deadline: Some(Duration::from_millis(2500)),
        ..defaults()
    };
    let started = Instant::now();
    let report = run(vec![condition.clone()], &names(1), &local(1), &policy).await;
    assert!(!report.ready);
    assert_eq!(started.elapsed(), Duration::from_millis(2500));
    // Attempts are cut at the attempt timeout (1s), then retried.
    let times = condition.attempt_times();
    assert_eq!(times.len(), 3, "{times:?}");
    assert!(times[1] >= Duration::from_millis(1005) && times[1] <= Duration::from_millis(1010));
    // The attempt in flight at the deadline is cut short: the reason stays the last one that
    // ran its full attempt timeout.
    assert_eq!(
        report.targets[0].reason().as_deref(),
        Some("no answer within 1.0s")
    );
}

#[tokio::test(start_paused = true)]
async fn attempt_timeout_is_clipped_to_the_deadline() {
    let mut condition = Scripted::new(None);
    condition.takes = Duration::from_secs(3600);
    let policy = Policy {
        deadline: Some(Duration::from_millis(300)),
        attempt_timeout: Duration::from_secs(5),
        ..defaults()
    };
    let started = Instant::now();
    let report = run(vec![condition.clone()], &names(1), &local(1), &policy).await;
    assert!(!report.ready);
    assert_eq!(started.elapsed(), Duration::from_millis(300));
    assert_eq!(
        report.targets[0].reason().as_deref(),
        Some("no answer within 300ms")
    );
}

#[tokio::test(start_paused = true)]
async fn a_concrete_failure_outlives_the_attempt_cut_by_the_deadline() {
    // Every attempt fails after 100ms; the one in flight at the deadline has no verdict yet.
    let mut condition = Scripted::new(None);
    condition.takes = 100 * MS;
    let policy = Policy {
        deadline: Some(Duration::from_millis(1050)),
        ..defaults()
    };
    let schedule = Schedule {
        max: 10 * MS,
        ..LOCAL
    };
    let report = run(vec![condition.clone()], &names(1), &[schedule], &policy).await;
    let times = condition.attempt_times();
    assert!(
        *times.last().unwrap() > Duration::from_millis(950),
        "{times:?}"
    );
    assert_eq!(
        report.targets[0].reason().as_deref(),
        Some("connection refused")
    );
}

/// Fails at once with `no such host web` on the attempts listed in `fails_at_once`; the others
/// wait until their attempt ends and then say so, as a DNS lookup that stops waiting does.
struct StopsAtTheEnd {
    fails_at_once: &'static [u32],
    attempts: AtomicU32,
}

impl Condition for StopsAtTheEnd {
    type Watch = NoWatch;
    type Failure = String;

    fn watch(&self) -> NoWatch {
        NoWatch
    }

    async fn attempt(&self) -> Result<(), Miss<String>> {
        let attempt = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        if !self.fails_at_once.contains(&attempt) {
            tokio::time::sleep_until(attempt_end().expect("in an attempt")).await;
            return Err(Miss::NotYet("DNS: no answer for web in time".into()));
        }
        Err(Miss::NotYet("no such host web".into()))
    }
}

#[tokio::test(start_paused = true)]
async fn a_check_that_stops_waiting_at_the_deadline_keeps_the_earlier_reason() {
    let policy = Policy {
        deadline: Some(Duration::from_millis(500)),
        ..defaults()
    };
    for (fails_at_once, reason) in [
        // The first attempt completes; the second waits until the deadline.
        (&[1][..], "no such host web"),
        // No attempt completed: what the one in flight was waiting for at the deadline.
        (&[][..], "DNS: no answer for web in time"),
    ] {
        let condition = StopsAtTheEnd {
            fails_at_once,
            attempts: AtomicU32::new(0),
        };
        let started = Instant::now();
        let report = run(vec![condition], &names(1), &local(1), &policy).await;
        assert!(!report.ready);
        assert_eq!(started.elapsed(), Duration::from_millis(500));
        assert_eq!(report.targets[0].reason().as_deref(), Some(reason));
    }
}

#[tokio::test(start_paused = true)]
async fn a_reason_at_its_own_attempt_timeout_still_replaces_an_earlier_one() {
    // Attempts end at their own 100ms timeout, not the deadline: that is their real reason.
    let policy = Policy {
        deadline: Some(Duration::from_millis(1000)),
        attempt_timeout: 100 * MS,
        ..defaults()
    };
    let condition = StopsAtTheEnd {
        fails_at_once: &[1],
        attempts: AtomicU32::new(0),
    };
    let report = run(vec![condition], &names(1), &local(1), &policy).await;
    assert_eq!(
        report.targets[0].reason().as_deref(),
        Some("DNS: no answer for web in time")
    );
}

#[tokio::test(start_paused = true)]
async fn success_threshold_needs_consecutive_successes() {
    // Up from 1s, down again from 1.015s, up for good from 1.5s: the first streak breaks.
    let mut flapping = Scripted::new(Some(Duration::from_secs(1)));
    flapping.gone_at = Some(Duration::from_millis(1015));
    let flapping = FlapThenUp {
        inner: flapping,
        up_again: Duration::from_millis(1500),
    };
    let attempts = flapping.inner.attempts.clone();
    let policy = Policy {
        success_threshold: 3,
        ..defaults()
    };
    let started = Instant::now();
    let report = run(vec![flapping], &names(1), &local(1), &policy).await;
    assert!(report.ready);
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(1500 + 20), "{elapsed:?}");
    assert!(
        elapsed <= Duration::from_millis(1500 + 100 + 20),
        "{elapsed:?}"
    );
    // The last three attempts are `interval` apart.
    let times = attempts.lock().unwrap().clone();
    let n = times.len();
    assert_eq!(times[n - 1] - times[n - 2], 10 * MS);
    assert_eq!(times[n - 2] - times[n - 3], 10 * MS);
}

/// Wraps [`Scripted`]: after `gone_at`, ready again from `up_again`.
struct FlapThenUp {
    inner: Scripted,
    up_again: Duration,
}

impl Condition for FlapThenUp {
    type Watch = NoWatch;
    type Failure = String;

    fn watch(&self) -> NoWatch {
        NoWatch
    }

    async fn attempt(&self) -> Result<(), Miss<String>> {
        let at = self.inner.start.elapsed();
        let result = self.inner.attempt().await;
        if at >= self.up_again {
            Ok(())
        } else {
            result
        }
    }
}

#[tokio::test(start_paused = true)]
async fn all_waits_for_the_slowest_and_any_for_the_fastest() {
    let fast = Scripted::new(Some(Duration::from_millis(500)));
    let slow = Scripted::new(Some(Duration::from_secs(3)));
    let started = Instant::now();
    let report = run(
        vec![fast.clone(), slow.clone()],
        &names(2),
        &local(2),
        &defaults(),
    )
    .await;
    assert!(report.ready);
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert!(report.targets.iter().all(|t| t.ready));

    let fast = Scripted::new(Some(Duration::from_millis(500)));
    let slow = Scripted::new(Some(Duration::from_secs(3)));
    let started = Instant::now();
    let policy = Policy {
        any: true,
        ..defaults()
    };
    let report = run(vec![fast, slow], &names(2), &local(2), &policy).await;
    assert!(report.ready);
    assert!(
        started.elapsed() < Duration::from_millis(700),
        "{:?}",
        started.elapsed()
    );
    assert!(report.targets[0].ready && !report.targets[1].ready);
    assert_eq!(
        report.targets[1].reason().as_deref(),
        Some("connection refused")
    );
}

#[tokio::test(start_paused = true)]
async fn all_fails_at_the_deadline_if_one_never_comes_up() {
    let up = Scripted::new(Some(Duration::ZERO));
    let never = Scripted::new(None);
    let started = Instant::now();
    let policy = Policy {
        deadline: Some(Duration::from_secs(2)),
        ..defaults()
    };
    let report = run(vec![up, never], &names(2), &local(2), &policy).await;
    assert!(!report.ready);
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert!(report.targets[0].ready);
    assert!(!report.targets[1].ready);
}

#[tokio::test(start_paused = true)]
async fn invert_waits_until_not_ready() {
    let mut going = Scripted::new(Some(Duration::ZERO));
    going.gone_at = Some(Duration::from_secs(1));
    let started = Instant::now();
    let policy = Policy {
        invert: true,
        ..defaults()
    };
    let report = run(vec![going.clone()], &names(1), &local(1), &policy).await;
    assert!(report.ready);
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_secs(1) && elapsed <= Duration::from_millis(1100),
        "{elapsed:?}"
    );

    let staying = Scripted::new(Some(Duration::ZERO));
    let policy = Policy {
        invert: true,
        deadline: Some(Duration::from_secs(1)),
        ..defaults()
    };
    let report = run(vec![staying], &names(1), &local(1), &policy).await;
    assert!(!report.ready);
    assert_eq!(report.targets[0].reason().as_deref(), Some("still ready"));
}

#[tokio::test(start_paused = true)]
async fn max_attempts_makes_a_single_probe() {
    let down = Scripted::new(None);
    let up = Scripted::new(Some(Duration::ZERO));
    let policy = Policy {
        max_attempts: Some(1),
        ..defaults()
    };
    let started = Instant::now();
    let report = run(
        vec![down.clone(), up.clone()],
        &names(2),
        &local(2),
        &policy,
    )
    .await;
    assert!(!report.ready);
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(down.attempt_times().len(), 1);

    let down = Scripted::new(None);
    let policy = Policy {
        max_attempts: Some(1),
        any: true,
        ..policy
    };
    let report = run(vec![down, up], &names(2), &local(2), &policy).await;
    assert!(report.ready);
}

#[tokio::test(start_paused = true)]
async fn no_deadline_waits_as_long_as_it_takes() {
    let late = Scripted::new(Some(Duration::from_secs(3600)));
    let policy = Policy {
        deadline: None,
        ..defaults()
    };
    let report = run(vec![late], &names(1), &local(1), &policy).await;
    assert!(report.ready);
}

/// A condition whose watch fires once at `fires_at`, when it also becomes ready.
struct Watched {
    ready_at: Duration,
    start: Instant,
    attempts: Arc<AtomicU32>,
    watches: Arc<AtomicU32>,
}

struct FiresAt(Instant);

impl Watch for FiresAt {
    async fn changed(&mut self) {
        tokio::time::sleep_until(self.0).await;
        self.0 += Duration::from_secs(3600);
    }
}

impl Condition for Watched {
    type Watch = FiresAt;
    type Failure = String;

    fn watch(&self) -> FiresAt {
        self.watches.fetch_add(1, Ordering::SeqCst);
        FiresAt(self.start + self.ready_at)
    }

    async fn attempt(&self) -> Result<(), Miss<String>> {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        if self.start.elapsed() >= self.ready_at {
            Ok(())
        } else {
            Err(Miss::NotYet("no such file".into()))
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_watch_event_triggers_an_immediate_attempt() {
    let attempts = Arc::new(AtomicU32::new(0));
    let condition = Watched {
        ready_at: Duration::from_millis(1234),
        start: Instant::now(),
        attempts: attempts.clone(),
        watches: Arc::default(),
    };
    let slow = Schedule {
        first: Duration::from_secs(10),
        max: Duration::from_secs(10),
        ..LOCAL
    };
    let started = Instant::now();
    let report = run(vec![condition], &names(1), &[slow], &defaults()).await;
    assert!(report.ready);
    assert_eq!(started.elapsed(), Duration::from_millis(1234));
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_single_attempt_sets_up_no_watch() {
    let watches = Arc::new(AtomicU32::new(0));
    let condition = |watches: &Arc<AtomicU32>| Watched {
        ready_at: Duration::from_secs(1),
        start: Instant::now(),
        attempts: Arc::default(),
        watches: watches.clone(),
    };
    let probe = Policy {
        max_attempts: Some(1),
        ..defaults()
    };
    let report = run(vec![condition(&watches)], &names(1), &local(1), &probe).await;
    assert!(!report.ready);
    assert_eq!(watches.load(Ordering::SeqCst), 0);
    let twice = Policy {
        max_attempts: Some(2),
        ..defaults()
    };
    run(vec![condition(&watches)], &names(1), &local(1), &twice).await;
    assert_eq!(watches.load(Ordering::SeqCst), 1);
}

/// Not ready until `fails_at`, then never (a Job that fails); or ready from `ready_at`.
#[derive(Clone)]
struct Fate {
    start: Instant,
    fails_at: Option<Duration>,
    ready_at: Option<Duration>,
    attempts: Arc<AtomicU32>,
}

impl Fate {
    fn fails_at(at: Duration) -> Self {
        Fate {
            start: Instant::now(),
            fails_at: Some(at),
            ready_at: None,
            attempts: Arc::default(),
        }
    }

    fn ready_at(at: Duration) -> Self {
        Fate {
            fails_at: None,
            ready_at: Some(at),
            ..Fate::fails_at(Duration::ZERO)
        }
    }

    fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::SeqCst)
    }
}

impl Condition for Fate {
    type Watch = NoWatch;
    type Failure = String;

    fn watch(&self) -> NoWatch {
        NoWatch
    }

    async fn attempt(&self) -> Result<(), Miss<String>> {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        let at = self.start.elapsed();
        if self.fails_at.is_some_and(|f| at >= f) {
            Err(Miss::Never("job failed".into()))
        } else if self.ready_at.is_some_and(|r| at >= r) {
            Ok(())
        } else {
            Err(Miss::NotYet("job running".into()))
        }
    }
}

#[tokio::test(start_paused = true)]
async fn never_ready_ends_the_wait_at_once_and_stops_attempting() {
    let failing = Fate::fails_at(Duration::from_millis(300));
    let slow = Fate::ready_at(Duration::from_secs(5));
    let started = Instant::now();
    let report = run(
        vec![failing.clone(), slow],
        &names(2),
        &local(2),
        &defaults(),
    )
    .await;
    assert!(!report.ready);
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(300) && elapsed <= Duration::from_millis(400),
        "{elapsed:?}"
    );
    assert_eq!(report.targets[0].reason().as_deref(), Some("job failed"));
    assert_eq!(report.targets[1].reason().as_deref(), Some("job running"));
    assert!(!report.targets[1].ready);
    let attempts = failing.attempts();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(failing.attempts(), attempts);
}

#[tokio::test(start_paused = true)]
async fn never_ready_with_any_leaves_the_others_to_make_it() {
    let failing = Fate::fails_at(Duration::ZERO);
    let slow = Fate::ready_at(Duration::from_secs(2));
    let policy = Policy {
        any: true,
        ..defaults()
    };
    let started = Instant::now();
    let report = run(vec![failing.clone(), slow], &names(2), &local(2), &policy).await;
    assert!(report.ready);
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(failing.attempts(), 1);
    assert!(!report.targets[0].ready && report.targets[1].ready);

    // With every target out of the running, the wait ends then, not at the deadline.
    let started = Instant::now();
    let both = vec![
        Fate::fails_at(Duration::ZERO),
        Fate::fails_at(Duration::from_secs(1)),
    ];
    let report = run(both, &names(2), &local(2), &policy).await;
    assert!(!report.ready);
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_secs(1) && elapsed <= Duration::from_millis(1100),
        "{elapsed:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn never_ready_is_what_invert_waits_for_even_below_the_threshold() {
    let policy = Policy {
        invert: true,
        success_threshold: 5,
        ..defaults()
    };
    let started = Instant::now();
    let report = run(
        vec![Fate::fails_at(Duration::ZERO)],
        &names(1),
        &local(1),
        &policy,
    )
    .await;
    assert!(report.ready);
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(report.targets[0].reason(), None);
}

/// Attempt times of a target that stays down, under `schedule`, over `seconds`.
async fn times_down(schedule: Schedule, seconds: u64) -> Vec<Duration> {
    let condition = Scripted::new(None);
    let policy = Policy {
        deadline: Some(Duration::from_secs(seconds)),
        ..defaults()
    };
    run(vec![condition.clone()], &names(1), &[schedule], &policy).await;
    condition.attempt_times()
}

/// Attempts per second in `[from, to)` seconds.
fn rate(times: &[Duration], from: u64, to: u64) -> f64 {
    let window = Duration::from_secs(from)..Duration::from_secs(to);
    times.iter().filter(|t| window.contains(t)).count() as f64 / (to - from) as f64
}

/// The plan's schedule for remote targets (the engine itself knows no plan).
const REMOTE: Schedule = Schedule {
    label: "remote",
    first: Duration::from_millis(100),
    max: Duration::from_secs(5),
    growth: (13, 10),
};

#[tokio::test(start_paused = true)]
async fn the_remote_schedule_backs_off_and_the_local_one_keeps_polling() {
    for _ in 0..20 {
        let remote = times_down(REMOTE, 60).await;
        let first_second = remote
            .iter()
            .filter(|t| **t < Duration::from_secs(1))
            .count();
        assert!((4..=12).contains(&first_second), "{remote:?}");
        assert!(rate(&remote, 5, 30) <= 1.0, "{remote:?}");
        assert!(rate(&remote, 30, 60) <= 0.5, "{remote:?}");
        // Never slower than its cap: the next attempt comes within 5 s.
        assert!(remote
            .windows(2)
            .all(|w| w[1] - w[0] <= Duration::from_secs(5)));
        let local = times_down(LOCAL, 10).await;
        assert!(rate(&local, 1, 10) >= 10.0, "{} attempts", local.len());
        assert!(local.windows(2).all(|w| w[1] - w[0] <= 100 * MS));
    }
}

/// A target that answers "not now, come back in `wait`" (a 503 with `Retry-After`).
#[derive(Clone)]
struct Busy {
    wait: Duration,
    attempts: Arc<Mutex<Vec<Duration>>>,
    start: Instant,
}

impl Condition for Busy {
    type Watch = NoWatch;
    type Failure = String;

    fn watch(&self) -> NoWatch {
        NoWatch
    }

    async fn attempt(&self) -> Result<(), Miss<String>> {
        self.attempts.lock().unwrap().push(self.start.elapsed());
        retry_not_before(self.wait);
        Err(Miss::NotYet("status 503".into()))
    }
}

#[tokio::test(start_paused = true)]
async fn a_requested_wait_spaces_attempts_but_never_stretches_the_deadline() {
    let busy = Busy {
        wait: Duration::from_secs(3),
        attempts: Arc::default(),
        start: Instant::now(),
    };
    let started = Instant::now();
    let report = run(vec![busy.clone()], &names(1), &local(1), &defaults()).await;
    assert_eq!(started.elapsed(), Duration::from_secs(10));
    assert_eq!(report.targets[0].reason().as_deref(), Some("status 503"));
    let seconds = |s| Duration::from_secs(s);
    assert_eq!(
        *busy.attempts.lock().unwrap(),
        [seconds(0), seconds(3), seconds(6), seconds(9)]
    );

    // A wait past the deadline: the deadline ends the run on time.
    let busy = Busy {
        wait: Duration::from_secs(u64::MAX),
        attempts: Arc::default(),
        start: Instant::now(),
    };
    let policy = Policy {
        deadline: Some(Duration::from_secs(2)),
        ..defaults()
    };
    let started = Instant::now();
    run(vec![busy.clone()], &names(1), &local(1), &policy).await;
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert_eq!(busy.attempts.lock().unwrap().len(), 1);

    // A wait shorter than the schedule's own delay changes nothing.
    let busy = Busy {
        wait: MS,
        attempts: Arc::default(),
        start: Instant::now(),
    };
    let slow = Schedule {
        first: Duration::from_secs(1),
        max: Duration::from_secs(1),
        ..LOCAL
    };
    let policy = Policy {
        deadline: Some(Duration::from_millis(2500)),
        ..defaults()
    };
    run(vec![busy.clone()], &names(1), &[slow], &policy).await;
    let attempts = busy.attempts.lock().unwrap().len();
    assert!((2..=5).contains(&attempts), "{attempts}");
}

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_without_time_left() {
    // The target asks to come back just when the deadline comes, or half a millisecond
    // before: no attempt starts then, and the reason stays the last real one.
    for deadline in [
        Duration::from_millis(1000),
        Duration::from_micros(1_000_500),
    ] {
        let busy = Busy {
            wait: Duration::from_secs(1),
            attempts: Arc::default(),
            start: Instant::now(),
        };
        let policy = Policy {
            deadline: Some(deadline),
            ..defaults()
        };
        let report = run(vec![busy.clone()], &names(1), &local(1), &policy).await;
        assert_eq!(
            *busy.attempts.lock().unwrap(),
            [Duration::ZERO],
            "{deadline:?}"
        );
        assert_eq!(report.targets[0].reason().as_deref(), Some("status 503"));
    }
}
