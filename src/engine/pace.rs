//! Retry sleeps that wake the process once per retry, and only when the retry is due.
//!
//! tokio's timer wheel counts whole milliseconds from the moment the runtime was built and
//! keeps a deadline that lies beyond the current 64 ms block in a coarse slot; the thread
//! wakes at that slot's start only to move the timer to a finer slot, then again at the
//! deadline. For a target that stays down, that idle wake-up is a fifth to a quarter of the
//! CPU a retry costs (`bench/`). A deadline that falls exactly on a slot boundary is fired by the
//! first wake-up, so a retry delay of 32 ms or more is moved to a boundary next to it (never by
//! more than half the delay), picked at random so that the delays keep their mean and their
//! spread. Processes started at different moments have their boundaries in different places,
//! so pods started together still do not retry in lock-step. Without a recorded origin (unit
//! tests under a paused clock) delays are used as they are.
//!
//! tokio also wakes its own driver (an eventfd write, and a turn of the runtime that finds
//! nothing to do) whenever a timer is armed earlier than every timer it already holds: which
//! is what a retry sleep armed just after the previous one fired always is. So [`Pacer`] arms
//! the sleep for the retry after next while it still holds the one for the next retry, and
//! when that retry fails in time, sleeps on the timer already armed.

use std::pin::Pin;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::time::{sleep_until, Instant, Sleep};

/// One slot of the wheel's first coarse level: 64 ticks of 1 ms.
const SLOT: Duration = Duration::from_millis(64);

/// tokio rounds a deadline up to the next whole millisecond; aiming half a millisecond early
/// lands on the boundary itself for an origin recorded up to half a millisecond late.
const EARLY: Duration = Duration::from_micros(500);

/// How long after its sleep ended an attempt may end and still have its retry counted from
/// the sleep's end rather than its own (so the timer armed in advance serves): the wake-up's
/// rounding to a whole millisecond and a loopback attempt, with room for a busy machine.
const SLACK: Duration = Duration::from_millis(5);

/// When the runtime's clock started, as seen just after building the runtime.
static ORIGIN: OnceLock<Instant> = OnceLock::new();

/// Records the runtime clock's origin; called once, right after the runtime is built.
pub(super) fn mark_origin() {
    let _ = ORIGIN.set(Instant::now());
}

/// When to wake for a retry `delay` counted from `from`: on a slot boundary where that saves a
/// wake-up, else `from + delay`.
fn wake_at(from: Instant, delay: Duration) -> Instant {
    let aligned = ORIGIN
        .get()
        .and_then(|&origin| boundary_near(origin, from, delay, fastrand::f64()));
    aligned.unwrap_or_else(|| from.checked_add(delay).unwrap_or(from + FAR))
}

/// Far enough to be never, near enough for any clock to represent.
const FAR: Duration = Duration::from_secs(86400 * 365 * 30);

/// The retry sleeps of one target: two timers, one slept on, the other armed a retry ahead.
pub struct Pacer {
    /// The two timers; `sleeps[spare]` is the one armed ahead, when `ahead` says so.
    sleeps: [Pin<Box<Sleep>>; 2],
    /// Index of the timer armed ahead.
    spare: usize,
    /// What the spare timer was armed for, if it is armed.
    ahead: Option<Ahead>,
}

/// The retry a spare timer was armed for.
#[derive(Debug, Clone, Copy)]
struct Ahead {
    /// The delay it stands for.
    delay: Duration,
    /// Where that delay was counted from: the end of the sleep before it.
    from: Instant,
}

impl Default for Pacer {
    fn default() -> Self {
        Pacer::new()
    }
}

impl Pacer {
    /// Two idle timers.
    pub fn new() -> Self {
        let idle = || Box::pin(sleep_until(Instant::now() + FAR));
        Pacer {
            sleeps: [idle(), idle()],
            spare: 1,
            ahead: None,
        }
    }

    /// The sleep before the next attempt, `delay` from now, with the timer for the one after
    /// it armed `following` later (what the backoff will draw if that attempt fails too).
    /// The sleep returned ends on its own; dropping it unawaited (a watch that fires first)
    /// only leaves its timer to run out idle.
    pub fn sleep(&mut self, delay: Duration, following: Duration) -> Pin<&mut Sleep> {
        let now = Instant::now();
        let in_time = self.ahead.is_some_and(|ahead| {
            ahead.delay == delay && now >= ahead.from && now - ahead.from <= SLACK
        });
        let current = if in_time {
            self.spare
        } else {
            let current = 1 - self.spare;
            arm(&mut self.sleeps[current], wake_at(now, delay));
            current
        };
        let from = self.sleeps[current].deadline();
        self.spare = 1 - current;
        arm(&mut self.sleeps[self.spare], wake_at(from, following));
        self.ahead = Some(Ahead {
            delay: following,
            from,
        });
        self.sleeps[current].as_mut()
    }
}

