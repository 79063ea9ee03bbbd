//! How a target's attempts are spaced: after a miss, a delay drawn from [½·base, base] (so
//! that pods started together drift apart), the base starting at `first`, held there for the
//! first `steady` retries, then growing by a factor per miss up to `max`. The plan picks one
//! per target (by how the target is reached, or as set).

use std::fmt;
use std::time::Duration;

/// The spacing of one target's attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// What it is called in `-v` output.
    pub label: &'static str,
    /// The first retry delay's base.
    pub first: Duration,
    /// The cap on the base.
    pub max: Duration,
    /// The base's growth per miss, as a fraction: `(2, 1)` doubles it, `(13, 10)` adds 30%.
    pub growth: (u32, u32),
    /// How many retries wait on a base of `first` before it starts to grow, so that a peer
    /// that comes up in the wait's first seconds is seen within one short delay (0 and 1
    /// alike: the first retry always waits on `first`).
    pub steady: u32,
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (num, den) = self.growth;
        let growth = match (num, den) {
            (2, 1) => "doubling".to_string(),
            _ => format!("×{} per miss", num as f64 / den.max(1) as f64),
        };
        let (label, first, max) = (self.label, self.first, self.max);
        match self.steady {
            0 | 1 => write!(f, "{label} schedule: retries from {first:?}, {growth}, "),
            n => write!(
                f,
                "{label} schedule: retries from {first:?} (the first {n} times), then {growth}, "
            ),
        }?;
        write!(f, "up to {max:?}, each delay ½–1× that")
    }
}

/// Yields the successive retry delays of one target.
#[derive(Debug)]
pub struct Backoff {
    schedule: Schedule,
    /// The un-jittered next delay.
    base: Duration,
    /// Delays handed out since the start (or the last reset): the base grows past `steady`.
    retries: u32,
    /// Source of jitter; seeded per target.
    rng: fastrand::Rng,
}

