//! The cap on open connections. A client that opens connections and sends nothing (or drips
//! its request) must not lock the kubelet out: at the cap, the oldest connection with no request
//! in progress is closed to make room; only when every connection is answering a request is
//! the new one refused.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// The open connections, by the order they were accepted in.
pub struct Conns {
    cap: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next: u64,
    /// Oldest first (a few dozen: a list is smaller code than a map).
    open: Vec<Open>,
}

/// One open connection.
struct Open {
    id: u64,
    /// Requests it is being answered on now.
    busy: u32,
    /// Told to close the connection to make room.
    evict: Arc<Notify>,
}

/// A connection's place among the open ones, given up when dropped.
pub struct Entry {
    conns: Arc<Conns>,
    id: u64,
    evict: Arc<Notify>,
    /// A request has come on it.
    asked: AtomicBool,
}

/// A request in progress on a connection: while it lives, the connection is not evicted.
pub struct Busy {
    conns: Arc<Conns>,
    id: u64,
}

impl Conns {
    pub fn new(cap: usize) -> Arc<Conns> {
        let state = Mutex::default();
        Arc::new(Conns { cap, state })
    }

    /// A place for a new connection, making room if need be; `None` when every open
    /// connection is answering a request.
    pub fn admit(self: &Arc<Conns>) -> Option<Entry> {
        let mut state = self.lock();
        if state.open.len() >= self.cap {
            let idle = state.open.iter().position(|open| open.busy == 0)?;
            state.open.remove(idle).evict.notify_one();
        }
        let id = state.next;
        state.next += 1;
        let evict = Arc::new(Notify::new());
        let open = Open {
            id,
            busy: 0,
            evict: evict.clone(),
        };
        state.open.push(open);
        let (conns, asked) = (self.clone(), AtomicBool::new(false));
        Some(Entry {
            conns,
            id,
            evict,
            asked,
        })
    }

    /// How many connections are open.
    #[cfg(test)]
    pub fn open(&self) -> usize {
        self.lock().open.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("connections")
    }
}

impl Entry {
    /// Resolves when the connection must close to make room for a newer one.
    pub async fn evicted(&self) {
        self.evict.notified().await;
    }

    /// Whether a request has come on the connection.
    pub fn asked(&self) -> bool {
        self.asked.load(Ordering::Relaxed)
    }

    /// Marks a request in progress until the returned guard is dropped.
    pub fn busy(&self) -> Busy {
        self.asked.store(true, Ordering::Relaxed);
        if let Some(open) = self.conns.lock().find(self.id) {
            open.busy += 1;
        }
        let conns = self.conns.clone();
        Busy { conns, id: self.id }
    }
}

impl State {
    fn find(&mut self, id: u64) -> Option<&mut Open> {
        self.open.iter_mut().find(|open| open.id == id)
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.conns.lock().open.retain(|open| open.id != self.id);
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(open) = self.conns.lock().find(self.id) {
            open.busy -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn at_the_cap_the_oldest_idle_connection_makes_room() {
        let conns = Conns::new(2);
        let first = conns.admit().unwrap();
        let second = conns.admit().unwrap();
        let busy = first.busy();
        // The first answers a request: the second, idle, is evicted for the third.
        let third = conns.admit().unwrap();
        assert_eq!(conns.open(), 2);
        let told = tokio::time::timeout(Duration::ZERO, second.evicted()).await;
        assert!(told.is_ok(), "the second was not told to close");
        drop(second);
        assert_eq!(conns.open(), 2, "an evicted entry is already gone");
        // Both busy: a new connection is refused.
        let _also = third.busy();
        assert!(conns.admit().is_none());
        drop(busy);
        assert!(conns.admit().is_some(), "the first is idle again");
    }
}
