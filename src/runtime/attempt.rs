//! What a check may learn of, and tell, the attempt it runs in, without knowing the engine:
//! when the attempt ends (so that it can stop waiting just then), what it waits for (so that an
//! attempt cut short says `no response within 1s`, not a bare `no answer within 1s`), and how
//! long the target asked to be left alone before the next attempt. The engine hands one to
//! each attempt, as an argument: a check that uses it shows it in its signature.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use crate::error::Failure;
use crate::grammar::duration::humanize;

/// The words for an attempt that says nothing: nothing has answered yet.
pub const NOTHING_YET: &str = "no answer";
/// The words for an attempt cut inside a TLS handshake, whatever the kind.
pub const TLS_HANDSHAKE: &str = "TLS handshake not complete";

/// One attempt in progress: when it ends, and what its check said of it. Clones share what is
/// said, so the engine still reads it when it cuts the attempt.
#[derive(Debug, Clone, Default)]
pub struct Attempt {
    /// When the engine stops waiting for the attempt (`None`: its caller bounds it otherwise).
    end: Option<Instant>,
    said: Arc<Mutex<Said>>,
}

#[derive(Debug, Default)]
struct Said {
    /// What the attempt waits for, if it said.
    waiting: Option<&'static str>,
    /// The longest wait the target asked for.
    not_before: Option<Duration>,
    /// What the check suspects should the attempt be cut (`is this port PostgreSQL?`).
    suspect: Option<&'static str>,
}

impl Attempt {
    /// An attempt that ends at `end`, with nothing said yet.
    pub fn until(end: Instant) -> Attempt {
        Attempt {
            end: Some(end),
            said: Arc::default(),
        }
    }

    /// Work outside the engine's attempts (the watch of a `k8s://` target, `--on-exit`'s
    /// notice), bounded by its caller: no end to learn, and what it says is read by no one.
    pub fn unbounded() -> Attempt {
        Attempt::default()
    }

    /// When the attempt ends, if it is the engine's.
    pub fn end(&self) -> Option<Instant> {
        self.end
    }

    /// Says what the attempt now waits for (`no response`, `body not complete`).
    pub fn waiting_for(&self, what: &'static str) {
        self.said().waiting = Some(what);
    }

    /// Says what to suspect should the attempt be cut from now on: a server of the kind
    /// answers at once, so silence hints at another protocol on the port.
    pub fn if_cut_suspect(&self, what: &'static str) {
        self.said().suspect = Some(what);
    }

    /// The target asks not to be tried again for `wait` (an HTTP `Retry-After`): the next
    /// attempt comes no sooner.
    pub fn retry_not_before(&self, wait: Duration) {
        let mut said = self.said();
        said.not_before = Some(said.not_before.map_or(wait, |before| before.max(wait)));
    }

    /// The longest wait the target asked for during the attempt, if any.
    pub(crate) fn asked_wait(&self) -> Option<Duration> {
        self.said().not_before
    }

    /// `WHAT within DURATION`: why an attempt that ran out of time is not ready.
    pub(crate) fn within(&self, took: Duration) -> Failure {
        let said = self.said();
        let waiting = said.waiting.unwrap_or(NOTHING_YET);
        let suspect = said.suspect.map(|s| format!(" ({s})")).unwrap_or_default();
        format!("{waiting} within {}{suspect}", humanize(took)).into()
    }

    fn said(&self) -> MutexGuard<'_, Said> {
        self.said.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_check_learns_the_end_says_what_it_waits_for_and_asks_for_a_wait() {
        let end = Instant::now() + Duration::from_secs(1);
        let attempt = Attempt::until(end);
        let seen = {
            let at = &attempt;
            at.retry_not_before(Duration::from_secs(3));
            at.retry_not_before(Duration::from_secs(2));
            at.waiting_for("body not complete");
            at.end()
        };
        assert_eq!(seen, Some(end));
        // Outside the engine's attempts: nothing to learn, and nothing said reaches this one.
        let outside = Attempt::unbounded();
        outside.retry_not_before(Duration::from_secs(9));
        outside.waiting_for("ignored");
        assert_eq!(outside.end(), None);
        let longest = Some(Duration::from_secs(3));
        assert_eq!(attempt.asked_wait(), longest, "the longest wins");
        let cut = attempt.within(Duration::from_millis(5));
        assert_eq!(cut.to_string(), "body not complete within 5ms");
        // A new attempt starts from nothing said.
        let attempt = Attempt::until(end);
        assert_eq!(attempt.asked_wait(), None);
        let cut = attempt.within(Duration::from_secs(1));
        assert_eq!(cut.to_string(), "no answer within 1.0s");
    }
}
