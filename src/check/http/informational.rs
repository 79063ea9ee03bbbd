//! A bound on the 1xx informational heads (`100 Continue`, `103 Early Hints`) a server may send
//! before its answer: hyper skips them in a loop of its own, so a server sending them forever
//! would keep an attempt parsing until its timeout, and a starved CPU past it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

use hyper::Request;

/// Most informational heads one response may be preceded by.
const MOST_HEADS: usize = 8;
/// Most bytes (names and values) of all informational heads of one response.
const MOST_BYTES: usize = 16 * 1024;

/// Counts the informational heads of one request's response, and says when there are too many.
#[derive(Clone, Default)]
pub struct Guard(Arc<Counts>);

#[derive(Default)]
struct Counts {
    heads: AtomicUsize,
    bytes: AtomicUsize,
    /// The task waiting in [`Guard::tripped`].
    waker: Mutex<Option<Waker>>,
}

impl Guard {
    /// A guard counting the informational heads of `request`'s response.
    pub fn attach<B>(request: &mut Request<B>) -> Guard {
        let guard = Guard::default();
        let counts = Arc::clone(&guard.0);
        hyper::ext::on_informational(request, move |head| {
            let size: usize = head
                .headers()
                .iter()
                .map(|(name, value)| name.as_str().len() + value.len() + 4)
                .sum();
            counts.heads.fetch_add(1, Ordering::Relaxed);
            counts.bytes.fetch_add(size + 16, Ordering::Relaxed);
            if counts.exceeded() {
                if let Some(waker) = counts.waker.lock().ok().and_then(|mut w| w.take()) {
                    waker.wake();
                }
            }
        });
        guard
    }

    /// Resolves once the bound is exceeded (never, for a well-behaved server).
    pub async fn tripped(&self) {
        std::future::poll_fn(|cx| {
            if self.0.exceeded() {
                return Poll::Ready(());
            }
            if let Ok(mut waker) = self.0.waker.lock() {
                *waker = Some(cx.waker().clone());
            }
            Poll::Pending
        })
        .await;
    }

    /// Why the attempt was given up.
    pub fn reason(&self) -> String {
        let heads = self.0.heads.load(Ordering::Relaxed);
        format!("too many informational (1xx) responses ({heads}) before the answer")
    }
}

impl Counts {
    fn exceeded(&self) -> bool {
        self.heads.load(Ordering::Relaxed) > MOST_HEADS
            || self.bytes.load(Ordering::Relaxed) > MOST_BYTES
    }
}