impl Backoff {
    /// The delays of `schedule` (a `max` below `first` is raised to it), jittered from `seed`.
    pub fn new(schedule: Schedule, seed: u64) -> Self {
        let schedule = Schedule {
            max: schedule.max.max(schedule.first),
            ..schedule
        };
        Backoff {
            base: schedule.first,
            retries: 0,
            schedule,
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// The schedule these delays follow.
    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    /// The cap on the delays.
    pub fn max(&self) -> Duration {
        self.schedule.max
    }

    /// The next delay: uniform in `[base/2, base]`, after which `base` grows up to the cap
    /// (once `steady` delays have been handed out).
    pub fn next_delay(&mut self) -> Duration {
        let half = self.base / 2;
        let spread = (self.base - half).as_nanos().min(u64::MAX.into()) as u64;
        let delay = half + Duration::from_nanos(self.rng.u64(0..=spread));
        self.retries = self.retries.saturating_add(1);
        if self.retries < self.schedule.steady {
            return delay;
        }
        let (num, den) = self.schedule.growth;
        let grown = self.base.saturating_mul(num.max(1)) / den.max(1);
        self.base = grown.max(self.base).min(self.schedule.max);
        delay
    }

    /// Starts again from the first delay, steady phase and all (after a success).
    pub fn reset(&mut self) {
        self.base = self.schedule.first;
        self.retries = 0;
    }

    /// The first delay, un-jittered: the spacing of good attempts towards a success threshold.
    pub fn first(&self) -> Duration {
        self.schedule.first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// The plan's schedule for the API server and commands: 30% more per miss.
    const GENTLE: Schedule = Schedule {
        label: "test",
        first: Duration::from_millis(100),
        max: Duration::from_millis(5000),
        growth: (13, 10),
        steady: 0,
    };

    /// A steady start: 25 retries on the first base, then as `GENTLE`.
    const QUICK_START: Schedule = Schedule {
        steady: 25,
        ..GENTLE
    };

    fn doubling(first: Duration, max: Duration) -> Schedule {
        Schedule {
            label: "test",
            first,
            max,
            growth: (2, 1),
            steady: 0,
        }
    }

    /// Whether `delay` is a jittered draw on `base` (micro-second rounding aside).
    fn drawn_on(delay: Duration, base: Duration) -> bool {
        delay >= base / 2 && delay <= base + Duration::from_micros(1)
    }

    #[test]
    fn grows_by_its_factor_within_jitter_bounds_up_to_the_cap() {
        // Bases in microseconds.
        for (schedule, bases) in [
            (
                doubling(10 * MS, 100 * MS),
                &[10_000, 20_000, 40_000, 80_000, 100_000, 100_000, 100_000][..],
            ),
            (
                GENTLE,
                &[
                    100_000, 130_000, 169_000, 219_700, 285_610, 371_293, 482_680,
                ][..],
            ),
        ] {
            for seed in 0..200 {
                let mut backoff = Backoff::new(schedule, seed);
                for &base in bases {
                    let base = Duration::from_micros(base);
                    let delay = backoff.next_delay();
                    assert!(
                        drawn_on(delay, base),
                        "seed {seed}: {delay:?} for base {base:?}"
                    );
                }
            }
        }
        let mut backoff = Backoff::new(GENTLE, 1);
        let late: Vec<_> = (0..40).map(|_| backoff.next_delay()).skip(20).collect();
        assert!(
            late.iter().all(|d| *d >= 2500 * MS && *d <= 5000 * MS),
            "{late:?}"
        );
    }

    #[test]
    fn the_steady_retries_wait_on_the_first_base_then_it_grows_as_before() {
        let gentle = [
            100_000, 130_000, 169_000, 219_700, 285_610, 371_293, 482_680,
        ];
        for seed in 0..200 {
            let mut backoff = Backoff::new(QUICK_START, seed);
            let steady: Vec<_> = (0..25).map(|_| backoff.next_delay()).collect();
            assert!(steady.iter().all(|d| drawn_on(*d, 100 * MS)), "{steady:?}");
            // The 26th retry on: the same bases as with no steady phase, from its second.
            for &base in &gentle[1..] {
                let delay = backoff.next_delay();
                let base = Duration::from_micros(base);
                assert!(
                    drawn_on(delay, base),
                    "seed {seed}: {delay:?} for base {base:?}"
                );
            }
            // The cap stands: within 40 more, every delay is drawn on 5 s.
            let late: Vec<_> = (0..40).map(|_| backoff.next_delay()).skip(20).collect();
            assert!(late.iter().all(|d| drawn_on(*d, 5000 * MS)), "{late:?}");
            // A reset starts the steady phase over: 25 more on the first base, then growth.
            backoff.reset();
            let again: Vec<_> = (0..25).map(|_| backoff.next_delay()).collect();
            assert!(again.iter().all(|d| drawn_on(*d, 100 * MS)), "{again:?}");
            let grown = backoff.next_delay();
            assert!(drawn_on(grown, 130 * MS), "{grown:?}");
        }
        // 0 and 1 alike: the first retry always waits on the first base, the second has grown.
        for steady in [0, 1] {
            let mut backoff = Backoff::new(Schedule { steady, ..GENTLE }, 3);
            assert!(drawn_on(backoff.next_delay(), 100 * MS));
            assert!(drawn_on(backoff.next_delay(), 130 * MS));
        }
        // A steady phase past any wait, with no growth: no panic, the first base throughout.
        let flat = Schedule {
            steady: u32::MAX,
            growth: (0, 0),
            ..GENTLE
        };
        let mut backoff = Backoff::new(flat, 4);
        assert!((0..100).all(|_| drawn_on(backoff.next_delay(), 100 * MS)));
    }

    #[test]
    fn v_says_how_many_retries_wait_on_the_first_base() {
        assert_eq!(
            QUICK_START.to_string(),
            "test schedule: retries from 100ms (the first 25 times), then ×1.3 per miss, \
             up to 5s, each delay ½–1× that"
        );
        for steady in [0, 1] {
            assert_eq!(
                Schedule { steady, ..GENTLE }.to_string(),
                "test schedule: retries from 100ms, ×1.3 per miss, up to 5s, each delay ½–1× that"
            );
        }
        let doubling = Schedule {
            steady: 3,
            ..doubling(10 * MS, 100 * MS)
        };
        assert_eq!(
            doubling.to_string(),
            "test schedule: retries from 10ms (the first 3 times), then doubling, up to 100ms, \
             each delay ½–1× that"
        );
    }

    #[test]
    fn jitter_spreads_delays() {
        let delays: Vec<_> = (0..50)
            .map(|seed| Backoff::new(doubling(100 * MS, 100 * MS), seed).next_delay())
            .collect();
        let min = delays.iter().min().unwrap();
        let max = delays.iter().max().unwrap();
        assert!(*max - *min > 25 * MS, "jitter too narrow: {min:?}..{max:?}");
    }

    #[test]
    fn pods_started_together_drift_apart() {
        // Fifty pods of one rollout, each with its own seed: when their tenth attempt comes.
        let mut tenth: Vec<Duration> = (0..50)
            .map(|seed| {
                let mut backoff = Backoff::new(GENTLE, seed);
                (0..10).map(|_| backoff.next_delay()).sum()
            })
            .collect();
        tenth.sort();
        assert!(tenth[49] - tenth[0] > 1000 * MS, "{tenth:?}");
        let bunched = tenth.windows(2).filter(|w| w[1] - w[0] < MS).count();
        assert!(bunched <= 2, "{tenth:?}");
    }

    #[test]
    fn reset_and_degenerate_settings() {
        let mut backoff = Backoff::new(doubling(10 * MS, 80 * MS), 1);
        (0..5).for_each(|_| _ = backoff.next_delay());
        backoff.reset();
        assert!(backoff.next_delay() <= 10 * MS, "reset");
        let stuck = Schedule {
            growth: (0, 0),
            ..doubling(10 * MS, 100 * MS)
        };
        let (zero, max) = (Duration::ZERO, Duration::MAX);
        for (schedule, low, high, why) in [
            // The max below first is raised to first.
            (doubling(10 * MS, MS), zero, 10 * MS, "max below first"),
            (doubling(zero, zero), zero, zero, "zero"),
            (doubling(max, max), max / 2, max, "huge"),
            (stuck, zero, 10 * MS, "no growth, no panic"),
        ] {
            let mut backoff = Backoff::new(schedule, 1);
            for _ in 0..2 {
                let delay = backoff.next_delay();
                assert!(delay >= low && delay <= high, "{why}: {delay:?}");
            }
        }
    }
}
