//! Folder events through one inotify instance for the whole run: every file target watching
//! a folder shares that folder's one watch, so a thousand targets cost one descriptor.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::Notify;
use tokio::task::AbortHandle;

use super::Wake;

/// The inotify events for this kind of wake-up.
pub fn mask(wake: Wake) -> WatchMask {
    let entries = WatchMask::CREATE
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
    /// Adds and removes watches; usable from any thread.
    watches: Watches,
    folders: Folders,
    /// The task reading events, stopped with the hub.
    reader: AbortHandle,
}

/// The subscribers of each watched folder, by watch.
type Folders = Arc<Mutex<HashMap<WatchDescriptor, Vec<Subscriber>>>>;

/// What a folder's events wake for one file target.
#[derive(Default)]
pub struct Wakers {
    /// Events on the target's entry, or on the folder itself: the target may have changed.
    pub own: Notify,
    /// Events on the folder's other entries: the watch rate-limits these.
    pub others: Notify,
    /// The folder itself was moved or deleted: the path may lead to another folder now.
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
        match (&self.name, entry) {
            (Some(name), Some(entry)) if name != entry => others.notify_one(),
            (_, Some(_)) => own.notify_one(),
            (_, None) => {
                stale.store(true, Ordering::Release);
                own.notify_one();
            }
        }
    }
}

thread_local! {
    /// The runtime thread's hub while any watch uses it.
    static HUB: RefCell<Weak<Hub>> = const { RefCell::new(Weak::new()) };
}

impl Hub {
    /// The hub, made on first use on the runtime's thread; `None` when inotify is unavailable
    /// (no descriptor left, or none in this kernel): targets are then polled.
    pub fn shared() -> Option<Arc<Hub>> {
        HUB.with(|slot| {
            if let Some(hub) = slot.borrow().upgrade() {
                return Some(hub);
            }
            let hub = Arc::new(Hub::open().ok()?);
            *slot.borrow_mut() = Arc::downgrade(&hub);
            Some(hub)
        })
    }

    fn open() -> io::Result<Hub> {
        let inotify = Inotify::init()?;
        let watches = inotify.watches();
        // SAFETY: `Inotify` owns its descriptor and keeps it open, unchanged, until dropped,
        // and it is dropped only with the `AsyncFd` that holds it.
        let inotify = unsafe { AsyncFd::register_with_interest(inotify, Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        let folders = Folders::default();
        let reader = tokio::spawn(read(inotify, Arc::clone(&folders))).abort_handle();
        Ok(Hub {
            watches,
            folders,
            reader,
        })
    }

    /// Adds (or extends) the watch on `folder`. A blocking call: the path is looked up.
    pub fn add(&self, folder: &Path, mask: WatchMask) -> io::Result<WatchDescriptor> {
        self.watches.clone().add(folder, mask | WatchMask::MASK_ADD)
    }

    /// Puts `subscriber` on the watch `new`, taking it off `old`; `true` when it was not on
    /// `new` already.
    pub fn subscribe(
        &self,
        subscriber: Subscriber,
        old: Option<&WatchDescriptor>,
        new: WatchDescriptor,
    ) -> bool {
        if let Some(old) = old.filter(|&old| *old != new) {
            self.unsubscribe(&subscriber.wakers, old);
        }
        let mut folders = self.folders.lock().expect("folders lock");
        let subscribers = folders.entry(new).or_default();
        let before = subscribers.len();
        subscribers.retain(|s| !Arc::ptr_eq(&s.wakers, &subscriber.wakers));
        let fresh = subscribers.len() == before;
        subscribers.push(subscriber);
        fresh
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

    /// Whether this thread's hub is open.
    #[cfg(test)]
    pub fn in_use() -> bool {
        HUB.with(|slot| slot.borrow().strong_count() > 0)
    }

    /// How many folders are watched.
    #[cfg(test)]
    pub fn watched(&self) -> usize {
        self.folders.lock().expect("folders lock").len()
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Reads events until the hub stops, waking each event's folder's subscribers. On a read
/// error it stops: the targets are polled from then on.
async fn read(mut inotify: AsyncFd<Inotify>, folders: Folders) {
    let mut buffer = [0u8; 4096];
    loop {
        let Ok(mut guard) = inotify.readable_mut().await else {
            return;
        };
        let read = guard.try_io(|inotify| {
            let events = inotify.get_mut().read_events(&mut buffer)?;
            let mut folders = folders.lock().expect("folders lock");
            for event in events {
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    // Events were lost: every folder may have changed.
                    folders.values().flatten().for_each(|s| s.wake(None));
                } else if let Some(subscribers) = folders.get(&event.wd) {
                    subscribers.iter().for_each(|s| s.wake(event.name));
                    if event.mask.contains(EventMask::IGNORED) {
                        // The kernel dropped the watch: the folder is gone.
                        folders.remove(&event.wd);
                    }
                }
            }
            Ok(())
        });
        if let Ok(Err(_)) = read {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existence_alone_is_not_woken_by_writes() {
        let content = WatchMask::CLOSE_WRITE | WatchMask::ATTRIB;
        assert!(!mask(Wake::OnEntries).intersects(content));
        assert!(!mask(Wake::OnContent).contains(WatchMask::MODIFY));
        assert!(mask(Wake::OnContent).contains(content | mask(Wake::OnEntries)));
    }
}
