//! Folder events through inotify: the fallback where dnotify is unavailable (gVisor, a kernel
//! without `CONFIG_DNOTIFY`). Closing it at exit costs the kernel's mark-reaper wait that
//! [`super::dnotify`] avoids, but it reports at once, and it sees the watched folder itself
//! deleted or moved.

use std::io;
use std::path::Path;

use inotify::{Inotify, WatchDescriptor, WatchMask};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use super::Wake;

/// The inotify events for this kind of wake-up.
fn mask(wake: Wake) -> WatchMask {
    let entries = WatchMask::CREATE
        | WatchMask::MOVED_TO
        | WatchMask::MOVED_FROM
        | WatchMask::DELETE
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF;
    match wake {
        Wake::OnEntries => entries,
        Wake::OnContent => entries | WatchMask::CLOSE_WRITE | WatchMask::MODIFY | WatchMask::ATTRIB,
    }
}

/// One inotify instance watching one folder at a time, re-aimed by [`super::FileWatch`].
pub struct Watcher {
    /// The instance, registered with the runtime.
    inotify: AsyncFd<Inotify>,
    /// The folder's watch.
    watch: WatchDescriptor,
    /// The events asked for.
    mask: WatchMask,
}

impl Watcher {
    /// Watches `folder`.
    pub fn new(folder: &Path, wake: Wake) -> io::Result<Watcher> {
        let inotify = Inotify::init()?;
        let mask = mask(wake);
        let watch = inotify.watches().add(folder, mask)?;
        // SAFETY: `Inotify` owns its descriptor and keeps it open, unchanged, until dropped,
        // and it is dropped only with the `AsyncFd` that holds it.
        let inotify = unsafe { AsyncFd::register_with_interest(inotify, Interest::READABLE) }?;
        Ok(Watcher {
            inotify,
            watch,
            mask,
        })
    }

    /// Watches `folder` instead; the old folder stays watched if the new one cannot be.
    pub fn aim(&mut self, folder: &Path) -> io::Result<()> {
        let mut watches = self.inotify.get_ref().watches();
        let watch = watches.add(folder, self.mask)?;
        if watch != self.watch {
            let _ = watches.remove(std::mem::replace(&mut self.watch, watch));
        }
        Ok(())
    }

    /// Resolves after the next batch of events.
    pub async fn changed(&mut self) {
        let mut buffer = [0u8; 4096];
        loop {
            let Ok(mut guard) = self.inotify.readable_mut().await else {
                return std::future::pending().await;
            };
            match guard.try_io(|inner| inner.get_mut().read_events(&mut buffer).map(|e| e.count()))
            {
                Ok(Ok(_)) => return,
                Ok(Err(_)) => return std::future::pending().await,
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn existence_alone_is_not_woken_by_writes() {
        let content = WatchMask::CLOSE_WRITE | WatchMask::MODIFY | WatchMask::ATTRIB;
        assert!(!mask(Wake::OnEntries).intersects(content));
        assert!(mask(Wake::OnContent).contains(content | mask(Wake::OnEntries)));
    }

    #[tokio::test]
    async fn wakes_for_an_entry_and_follows_a_new_folder() {
        let base = std::env::temp_dir().join(format!("readygate-inotify-{}", std::process::id()));
        let (one, two) = (base.join("one"), base.join("two"));
        std::fs::create_dir_all(&one).unwrap();
        std::fs::create_dir_all(&two).unwrap();
        let mut watcher = Watcher::new(&one, Wake::OnEntries).unwrap();
        let within = Duration::from_secs(2);
        std::fs::write(one.join("ready"), "").unwrap();
        tokio::time::timeout(within, watcher.changed())
            .await
            .unwrap();
        watcher.aim(&two).unwrap();
        // Removing the old watch queues its IN_IGNORED: one spurious wake-up, at once.
        tokio::time::timeout(within, watcher.changed())
            .await
            .unwrap();
        std::fs::write(one.join("ignored"), "").unwrap();
        let quiet = tokio::time::timeout(Duration::from_millis(100), watcher.changed()).await;
        assert!(quiet.is_err(), "woke for the folder it no longer watches");
        std::fs::write(two.join("ready"), "").unwrap();
        tokio::time::timeout(within, watcher.changed())
            .await
            .unwrap();
        std::fs::remove_dir_all(&base).unwrap();
    }
}
