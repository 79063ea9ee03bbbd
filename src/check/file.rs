//! `file:///PATH`: ready when the path exists and, with `--contains`/`--matches`, its content
//! matches. File-system events (inotify) wake the retry loop at once; polling remains the
//! fallback for file systems without events.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use inotify::{Inotify, WatchDescriptor, WatchMask};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::engine::Reason;
use crate::matcher::{Matcher, MAX_BODY};
use crate::transport::describe_io;

/// One attempt: does the path exist (following symlinks, as a ConfigMap mount needs), and
/// does its content match?
pub fn check(path: &Path, matcher: Option<&Matcher>) -> Result<(), Reason> {
    let metadata = std::fs::metadata(path).map_err(|e| describe_io(&e))?;
    let Some(matcher) = matcher else {
        return Ok(());
    };
    if metadata.is_dir() {
        return Err("is a directory".into());
    }
    if !metadata.is_file() {
        return Err("not a regular file".into());
    }
    let content =
        read_head(path, MAX_BODY as u64).map_err(|e| format!("reading: {}", describe_io(&e)))?;
    if matcher.is_match(&content) {
        Ok(())
    } else {
        Err(matcher.failure("content"))
    }
}

/// The first `limit` bytes of a regular file; non-blocking open so a path swapped for a FIFO
/// cannot hang. Anything but a regular file is `InvalidInput`, saying what it is.
pub fn read_head(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        let what = if metadata.is_dir() {
            "is a directory"
        } else {
            "is not a regular file"
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
    }
    let mut content = Vec::new();
    file.take(limit).read_to_end(&mut content)?;
    Ok(content)
}

/// Which changes in the watched folder wake the retry loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Entries appearing, going or being renamed: all that matters when only existence does.
    OnEntries,
    /// Also writes to the entries and changes of their attributes: for content that must match.
    OnContent,
}

impl Wake {
    /// The inotify events for this kind of wake-up. A file that only has to exist is not
    /// woken by every write to every file in its folder (a busy `/tmp`, a log folder): each
    /// such wake-up would be a needless attempt.
    fn mask(self) -> WatchMask {
        let entries = WatchMask::CREATE
            | WatchMask::MOVED_TO
            | WatchMask::MOVED_FROM
            | WatchMask::DELETE
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF;
        match self {
            Wake::OnEntries => entries,
            Wake::OnContent => {
                entries | WatchMask::CLOSE_WRITE | WatchMask::MODIFY | WatchMask::ATTRIB
            }
        }
    }
}

/// inotify on the nearest existing folder of the target path, re-aimed after every event so a
/// file inside folders that do not exist yet is still noticed the moment it appears.
pub struct FileWatch {
    /// The inotify instance, registered with the runtime.
    inotify: AsyncFd<Inotify>,
    /// The target path.
    path: PathBuf,
    /// The folder watched now, and its watch.
    watching: Option<(PathBuf, WatchDescriptor)>,
    /// The events that wake it.
    wake: Wake,
}

impl FileWatch {
    /// Starts watching; `None` when inotify is unavailable (then the target is only polled).
    pub fn new(path: &Path, wake: Wake) -> Option<FileWatch> {
        let inotify = Inotify::init().ok()?;
        // SAFETY: `Inotify` owns its descriptor and keeps it open, unchanged, until dropped,
        // and it is dropped only with the `AsyncFd` that holds it.
        let inotify =
            unsafe { AsyncFd::register_with_interest(inotify, Interest::READABLE) }.ok()?;
        let mut watch = FileWatch {
            inotify,
            path: path.to_path_buf(),
            watching: None,
            wake,
        };
        watch.aim();
        Some(watch)
    }

    /// Watches the nearest existing ancestor folder of the path, if it changed.
    fn aim(&mut self) {
        let Some(folder) = nearest_existing_folder(&self.path) else {
            return;
        };
        if self.watching.as_ref().is_some_and(|(f, _)| *f == folder) {
            return;
        }
        let mut watches = self.inotify.get_ref().watches();
        if let Some((_, old)) = self.watching.take() {
            let _ = watches.remove(old);
        }
        if let Ok(descriptor) = watches.add(&folder, self.wake.mask()) {
            self.watching = Some((folder, descriptor));
        }
    }

    /// Resolves after the next batch of events in the watched folder.
    pub async fn changed(&mut self) {
        let mut buffer = [0u8; 4096];
        loop {
            let Ok(mut guard) = self.inotify.readable_mut().await else {
                return std::future::pending().await;
            };
            match guard.try_io(|inner| inner.get_mut().read_events(&mut buffer).map(|e| e.count()))
            {
                Ok(Ok(_)) => break,
                Ok(Err(_)) => return std::future::pending().await,
                Err(_would_block) => continue,
            }
        }
        self.aim();
    }
}

/// The path's parent if it exists, else the closest ancestor that does.
fn nearest_existing_folder(path: &Path) -> Option<PathBuf> {
    let mut folder = match path.parent() {
        Some(parent) if parent.as_os_str().is_empty() => Path::new(".").to_path_buf(),
        Some(parent) => parent.to_path_buf(),
        None => return None,
    };
    loop {
        if folder.is_dir() {
            return Some(folder);
        }
        folder = match folder.parent() {
            Some(parent) if parent.as_os_str() != OsStr::new("") => parent.to_path_buf(),
            _ => return None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existence_alone_is_not_woken_by_writes() {
        let content = WatchMask::CLOSE_WRITE | WatchMask::MODIFY | WatchMask::ATTRIB;
        assert!(!Wake::OnEntries.mask().intersects(content));
        assert!(Wake::OnContent
            .mask()
            .contains(content | Wake::OnEntries.mask()));
    }

    #[test]
    fn nearest_folder_climbs_to_what_exists() {
        let base = std::env::temp_dir();
        let path = base.join("readygate-no-such-dir/a/b/ready");
        assert_eq!(nearest_existing_folder(&path), Some(base.clone()));
        assert_eq!(nearest_existing_folder(&base.join("ready")), Some(base));
        assert_eq!(
            nearest_existing_folder(Path::new("./ready")),
            Some(PathBuf::from("."))
        );
    }
}
