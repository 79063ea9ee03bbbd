//! `file:///PATH`: ready when the path exists and, with `--contains`/`--matches`, its content
//! matches. File-system events (inotify) wake the retry loop at once; polling remains the
//! fallback where there are no events.

mod inotify;

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ::inotify::{WatchDescriptor, WatchMask};
use tokio::time::{Duration, Instant};

use super::offload::Lane;
use crate::engine::Watch;
use crate::error::{describe_io, Failure};
use crate::matcher::{Matcher, MAX_BODY};
use inotify::{Hub, Subscriber, Wakers};

/// Least time between wake-ups caused by the folder's other entries: a folder written to
/// constantly (logs) would otherwise have the target tried again on every event.
const OTHERS_EVERY: Duration = Duration::from_millis(250);

/// One attempt: does the path exist (following symlinks, as a ConfigMap mount needs), and
/// does its content match?
pub fn check(path: &Path, matcher: Option<&Matcher>) -> Result<(), Failure> {
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
    let content = crate::regular_file::read_head(path, MAX_BODY as u64)
        .map_err(|e| format!("reading: {}", describe_io(&e)))?;
    if matcher.is_match(&content) {
        Ok(())
    } else {
        Err(Failure::Mismatch(matcher.failure("content")))
    }
}

/// Which changes in the watched folder wake the retry loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Entries appearing, going or being renamed: all that matters when only existence does
    /// (so writes to the other files of a busy folder wake nothing).
    OnEntries,
    /// Also writes to the entries and changes of their attributes: for content that must match.
    OnContent,
}

/// Events on the nearest existing folder of the target path, re-aimed when that may be another
/// folder now, so a file inside folders that do not exist yet is noticed the moment it appears.
/// Finding and watching the folder are file-system calls: they run in the target's lane.
pub struct FileWatch {
    aim: Arc<Aim>,
    /// When `changed` last returned, to space out wake-ups by other entries.
    last: Option<Instant>,
}

/// The watch's state, shared with the lane's jobs that (re-)aim it.
struct Aim {
    lane: Lane,
    hub: Arc<Hub>,
    path: PathBuf,
    /// The folder the path's file would be in.
    parent: Option<PathBuf>,
    mask: WatchMask,
    wakers: Arc<Wakers>,
    /// The folder watched now and its watch, once set.
    current: Mutex<Option<(PathBuf, WatchDescriptor)>>,
    /// A job to re-aim is queued or running.
    pending: AtomicBool,
}

impl FileWatch {
    /// Starts watching in `lane` (before any attempt queued after this call); `None` when the
    /// kernel offers no events here (then the target is only polled).
    pub fn new(path: &Path, wake: Wake, lane: &Lane) -> Option<FileWatch> {
        let aim = Arc::new(Aim {
            lane: lane.clone(),
            hub: Hub::shared()?,
            path: path.to_path_buf(),
            parent: parent_of(path),
            mask: inotify::mask(wake),
            wakers: Arc::default(),
            current: Mutex::default(),
            pending: AtomicBool::new(false),
        });
        aim.reaim();
        Some(FileWatch { aim, last: None })
    }
}

impl Watch for FileWatch {
    async fn changed(&mut self) {
        let Wakers { own, others, stale } = &*self.aim.wakers;
        // Cancellation: both arms are cancel-safe; a wake-up that is not taken stays stored.
        tokio::select! {
            () = own.notified() => {}
            () = others.notified() => {
                // Another entry of a busy folder (a log being written): at most one wake-up
                // per OTHERS_EVERY, unless the target's own entry changes meanwhile.
                if let Some(last) = self.last {
                    tokio::select! {
                        () = tokio::time::sleep_until(last + OTHERS_EVERY) => {}
                        () = own.notified() => {}
                    }
                }
            }
        }
        self.last = Some(Instant::now());
        // The nearest existing folder may be another one now: an ancestor is watched (the one
        // below may have appeared), or the watched folder went away.
        let aim = &self.aim;
        let at_parent = matches!(&*aim.current.lock().expect("watch lock"),
            Some((at, _)) if Some(at) == aim.parent.as_ref());
        if !at_parent || stale.load(Ordering::Acquire) {
            aim.reaim();
        }
    }
}

impl Aim {
    /// Queues a job to aim the watch, unless one is queued or running.
    fn reaim(self: &Arc<Self>) {
        if !self.pending.swap(true, Ordering::AcqRel) {
            let aim = Arc::clone(self);
            self.lane.start(move || aim.aim());
        }
    }

    /// Watches the nearest existing folder of the path; after a move to another folder, wakes
    /// the target once, for what changed before the new watch was set.
    fn aim(&self) {
        self.pending.store(false, Ordering::Release);
        self.wakers.stale.store(false, Ordering::Release);
        let Some(folder) = nearest_existing_folder(&self.path) else {
            return;
        };
        let Ok(wd) = self.hub.watches.clone().add(&folder, self.mask) else {
            return;
        };
        let mut current = self.current.lock().expect("watch lock");
        let old = current.take().map(|(_, wd)| wd);
        let subscriber = Subscriber {
            wakers: Arc::clone(&self.wakers),
            name: entry_below(&folder, &self.path),
        };
        if self.hub.subscribe(subscriber, old.as_ref(), wd.clone()) && old.is_some() {
            self.wakers.own.notify_one();
        }
        *current = Some((folder, wd));
    }
}

impl Drop for Aim {
    fn drop(&mut self) {
        if let Some((_, wd)) = self.current.get_mut().ok().and_then(Option::take) {
            self.hub.unsubscribe(&self.wakers, &wd);
        }
    }
}

/// The entry of `folder` that `path` goes through: the file itself when `folder` is its
/// parent, else the next folder down; `None` when that cannot be told (events then all count).
fn entry_below(folder: &Path, path: &Path) -> Option<std::ffi::OsString> {
    let bare = (folder == Path::new(".")).then_some(path);
    let rest = path.strip_prefix(folder).ok().or(bare)?;
    match rest.components().find(|c| *c != Component::CurDir)? {
        Component::Normal(name) => Some(name.to_os_string()),
        _ => None,
    }
}

/// The folder a file at `path` would be in (`.` for a bare name).
fn parent_of(path: &Path) -> Option<PathBuf> {
    let parent = path.parent()?;
    let bare = parent.as_os_str().is_empty();
    Some(if bare { Path::new(".") } else { parent }.to_path_buf())
}

/// The path's parent if it exists, else the closest ancestor that does.
fn nearest_existing_folder(path: &Path) -> Option<PathBuf> {
    let parent = parent_of(path)?;
    let mut ancestors = parent.ancestors().take_while(|a| !a.as_os_str().is_empty());
    ancestors.find(|a| a.is_dir()).map(Path::to_path_buf)
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
