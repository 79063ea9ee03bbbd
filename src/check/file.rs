//! `file:///PATH`: ready when the path exists and, with `--contains`/`--matches`, its content
//! matches. File-system events (dnotify, else inotify) wake the retry loop at once; polling
//! remains the fallback for file systems without events.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::engine::Reason;
use crate::matcher::{Matcher, MAX_BODY};
use crate::transport::describe_io;

mod dnotify;
mod inotify;

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
    /// A file that only has to exist is not woken by every write to every file in its folder
    /// (a busy `/tmp`, a log folder): each such wake-up would be a needless attempt.
    OnEntries,
    /// Also writes to the entries and changes of their attributes: for content that must match.
    OnContent,
}

/// Folder events from whichever kernel interface this machine offers.
enum Events {
    /// dnotify: closing it does not wait for the kernel (see that module).
    Dnotify(dnotify::Watcher),
    /// inotify, where dnotify is unavailable.
    Inotify(inotify::Watcher),
}

impl Events {
    /// dnotify if it can watch `folder`, else inotify; `None` when neither can.
    fn new(folder: &Path, wake: Wake) -> Option<Events> {
        if let Ok(watcher) = dnotify::Watcher::new(folder, wake) {
            return Some(Events::Dnotify(watcher));
        }
        inotify::Watcher::new(folder, wake)
            .ok()
            .map(Events::Inotify)
    }

    /// Watches `folder` if it is not the folder watched already.
    fn aim(&mut self, folder: &Path) -> io::Result<()> {
        match self {
            Events::Dnotify(watcher) => watcher.aim(folder),
            Events::Inotify(watcher) => watcher.aim(folder),
        }
    }

    async fn changed(&mut self) {
        match self {
            Events::Dnotify(watcher) => watcher.changed().await,
            Events::Inotify(watcher) => watcher.changed().await,
        }
    }
}

/// Events on the nearest existing folder of the target path, re-aimed after every event so a
/// file inside folders that do not exist yet is still noticed the moment it appears.
pub struct FileWatch {
    /// The folder's events.
    events: Events,
    /// The target path.
    path: PathBuf,
}

impl FileWatch {
    /// Starts watching; `None` when the kernel offers no events here (then the target is only
    /// polled).
    pub fn new(path: &Path, wake: Wake) -> Option<FileWatch> {
        let folder = nearest_existing_folder(path)?;
        Some(FileWatch {
            events: Events::new(&folder, wake)?,
            path: path.to_path_buf(),
        })
    }

    /// Watches the nearest existing ancestor folder of the path, if that is another folder
    /// now (another name, or the same name for a folder made again).
    fn aim(&mut self) {
        if let Some(folder) = nearest_existing_folder(&self.path) {
            let _ = self.events.aim(&folder);
        }
    }

    /// Resolves after the next change in the watched folder.
    pub async fn changed(&mut self) {
        self.events.changed().await;
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
