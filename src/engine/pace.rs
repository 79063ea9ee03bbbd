//! Retry sleeps that wake the process once instead of twice.
//!
//! tokio's timer wheel counts whole milliseconds from the moment the runtime was built and
//! keeps a deadline that lies beyond the current 64 ms block in a coarse slot; the thread
//! wakes at that slot's start only to move the timer to a finer slot, then again at the
//! deadline. For a target that stays down, that idle wake-up costs about as much CPU as the
//! attempt itself (`bench/`). A deadline that falls exactly on a slot boundary is fired by the
//! first wake-up, so a retry delay of 32 ms or more is moved to a boundary next to it (never by
//! more than half the delay), picked at random so that the delays keep their mean and their
//! spread. Without a recorded origin (unit tests under a paused clock) delays are used as
//! they are.

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

/// One of the two slot boundaries around `now + delay`, the nearer one the likelier (so that
/// on average the delay is what the backoff drew), as long as it is within half the delay of
/// it; `None` when the delay is to be slept as it is.
fn aligned(delay: Duration) -> Option<Instant> {
    let &origin = ORIGIN.get()?;
    if delay < SLOT / 2 {
        return None;
    }
    let exact = Instant::now().checked_add(delay)?;
    let slot = SLOT.as_nanos();
    let since = exact.checked_duration_since(origin)?.as_nanos();
    let below = u32::try_from(since / slot).ok()?;
    let before = origin
        .checked_add(SLOT.checked_mul(below)?)?
        .checked_sub(EARLY)?;
    let after = before.checked_add(SLOT)?;
    let fits = |at: Instant| at >= exact - delay / 2 && at <= exact + delay / 2;
    let (likely, other) = if fastrand::u128(0..slot) < since % slot {
        (after, before)
    } else {
        (before, after)
    };
    [likely, other].into_iter().find(|&at| fits(at))
}
