//! A histogram of durations: how long attempts (or admissions) took, in fixed buckets from a
//! millisecond (a loopback connect) to ten seconds (past any attempt's usual bound).

use std::sync::Mutex;
use std::time::Duration;

/// Each bucket's upper bound, as written in the `le` label and in nanoseconds.
const BOUNDS: [(&str, u64); 13] = [
    ("0.001", 1_000_000),
    ("0.0025", 2_500_000),
    ("0.005", 5_000_000),
    ("0.01", 10_000_000),
    ("0.025", 25_000_000),
    ("0.05", 50_000_000),
    ("0.1", 100_000_000),
    ("0.25", 250_000_000),
    ("0.5", 500_000_000),
    ("1", 1_000_000_000),
    ("2.5", 2_500_000_000),
    ("5", 5_000_000_000),
    ("10", 10_000_000_000),
];

/// Durations observed so far. One lock, so a scrape sees the buckets, the count and the sum of
/// the same observations.
#[derive(Default)]
pub struct Histogram {
    state: Mutex<Taken>,
}

/// What a histogram holds: observations per bucket (not cumulative), how many in all, and
/// their sum.
#[derive(Default, Clone)]
pub struct Taken {
    counts: [u64; BOUNDS.len()],
    pub count: u64,
    pub sum_nanos: u64,
}

impl Histogram {
    /// Counts one duration.
    pub fn observe(&self, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if let Some(at) = BOUNDS.iter().position(|&(_, bound)| nanos <= bound) {
            state.counts[at] += 1;
        }
        state.count += 1;
        state.sum_nanos = state.sum_nanos.saturating_add(nanos);
    }

    /// A copy of what it holds.
    pub fn taken(&self) -> Taken {
        self.state
            .lock()
            .map(|state| state.clone())
            .unwrap_or_default()
    }
}

impl Taken {
    /// Each bucket's bound, as the `le` label writes it, and its observations (not cumulative).
    pub fn buckets(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        BOUNDS.iter().zip(self.counts).map(|(&(le, _), n)| (le, n))
    }
}
