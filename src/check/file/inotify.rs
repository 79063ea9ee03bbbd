//! Folder events through one inotify instance for the whole run: every file target watching
//! a folder shares that folder's one watch, so a thousand targets cost one descriptor.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::Path;
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

/// The run's inotify instance; its events are read by a task on the runtime and passed to the
/// subscribers of the folder they concern.
pub struct Hub {
    /// Adds and removes watches; usable from any thread.
    watches: Watches,
    /// The watched folders, by watch.
    folders: Arc<Mutex<HashMap<WatchDescriptor, Folder>>>,
    /// The task reading events, stopped with the hub.
    reader: AbortHandle,
}

/// Who to wake for a folder's events, and for which entry.
#[derive(Clone)]
pub struct Subscriber {
    /// Woken by events on `name` or on the folder itself: the target may have changed.
    pub own: Arc<Notify>,
    /// Woken by events on the folder's other entries: the watch rate-limits these.
    pub others: Arc<Notify>,
    /// The entry the target depends on (its file, or the next folder down its path); `None`:
    /// every event is its own.
    pub name: Option<OsString>,
}

impl Subscriber {
    fn wake(&self, entry: Option<&OsStr>) {
        match (&self.name, entry) {
            (Some(name), Some(entry)) if name != entry => self.others.notify_one(),
            _ => self.own.notify_one(),
        }
    }
}

/// One watched folder.
#[derive(Default)]
struct Folder {
    /// Who to wake on its events.
    subscribers: Vec<Subscriber>,
    /// The folder was moved away: the path may name another folder now.
    moved: bool,
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
        let folders = Arc::new(Mutex::new(HashMap::new()));
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

    /// Moves `subscriber` (known by its `own`) from the watch `old` to `new`; `false` when it
    /// was already on `new`.
    pub fn subscribe(
        &self,
        subscriber: Subscriber,
        old: Option<&WatchDescriptor>,
        new: WatchDescriptor,
    ) -> bool {
        let wake = &subscriber.own;
        let mut folders = self.folders.lock().expect("folders lock");
        if old == Some(&new) {
            if let Some(folder) = folders.get_mut(&new) {
                if let Some(held) = folder
                    .subscribers
                    .iter_mut()
                    .find(|s| Arc::ptr_eq(&s.own, wake))
                {
                    *held = subscriber;
                    let moved = std::mem::take(&mut folder.moved);
                    return moved;
                }
            }
        }
        if let Some(old) = old {
            self.leave(&mut folders, wake, old);
        }
        let folder = folders.entry(new).or_default();
        folder.moved = false;
        folder.subscribers.retain(|s| !Arc::ptr_eq(&s.own, wake));
        folder.subscribers.push(subscriber);
        true
    }

    /// Takes `wake` off the watch `old`, removing the watch when nobody else uses it.
    pub fn unsubscribe(&self, wake: &Arc<Notify>, old: &WatchDescriptor) {
        let mut folders = self.folders.lock().expect("folders lock");
        self.leave(&mut folders, wake, old);
    }

    /// Whether `wake` is still on the watch `wd` and its folder was not moved away.
    pub fn follows(&self, wake: &Arc<Notify>, wd: &WatchDescriptor) -> bool {
        let folders = self.folders.lock().expect("folders lock");
        folders
            .get(wd)
            .is_some_and(|folder| !folder.moved && holds(folder, wake))
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

    fn leave(
        &self,
        folders: &mut HashMap<WatchDescriptor, Folder>,
        wake: &Arc<Notify>,
        old: &WatchDescriptor,
    ) {
        let Some(folder) = folders.get_mut(old) else {
            return;
        };
        folder
            .subscribers
            .retain(|other| !Arc::ptr_eq(&other.own, wake));
        if folder.subscribers.is_empty() {
            folders.remove(old);
            let _ = self.watches.clone().remove(old.clone());
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn holds(folder: &Folder, wake: &Arc<Notify>) -> bool {
    folder
        .subscribers
        .iter()
        .any(|other| Arc::ptr_eq(&other.own, wake))
}

/// Reads events until the hub stops, waking each event's folder's subscribers. On a read
/// error it stops: the targets are polled from then on.
async fn read(
    mut inotify: AsyncFd<Inotify>,
    folders: Arc<Mutex<HashMap<WatchDescriptor, Folder>>>,
) {
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
                    for folder in folders.values() {
                        folder.subscribers.iter().for_each(|s| s.own.notify_one());
                    }
                    continue;
                }
                let Some(folder) = folders.get_mut(&event.wd) else {
                    continue;
                };
                folder.subscribers.iter().for_each(|s| s.wake(event.name));
                if event.mask.contains(EventMask::IGNORED) {
                    // The kernel dropped the watch (the folder is gone): its subscribers
                    // find it missing and look for the nearest folder again.
                    folders.remove(&event.wd);
                } else if event.mask.contains(EventMask::MOVE_SELF) {
                    folder.moved = true;
                }
            }
            Ok(())
        });
        match read {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return,
            Err(_would_block) => continue,
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
