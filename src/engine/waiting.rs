//! What an attempt is waiting for, said by the check as it goes, so an attempt cut short by
//! its timeout or the deadline is reported as `no response within 1s` or `body not complete
//! within 1s` rather than a bare `no answer within 1s`. The engine owns one per target.

use std::sync::{Arc, Mutex};

/// The words for an attempt that says nothing: nothing has answered yet.
pub const NOTHING_YET: &str = "no answer";

tokio::task_local! {
    /// The current attempt's [`Waiting`], set by the engine around each attempt.
    static CURRENT: Waiting;
}

/// One target's "what the attempt in flight waits for", shared by its loop and the engine.
#[derive(Debug, Clone)]
pub struct Waiting(Arc<Mutex<&'static str>>);

impl Default for Waiting {
    fn default() -> Self {
        Waiting(Arc::new(Mutex::new(NOTHING_YET)))
    }
}

impl Waiting {
    /// Runs one attempt with this as its current [`Waiting`], starting from [`NOTHING_YET`].
    pub async fn scope<F: std::future::Future>(&self, attempt: F) -> F::Output {
        self.set(NOTHING_YET);
        CURRENT.scope(self.clone(), attempt).await
    }

    /// `WHAT within DURATION`: why an attempt that ran out of time is not ready.
    pub fn within<F>(&self, took: std::time::Duration) -> super::Missed<F> {
        super::Missed::TimedOut {
            waiting: self.get(),
            within: took,
        }
    }

    fn get(&self) -> &'static str {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, what: &'static str) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = what;
    }
}

/// Says what the running attempt now waits for (`no response`, `body not complete`); outside
/// an attempt, nothing happens.
pub fn waiting_for(what: &'static str) {
    let _ = CURRENT.try_with(|waiting| waiting.set(what));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_attempt_says_what_it_waits_for() {
        let waiting = Waiting::default();
        waiting
            .scope(async { waiting_for("body not complete") })
            .await;
        assert_eq!(
            waiting
                .within::<String>(std::time::Duration::from_millis(5))
                .to_string(),
            "body not complete within 5ms"
        );
        // Outside an attempt, ignored; a new attempt starts from nothing.
        waiting_for("ignored");
        waiting.scope(async {}).await;
        assert_eq!(
            waiting
                .within::<String>(std::time::Duration::from_secs(1))
                .to_string(),
            "no answer within 1.0s"
        );
    }
}
