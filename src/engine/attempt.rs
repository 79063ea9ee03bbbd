//! What a check may learn of, and tell, the attempt it runs in, without knowing the engine:
//! when the attempt ends (so that it can stop waiting just then and say what it waited for),
//! and how long the target asked to be left alone before the next attempt.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

tokio::task_local! {
    /// The attempt in progress, set by the engine around each attempt.
    static CURRENT: Scope;
}

/// One attempt's end, and the wait its target asked for.
#[derive(Debug, Clone)]
pub struct Scope {
    end: Instant,
    not_before: Arc<Mutex<Option<Duration>>>,
}

impl Scope {
    /// An attempt that ends at `end`.
    pub fn new(end: Instant) -> Self {
        Scope {
            end,
            not_before: Arc::default(),
        }
    }

    /// Runs `attempt` as this attempt.
    pub async fn run<F: Future>(&self, attempt: F) -> F::Output {
        CURRENT.scope(self.clone(), attempt).await
    }

    /// The longest wait the target asked for during the attempt, if any.
    pub fn not_before(&self) -> Option<Duration> {
        *self.not_before.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// When the attempt in progress ends (`None` outside an attempt).
pub fn attempt_end() -> Option<Instant> {
    CURRENT.try_with(|scope| scope.end).ok()
}

/// The target asks not to be tried again for `wait` (an HTTP `Retry-After`): the next attempt
/// comes no sooner. Outside an attempt, nothing happens.
pub fn retry_not_before(wait: Duration) {
    let _ = CURRENT.try_with(|scope| {
        let mut asked = scope.not_before.lock().unwrap_or_else(|e| e.into_inner());
        *asked = Some(asked.map_or(wait, |before| before.max(wait)));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_check_learns_the_end_and_asks_for_a_wait() {
        let end = Instant::now() + Duration::from_secs(1);
        let scope = Scope::new(end);
        let seen = scope
            .run(async {
                retry_not_before(Duration::from_secs(3));
                retry_not_before(Duration::from_secs(2));
                attempt_end()
            })
            .await;
        assert_eq!(seen, Some(end));
        assert_eq!(
            scope.not_before(),
            Some(Duration::from_secs(3)),
            "the longest wins"
        );
        // Outside an attempt: nothing to learn, nothing kept.
        retry_not_before(Duration::from_secs(9));
        assert_eq!(attempt_end(), None);
        assert_eq!(Scope::new(end).not_before(), None);
    }
}