/// Arms `sleep` for `at` now, in tokio's wheel at `at` itself: a fresh timer, since moving an
/// armed one later leaves it where it was, to wake the thread there for nothing.
fn arm(sleep: &mut Pin<Box<Sleep>>, at: Instant) {
    sleep.set(sleep_until(at));
    sleep.as_mut().reset(at);
}

/// One of the two slot boundaries around `now + delay`, the nearer one the likelier (`coin` in
/// [0, 1) picks, so that on average the delay is what the backoff drew), as long as it is
/// within half the delay of `now + delay`; `None` for short delays and when neither is.
fn boundary_near(origin: Instant, now: Instant, delay: Duration, coin: f64) -> Option<Instant> {
    if delay < SLOT / 2 {
        return None;
    }
    let exact = now.checked_add(delay)?;
    let since = exact.checked_duration_since(origin)?;
    let slot = SLOT.as_nanos();
    let below = u32::try_from(since.as_nanos() / slot).ok()?;
    let before = origin
        .checked_add(SLOT.checked_mul(below)?)?
        .checked_sub(EARLY)?;
    let after = before.checked_add(SLOT)?;
    let past = (since.as_nanos() % slot) as f64 / slot as f64;
    let (likely, other) = if coin < past {
        (after, before)
    } else {
        (before, after)
    };
    let fits = |at: Instant| at >= exact - delay / 2 && at <= exact + delay / 2;
    [likely, other].into_iter().find(|&at| fits(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn on_boundary(origin: Instant, at: Instant) -> bool {
        ((at + EARLY) - origin).as_nanos() % SLOT.as_nanos() == 0
    }

    #[test]
    fn long_delays_end_on_a_boundary_within_half_the_delay() {
        let origin = Instant::now();
        for start in 0..200u64 {
            let now = origin + Duration::from_micros(start * 7013);
            for delay in [40, 50, 64, 75, 100, 250, 1000] {
                let delay = Duration::from_millis(delay);
                for coin in [0.0, 0.3, 0.7, 0.999] {
                    let Some(at) = boundary_near(origin, now, delay, coin) else {
                        assert!(delay < 64 * MS, "{delay:?} from {now:?} was not aligned");
                        continue;
                    };
                    assert!(on_boundary(origin, at), "{at:?} is not on a boundary");
                    let slept = at - now;
                    assert!(
                        slept >= delay / 2 && slept <= delay + delay / 2,
                        "{delay:?} became {slept:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn short_delays_and_unrepresentable_ones_are_left_alone() {
        let origin = Instant::now();
        assert_eq!(boundary_near(origin, origin, 31 * MS, 0.5), None);
        assert_eq!(boundary_near(origin, origin, Duration::MAX, 0.5), None);
    }

    #[test]
    fn the_mean_delay_is_kept() {
        let origin = Instant::now();
        let mut rng = fastrand::Rng::with_seed(7);
        let (mut drawn, mut slept) = (Duration::ZERO, Duration::ZERO);
        let mut now = origin + 3 * MS;
        for _ in 0..5000 {
            let delay = Duration::from_millis(50 + rng.u64(0..=50));
            let at = boundary_near(origin, now, delay, rng.f64()).unwrap_or(now + delay);
            drawn += delay;
            slept += at - now;
            now = at + Duration::from_micros(rng.u64(0..400));
        }
        let ratio = slept.as_secs_f64() / drawn.as_secs_f64();
        assert!(
            (0.95..1.05).contains(&ratio),
            "slept {ratio:.3} of what was drawn"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_in_time_sleeps_on_the_timer_armed_ahead() {
        let mut pacer = Pacer::new();
        let start = Instant::now();
        let first = pacer.sleep(10 * MS, 20 * MS);
        assert_eq!(first.deadline(), start + 10 * MS);
        first.await;
        // The attempt took no time: the armed timer serves, counted from the sleep's end.
        tokio::time::advance(MS).await;
        let second = pacer.sleep(20 * MS, 40 * MS);
        assert_eq!(second.deadline(), start + 30 * MS);
        second.await;
        assert_eq!(Instant::now(), start + 30 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_attempt_or_another_delay_counts_from_now() {
        let mut pacer = Pacer::new();
        pacer.sleep(10 * MS, 20 * MS).await;
        tokio::time::advance(SLACK + MS).await;
        let now = Instant::now();
        let late = pacer.sleep(20 * MS, 40 * MS);
        assert_eq!(late.deadline(), now + 20 * MS);
        late.await;
        // After a success the delay is the first one again, not the one armed for.
        let now = Instant::now();
        let other = pacer.sleep(10 * MS, 15 * MS);
        assert_eq!(other.deadline(), now + 10 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn a_sleep_cut_short_is_not_counted_from() {
        let mut pacer = Pacer::new();
        let start = Instant::now();
        // A watch fired before this sleep ended: it is dropped unawaited.
        assert!(!pacer.sleep(50 * MS, 80 * MS).is_elapsed());
        tokio::time::advance(5 * MS).await;
        let next = pacer.sleep(80 * MS, 100 * MS);
        assert_eq!(next.deadline(), start + 85 * MS);
        next.await;
        assert_eq!(Instant::now(), start + 85 * MS);
    }
}
