//! A bound on the 1xx informational heads (`100 Continue`, `103 Early Hints`) a server may send
//! before its answer: hyper skips them in a loop of its own, so a server sending them forever
//! would keep an attempt parsing until its timeout, and a starved CPU past it.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use hyper::Request;
use tokio::sync::Notify;

use crate::error::Failure;

/// Most informational heads one response may be preceded by.
const MOST_HEADS: usize = 8;
/// Most bytes (names and values) of all informational heads of one response.
const MOST_BYTES: usize = 16 * 1024;

/// Counts the informational heads of one request's response, and says when there are too many.
#[derive(Default)]
pub struct Guard {
    heads: AtomicUsize,
    bytes: AtomicUsize,
    exceeded: Notify,
}

impl Guard {
    /// A guard counting the informational heads of `request`'s response.
    pub fn attach<B>(request: &mut Request<B>) -> Arc<Guard> {
        let guard = Arc::new(Guard::default());
        let counts = Arc::clone(&guard);
        hyper::ext::on_informational(request, move |head| {
            let size: usize = head
                .headers()
                .iter()
                .map(|(name, value)| name.as_str().len() + value.len() + 4)
                .sum();
            let heads = counts.heads.fetch_add(1, Relaxed) + 1;
            let bytes = counts.bytes.fetch_add(size + 16, Relaxed) + size + 16;
            if heads > MOST_HEADS || bytes > MOST_BYTES {
                // Kept as a permit if no one waits yet.
                counts.exceeded.notify_one();
            }
        });
        guard
    }

    /// Resolves once the bound is exceeded (never, for a well-behaved server), with why the
    /// attempt is given up.
    pub async fn tripped(&self) -> Failure {
        self.exceeded.notified().await;
        let heads = self.heads.load(Relaxed);
        let reason = format!("too many informational (1xx) responses ({heads}) before the answer");
        Failure::Text(reason)
    }
}
