//! The cap on open connections. A client that opens connections and sends nothing (or drips
//! its request, or its body) must not lock the kubelet out: at the cap, the peer address that
//! holds the most connections gives one up: its oldest with no answer being worked out, else
//! its oldest, unless the newcomer's own address holds nearly as many (then it is refused).

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// The open connections, by the order they were accepted in.
pub struct Conns {
    cap: usize,
    state: Mutex<Ledger>,
}

/// The open connections, and the id the next one gets.
#[derive(Default)]
struct Ledger {
    next: u64,
    /// Oldest first (a few dozen: a list is smaller code than a map).
    open: Vec<Open>,
}

/// One open connection.
struct Open {
    id: u64,
    /// Who opened it (the kubelet's probes come from the node's address, other pods' from theirs).
    peer: IpAddr,
    /// Answers readygate is working out for it now (not a request still arriving).
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

/// An answer being worked out for a connection: while it lives, the connection is evicted only
/// for a newcomer from a less greedy address.
pub struct Busy {
    conns: Arc<Conns>,
    id: u64,
}

impl Conns {
    pub fn new(cap: usize) -> Arc<Conns> {
        let state = Mutex::default();
        Arc::new(Conns { cap, state })
    }

    /// A place for a new connection from `peer`, making room if need be; `None` when none
    /// can be made for it.
    pub fn admit(self: &Arc<Conns>, peer: IpAddr) -> Option<Entry> {
        let mut state = self.lock();
        if state.open.len() >= self.cap {
            let victim = state.victim(peer)?;
            state.open.remove(victim).evict.notify_one();
        }
        let id = state.next;
        state.next += 1;
        let evict = Arc::new(Notify::new());
        let open = Open {
            id,
            peer,
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Ledger> {
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

    /// Records that a request came on the connection (its head is whole).
    pub fn asking(&self) {
        self.asked.store(true, Ordering::Relaxed);
    }

    /// Marks an answer being worked out until the returned guard is dropped.
    pub fn busy(&self) -> Busy {
        if let Some(open) = self.conns.lock().find(self.id) {
            open.busy += 1;
        }
        let conns = self.conns.clone();
        Busy { conns, id: self.id }
    }
}

impl Ledger {
    /// Which connection makes room for a newcomer from `peer`: one of the address holding the
    /// most (oldest first among ties), its oldest idle one, else its oldest if that address
    /// would still hold as many as `peer` after the swap. So one pod's flood, idle or busy,
    /// never closes the kubelet's connections, and never keeps them out.
    fn victim(&self, peer: IpAddr) -> Option<usize> {
        let held = |address: IpAddr| self.open.iter().filter(|o| o.peer == address).count();
        let most = self.open.iter().map(|open| held(open.peer)).max()?;
        let greedy = |open: &&Open| held(open.peer) == most;
        let position = |id: u64| self.open.iter().position(|open| open.id == id);
        if let Some(idle) = self.open.iter().filter(greedy).find(|o| o.busy == 0) {
            return position(idle.id);
        }
        let oldest = self.open.iter().find(greedy)?;
        match most > held(peer) + 1 {
            true => position(oldest.id),
            false => None,
        }
    }

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

    const ONE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const TWO: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));
    const NODE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 3));

    /// Whether `entry` was told to close.
    async fn told(entry: &Entry) -> bool {
        tokio::time::timeout(Duration::ZERO, entry.evicted())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn at_the_cap_the_oldest_idle_connection_makes_room() {
        let conns = Conns::new(3);
        let first = conns.admit(ONE).unwrap();
        let second = conns.admit(ONE).unwrap();
        let third = conns.admit(ONE).unwrap();
        let busy = first.busy();
        // The first works on an answer: the second, the oldest idle, is evicted for the fourth.
        let fourth = conns.admit(ONE).unwrap();
        assert_eq!(conns.open(), 3);
        assert!(told(&second).await, "the second was not told to close");
        assert!(!told(&third).await, "the third was told to close");
        drop(second);
        assert_eq!(conns.open(), 3, "an evicted entry is already gone");
        // All busy, from the newcomer's own address: it is refused.
        let (_also, _too) = (third.busy(), fourth.busy());
        assert!(conns.admit(ONE).is_none());
        drop(busy);
        assert!(conns.admit(ONE).is_some(), "the first is idle again");
    }

    #[tokio::test]
    async fn a_flood_from_one_address_never_closes_another_address_connection() {
        let conns = Conns::new(4);
        let kubelet = conns.admit(NODE).unwrap();
        let flood: Vec<Entry> = (0..3).map(|_| conns.admit(ONE).unwrap()).collect();
        // The kubelet's connection is the oldest and idle, yet the flood pays for its own.
        let more = conns.admit(ONE).unwrap();
        assert!(told(&flood[0]).await && !told(&kubelet).await);
        drop(flood);
        let last: Vec<Entry> = (0..2).map(|_| conns.admit(ONE).unwrap()).collect();
        let _busy = (more.busy(), last[0].busy(), last[1].busy());
        // The flood's connections all answering: the kubelet's new one still gets in.
        assert!(conns.admit(NODE).is_some());
        assert!(told(&more).await && !told(&kubelet).await);
        // Equal shares: the newcomer from a third address takes an idle one, never a busy one.
        let conns = Conns::new(2);
        let (one, two) = (conns.admit(ONE).unwrap(), conns.admit(TWO).unwrap());
        let _busy = (one.busy(), two.busy());
        assert!(conns.admit(NODE).is_none());
    }
}
