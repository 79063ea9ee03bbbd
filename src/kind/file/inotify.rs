//! Folder events through one inotify instance for the whole run: every file target watching
//! a folder shares that folder's one watch, so a thousand targets cost one descriptor.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use futures_core::Stream;
use inotify::{EventMask, EventStream, Inotify, WatchDescriptor, WatchMask, Watches};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

use super::Wake;

/// The inotify events for this kind of wake-up, added to what a shared watch has.
pub fn mask(wake: Wake) -> WatchMask {
    let entries = WatchMask::MASK_ADD
        | WatchMask::CREATE
        | WatchMask::MOVED_TO
        | WatchMask::MOVED_FROM
        | WatchMask::DELETE
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF;
    // Content is taken as written when its writer closes it (or renames it into place), not
    // on every write(2): a log in the same folder, written line by line and never closed,
    // would otherwise be an event per line. A writer that keeps the target open is seen by
    // the polling that goes on meanwhile.
    match wake {
        Wake::OnEntries => entries,
        Wake::OnContent => entries | WatchMask::CLOSE_WRITE | WatchMask::ATTRIB,
    }
}

/// The run's inotify instance; a task on the runtime reads its events and wakes the
/// subscribers of the folder each concerns.
pub struct Hub {
    /// Adds and removes watches from any thread.
    pub watches: Watches,
    folders: Folders,
    reader: AbortHandle,
}

type Folders = Arc<Mutex<HashMap<WatchDescriptor, Vec<Subscriber>>>>;

/// What a folder's events wake for one file target.
#[derive(Default)]
pub struct Wakers {
    /// Events on the target's entry, or on the folder itself: the target may have changed.
    pub own: Notify,
    /// Events on the folder's other entries: the watch rate-limits these.
    pub others: Notify,
    /// An event on the folder itself (moved, deleted, its watch dropped) or lost events: the
    /// path may lead to another folder now.
    pub stale: AtomicBool,
}

/// One target on a folder's watch.
pub struct Subscriber {
    pub wakers: Arc<Wakers>,
    /// The entry the target depends on (its file, or the next folder down its path); `None`:
    /// every event is its own.
    pub name: Option<OsString>,
}

impl Subscriber {
    /// Wakes for an event on `entry`, or on the folder itself (`None`).
    fn wake(&self, entry: Option<&OsStr>) {
        let Wakers { own, others, stale } = &*self.wakers;
        if entry.is_none() {
            stale.store(true, Ordering::Release);
        }
        match (&self.name, entry) {
            (Some(name), Some(entry)) if name != entry => others.notify_one(),
            _ => own.notify_one(),
        }
    }
}

/// Where a run keeps its hub while any watch uses it (the last watch gone, the hub closes).
#[derive(Debug, Default)]
pub struct HubSlot(Mutex<Weak<Hub>>);

impl Hub {
    /// The hub of `slot`, made on first use on the runtime's thread; `None` when inotify is
    /// unavailable (no descriptor left, or none in this kernel): targets are then polled.
    pub fn shared(slot: &HubSlot) -> Option<Arc<Hub>> {
        let mut slot = slot.0.lock().expect("hub lock");
        if let Some(hub) = slot.upgrade() {
            return Some(hub);
        }
        let events = Inotify::init().ok()?.into_event_stream([0u8; 4096]).ok()?;
        let watches = events.watches();
        let folders = Folders::default();
        let reader = tokio::spawn(read(events, Arc::clone(&folders))).abort_handle();
        let hub = Arc::new(Hub {
            watches,
            folders,
            reader,
        });
        *slot = Arc::downgrade(&hub);
        Some(hub)
    }

    /// Puts `subscriber` on the watch `new`, taking it off `old`.
    pub fn subscribe(
        &self,
        subscriber: Subscriber,
        old: Option<&WatchDescriptor>,
        new: WatchDescriptor,
    ) {
        if let Some(old) = old.filter(|&old| *old != new) {
            self.unsubscribe(&subscriber.wakers, old);
        }
        let mut folders = self.folders.lock().expect("folders lock");
        let subscribers = folders.entry(new).or_default();
        subscribers.retain(|s| !Arc::ptr_eq(&s.wakers, &subscriber.wakers));
        subscribers.push(subscriber);
    }

    /// Takes `wakers` off the watch `wd`, removing the watch when nobody else uses it.
    pub fn unsubscribe(&self, wakers: &Arc<Wakers>, wd: &WatchDescriptor) {
        let mut folders = self.folders.lock().expect("folders lock");
        let Some(subscribers) = folders.get_mut(wd) else {
            return;
        };
        subscribers.retain(|s| !Arc::ptr_eq(&s.wakers, wakers));
        if subscribers.is_empty() {
            folders.remove(wd);
            let _ = self.watches.clone().remove(wd.clone());
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Wakes the subscribers of each event's folder until the hub stops, or a read fails (the
/// targets are polled from then on).
async fn read(mut events: EventStream<[u8; 4096]>, folders: Folders) {
    loop {
        let next = std::future::poll_fn(|cx| Pin::new(&mut events).poll_next(cx)).await;
        let Some(Ok(event)) = next else {
            return;
        };
        let mut folders = folders.lock().expect("folders lock");
        if event.mask.contains(EventMask::Q_OVERFLOW) {
            // Events were lost: every folder may have changed.
            folders.values().flatten().for_each(|s| s.wake(None));
        } else if let Some(subscribers) = folders.get(&event.wd) {
            let name = event.name.as_deref();
            subscribers.iter().for_each(|s| s.wake(name));
            if event.mask.contains(EventMask::IGNORED) {
                // The kernel dropped the watch: the folder is gone.
                folders.remove(&event.wd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FileWatch, Watch};
    use super::*;

    #[tokio::test]
    async fn targets_share_one_instance_and_one_watch_per_folder() {
        let base = std::env::temp_dir().join(format!("readygate-watch-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let slot = HubSlot::default();
        let mut a = FileWatch::new(&base.join("a"), Wake::OnEntries, &slot).unwrap();
        let mut b = FileWatch::new(&base.join("b"), Wake::OnEntries, &slot).unwrap();
        let hub = Arc::clone(&a.aim.hub);
        assert!(Arc::ptr_eq(&hub, &b.aim.hub));
        let watched = || hub.folders.lock().unwrap().len();
        a.aim.refresh();
        b.aim.refresh();
        assert_eq!(watched(), 1);
        let within = std::time::Duration::from_secs(5);
        std::fs::write(base.join("a"), "").unwrap();
        tokio::time::timeout(within, a.changed()).await.unwrap();
        tokio::time::timeout(within, b.changed()).await.unwrap();
        drop(a);
        assert_eq!(watched(), 1, "the other target still needs the watch");
        std::fs::write(base.join("b"), "").unwrap();
        tokio::time::timeout(within, b.changed()).await.unwrap();
        drop(b);
        assert_eq!(watched(), 0);
        drop(hub);
        let open = slot.0.lock().unwrap().strong_count();
        assert_eq!(open, 0, "the instance closes with its last watch");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn existence_alone_is_not_woken_by_writes() {
        let content = WatchMask::CLOSE_WRITE | WatchMask::ATTRIB;
        assert!(!mask(Wake::OnEntries).intersects(content));
        assert!(!mask(Wake::OnContent).contains(WatchMask::MODIFY));
        assert!(mask(Wake::OnContent).contains(content | mask(Wake::OnEntries)));
    }
}
