//! What a check may learn of, and tell, the attempt it runs in, without knowing the engine:
//! when the attempt ends (so that it can stop waiting just then), what it waits for (so that an
//! attempt cut short says `no response within 1s`, not a bare `no answer within 1s`), and how
//! long the target asked to be left alone before the next attempt.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use super::Missed;

/// The words for an attempt that says nothing: nothing has answered yet.
pub const NOTHING_YET: &str = "no answer";
/// The words for an attempt cut inside a TLS handshake, whatever the kind.
pub const TLS_HANDSHAKE: &str = "TLS handshake not complete";

tokio::task_local! {
    /// The attempt in progress, set by the engine around each attempt.
    static CURRENT: Attempt;
}

/// One target's attempt in progress and what its check said of it, shared by the target's
/// loop and the engine.
#[derive(Debug, Clone, Default)]
pub struct Attempt(Arc<Mutex<Said>>);

#[derive(Debug, Default)]
struct Said {
    end: Option<Instant>,
    /// What the attempt waits for, if it said.
    waiting: Option<&'static str>,
    /// The longest wait the target asked for.
    not_before: Option<Duration>,
}

impl Attempt {
    /// Runs `attempt` as this target's attempt, ending at `end`, with nothing said yet.
    pub async fn run<F: Future>(&self, end: Instant, attempt: F) -> F::Output {
        *self.said() = Said {
            end: Some(end),
            ..Said::default()
        };
        CURRENT.scope(self.clone(), attempt).await
    }

    /// The longest wait the target asked for during the attempt, if any.
    pub fn not_before(&self) -> Option<Duration> {
        self.said().not_before
    }

    /// `WHAT within DURATION`: why an attempt that ran out of time is not ready.
    pub fn within<F>(&self, took: Duration) -> Missed<F> {
        Missed::TimedOut {
            waiting: self.said().waiting.unwrap_or(NOTHING_YET),
            within: took,
        }
    }

    fn said(&self) -> MutexGuard<'_, Said> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// When the attempt in progress ends (`None` outside an attempt).
pub fn attempt_end() -> Option<Instant> {
    CURRENT
        .try_with(|attempt| attempt.said().end)
        .ok()
        .flatten()
}

/// The target asks not to be tried again for `wait` (an HTTP `Retry-After`): the next attempt
/// comes no sooner. Outside an attempt, nothing happens.
pub fn retry_not_before(wait: Duration) {
    let _ = CURRENT.try_with(|attempt| {
        let mut said = attempt.said();
        said.not_before = Some(said.not_before.map_or(wait, |before| before.max(wait)));
    });
}

/// Says what the running attempt now waits for (`no response`, `body not complete`); outside
/// an attempt, nothing happens.
pub fn waiting_for(what: &'static str) {
    let _ = CURRENT.try_with(|attempt| attempt.said().waiting = Some(what));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_check_learns_the_end_says_what_it_waits_for_and_asks_for_a_wait() {
        let end = Instant::now() + Duration::from_secs(1);
        let attempt = Attempt::default();
        let seen = attempt
            .run(end, async {
                retry_not_before(Duration::from_secs(3));
                retry_not_before(Duration::from_secs(2));
                waiting_for("body not complete");
                attempt_end()
            })
            .await;
        assert_eq!(seen, Some(end));
        // Outside an attempt: nothing to learn, nothing changed.
        retry_not_before(Duration::from_secs(9));
        waiting_for("ignored");
        assert_eq!(attempt_end(), None);
        let longest = Some(Duration::from_secs(3));
        assert_eq!(attempt.not_before(), longest, "the longest wins");
        let cut = attempt.within::<String>(Duration::from_millis(5));
        assert_eq!(cut.to_string(), "body not complete within 5ms");
        // A new attempt starts from nothing said.
        attempt.run(end, async {}).await;
        assert_eq!(attempt.not_before(), None);
        let cut = attempt.within::<String>(Duration::from_secs(1));
        assert_eq!(cut.to_string(), "no answer within 1.0s");
    }
}
