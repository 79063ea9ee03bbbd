//! `file:///PATH`: ready when the path exists and, with `--contains`/`--matches`, its content
//! matches. File-system events (inotify) wake the retry loop at once; polling remains the
//! fallback where there are no events.

mod inotify;

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ::inotify::{WatchDescriptor, WatchMask};
use tokio::time::{Duration, Instant};

use super::url_parts::TargetUrl;
use super::Kind;
use crate::engine::Watch;
use crate::error::{describe_io, Failure};
use crate::grammar::matcher::{Matcher, MAX_BODY};
pub use inotify::HubSlot;
use inotify::{Hub, Subscriber, Wakers};

/// Least time between wake-ups caused by the folder's other entries: a folder written to
/// constantly (logs) would otherwise have the target tried again on every event.
const OTHERS_EVERY: Duration = Duration::from_millis(250);

/// Parses a `file://` URL.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    url_path(url.rest).map(Kind::File)
}

/// The path of a `file:///ABS` or `unix:///ABS` URL (`rest` is what follows `://`).
pub fn url_path(rest: &str) -> Result<PathBuf, String> {
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return Err("expected an absolute path after ://, as in file:///tmp/ready".into());
    }
    if path.len() == 1 {
        return Err("missing path".into());
    }
    Ok(PathBuf::from(path))
}

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
        Err(Failure::Text(matcher.failure("content")))
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
/// Aiming is file-system work: each attempt's lane job does it ([`Aim::refresh`]) before it
/// reads, so the read sees whatever changed before the watch was set.
pub struct FileWatch {
    pub aim: Arc<Aim>,
    /// When `changed` last returned, to space out wake-ups by other entries.
    last: Option<Instant>,
}

/// The watch's state, shared with the lane's jobs that (re-)aim it.
pub struct Aim {
    hub: Arc<Hub>,
    path: PathBuf,
    mask: WatchMask,
    wakers: Arc<Wakers>,
    /// The folder watched now and its watch, once set.
    current: Mutex<Option<(PathBuf, WatchDescriptor)>>,
}

impl FileWatch {
    /// A watch aimed by the first [`Aim::refresh`], on the hub in `slot`; `None` when the
    /// kernel offers no events here (then the target is only polled).
    pub fn new(path: &Path, wake: Wake, slot: &HubSlot) -> Option<FileWatch> {
        let aim = Arc::new(Aim {
            hub: Hub::shared(slot)?,
            path: path.to_path_buf(),
            mask: inotify::mask(wake),
            wakers: Arc::default(),
            current: Mutex::default(),
        });
        Some(FileWatch { aim, last: None })
    }
}

impl Watch for FileWatch {
    async fn changed(&mut self) {
        let Wakers { own, others, .. } = &*self.aim.wakers;
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
    }
}

impl Aim {
    /// Watches the nearest existing folder of the path, unless that folder's watch stands
    /// already: the folder below may have appeared, or the watched one gone.
    pub fn refresh(&self) {
        self.refresh_with(|| {});
    }

    /// [`Aim::refresh`], calling `between` after a folder is chosen and before it is watched
    /// (where a test makes the folder below appear).
    fn refresh_with(&self, between: impl Fn()) {
        // A folder created between the look and the watch sent its event to nobody: after each
        // watch, look again. Bounded, in case folders keep coming and going.
        for _ in 0..=self.path.components().count() {
            let Some(folder) = nearest_existing_folder(&self.path) else {
                return;
            };
            let stale = self.wakers.stale.swap(false, Ordering::AcqRel);
            let mut current = self.current.lock().expect("watch lock");
            if !stale && matches!(&*current, Some((at, _)) if *at == folder) {
                return;
            }
            between();
            let Ok(wd) = self.hub.watches.clone().add(&folder, self.mask) else {
                return;
            };
            let old = current.take().map(|(_, wd)| wd);
            let subscriber = Subscriber {
                wakers: Arc::clone(&self.wakers),
                name: entry_below(&folder, &self.path),
            };
            self.hub.subscribe(subscriber, old.as_ref(), wd.clone());
            *current = Some((folder, wd));
        }
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

/// The path's parent (`.` for a bare name) if it exists, else the closest ancestor that does.
fn nearest_existing_folder(path: &Path) -> Option<PathBuf> {
    let parent = path.parent()?;
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let mut ancestors = parent.ancestors().take_while(|a| !a.as_os_str().is_empty());
    ancestors.find(|a| a.is_dir()).map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_folder_made_between_the_look_and_the_watch_is_followed() {
        let base = std::env::temp_dir().join(format!("readygate-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let (sub, ready) = (base.join("sub"), base.join("sub/ready"));
        let slot = HubSlot::default();
        let mut watch = FileWatch::new(&ready, Wake::OnEntries, &slot).unwrap();
        // `sub` appears after its parent was chosen and before the parent's watch is set: no
        // event for it ever comes.
        watch.aim.refresh_with(|| _ = std::fs::create_dir(&sub));
        let watched = watch
            .aim
            .current
            .lock()
            .unwrap()
            .as_ref()
            .map(|(at, _)| at.clone());
        assert_eq!(
            watched,
            Some(sub.clone()),
            "the new folder is watched at once"
        );
        std::fs::write(&ready, "").unwrap();
        let within = std::time::Duration::from_secs(5);
        let woken = tokio::time::timeout(within, watch.changed()).await;
        assert!(woken.is_ok(), "the file in the new folder woke nothing");
        std::fs::remove_dir_all(&base).unwrap();
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
