//! Retry sleeps that wake the process once instead of twice.
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

use std::sync::OnceLock;
use std::time::Duration;

use tokio::time::{sleep_until, Instant, Sleep};

/// One slot of the wheel's first coarse level: 64 ticks of 1 ms.
const SLOT: Duration = Duration::from_millis(64);

/// tokio rounds a deadline up to the next whole millisecond; aiming half a millisecond early
/// lands on the boundary itself for an origin recorded up to half a millisecond late.
const EARLY: Duration = Duration::from_micros(500);

/// When the runtime's clock started, as seen just after building the runtime.
static ORIGIN: OnceLock<Instant> = OnceLock::new();

/// Records the runtime clock's origin; called once, right after the runtime is built.
pub fn mark_origin() {
    let _ = ORIGIN.set(Instant::now());
}

/// Sleeps for a retry `delay`, ending on a slot boundary where that saves a wake-up.
pub fn sleep(delay: Duration) -> Sleep {
    match aligned(delay) {
        Some(at) => sleep_until(at),
        None => tokio::time::sleep(delay),
    }
}

/// A boundary to wake at for `delay` from now, or `None` to sleep the delay as it is.
fn aligned(delay: Duration) -> Option<Instant> {
    let &origin = ORIGIN.get()?;
    let now = Instant::now();
    boundary_near(origin, now, delay, fastrand::f64())
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
}
