//! The delay between attempts: exponential growth from `--interval` to `--max-interval`, with
//! jitter so that many pods started together do not retry in lock-step.

use std::time::Duration;

/// Yields the successive retry delays for one target.
#[derive(Debug)]
pub struct Backoff {
    /// The un-jittered next delay.
    base: Duration,
    /// The first delay, restored by [`Backoff::reset`].
    first: Duration,
    /// The cap on `base`.
    max: Duration,
    /// Source of jitter; seeded per target.
    rng: fastrand::Rng,
}

impl Backoff {
    /// A backoff starting at `first` and doubling up to `max` (`max` is raised to `first` if lower).
    pub fn new(first: Duration, max: Duration, seed: u64) -> Self {
        Backoff {
            base: first,
            first,
            max: max.max(first),
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// The next delay: uniform in `[base/2, base]`, after which `base` doubles up to the cap.
    pub fn next_delay(&mut self) -> Duration {
        let delay = jittered(self.base, &mut self.rng);
        self.base = self.base.saturating_mul(2).min(self.max);
        delay
    }

    /// Starts again from the first delay (after a success).
    pub fn reset(&mut self) {
        self.base = self.first;
    }
}

/// A delay uniform in `[base/2, base]`.
fn jittered(base: Duration, rng: &mut fastrand::Rng) -> Duration {
    let half = base / 2;
    let spread = (base - half).as_nanos() as u64;
    half + Duration::from_nanos(rng.u64(0..=spread))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn grows_exponentially_within_jitter_bounds_up_to_the_cap() {
        for seed in 0..200 {
            let mut backoff = Backoff::new(10 * MS, 100 * MS, seed);
            let bases = [10, 20, 40, 80, 100, 100, 100];
            for base in bases {
                let delay = backoff.next_delay();
                assert!(
                    delay >= base * MS / 2 && delay <= base * MS,
                    "seed {seed}: {delay:?} for base {base}ms"
                );
            }
        }
    }

    #[test]
    fn jitter_spreads_delays() {
        let delays: Vec<_> = (0..50)
            .map(|seed| Backoff::new(100 * MS, 100 * MS, seed).next_delay())
            .collect();
        let min = delays.iter().min().unwrap();
        let max = delays.iter().max().unwrap();
        assert!(*max - *min > 25 * MS, "jitter too narrow: {min:?}..{max:?}");
    }

    #[test]
    fn reset_and_degenerate_settings() {
        let mut backoff = Backoff::new(10 * MS, MS, 1);
        assert!(backoff.next_delay() <= 10 * MS);
        assert!(
            backoff.next_delay() <= 10 * MS,
            "max below first is raised to first"
        );
        let mut backoff = Backoff::new(10 * MS, 80 * MS, 1);
        for _ in 0..5 {
            backoff.next_delay();
        }
        backoff.reset();
        assert!(backoff.next_delay() <= 10 * MS);
        assert_eq!(
            Backoff::new(Duration::ZERO, Duration::ZERO, 1).next_delay(),
            Duration::ZERO
        );
    }
}
