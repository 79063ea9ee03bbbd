//! Folder events through dnotify (`fcntl(F_NOTIFY)`), the way readygate hears of them first.
//!
//! Why not inotify: closing an inotify instance that holds a watch makes the kernel wait for
//! its mark reaper (`fsnotify_destroy_group` → `synchronize_srcu`), 5–17 ms for most closes
//! on the benchmark machine, and readygate closes it exactly when the file has appeared: at
//! exit, or at the exec of COMMAND. dnotify's marks belong to one group the kernel keeps for
//! its whole life, so closing a watched folder does not wait: in C, creation to reaped exit
//! took 0.3–0.5 ms in 20 of 20 trials, against 0.4–13 ms (median ~5) for inotify.
//!
//! dnotify reports with a signal. readygate asks for SIGURG, whose default action is to
//! ignore it: it is blocked in the thread that watches and read there through a signalfd, and
//! one that lands anywhere else (a thread that does not block it, or COMMAND after the exec
//! has reset the signal mask) is dropped instead of killing the process, as SIGIO would. A
//! standard signal is queued once however many events arrive, so it never overflows; the
//! price is that it says only "something changed", so every folder watched by the thread is
//! woken and its file checked again.
//!
//! Unlike inotify, dnotify has no event for the watched folder itself being deleted or
//! moved, so the folder above it is armed too, for entries going or renamed only: the
//! folder's own removal or swap wakes the watch, which then follows what stands at the path.

use std::cell::RefCell;
use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use super::Wake;
use crate::signal::{Listener, NOTICE};

/// Whether [`abi`] holds this architecture's numbers: the generic `fcntl` ones. Elsewhere
/// (alpha, mips, parisc, sparc number them otherwise) dnotify is not used and inotify serves.
const ABI_KNOWN: bool = cfg!(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
));

/// The kernel's ABI for dnotify and signal routing, with the generic `fcntl` numbers; the libc
/// crate does not export them for glibc.
mod abi {
    /// `fcntl` command: the signal sent on I/O readiness, here on a folder change.
    pub const F_SETSIG: libc::c_int = 10;
    /// `fcntl` command: who receives that signal, as an `f_owner_ex`.
    pub const F_SETOWN_EX: libc::c_int = 15;
    /// `f_owner_ex.type`: one thread, not the whole process.
    pub const F_OWNER_TID: libc::c_int = 0;
    /// A file in the folder was written to.
    pub const DN_MODIFY: libc::c_ulong = 0x2;
    /// An entry appeared (created, linked, or moved in).
    pub const DN_CREATE: libc::c_ulong = 0x4;
    /// An entry went (unlinked, or moved out).
    pub const DN_DELETE: libc::c_ulong = 0x8;
    /// An entry was renamed within the folder.
    pub const DN_RENAME: libc::c_ulong = 0x10;
    /// An entry's attributes changed.
    pub const DN_ATTRIB: libc::c_ulong = 0x20;
    /// Keep reporting after the first event.
    pub const DN_MULTISHOT: libc::c_ulong = 0x8000_0000;

    /// The kernel's `struct f_owner_ex`.
    #[repr(C)]
    pub struct OwnerEx {
        /// `F_OWNER_TID`.
        pub kind: libc::c_int,
        /// The thread's id.
        pub pid: libc::pid_t,
    }
}

/// The folder events that wake a file target of this kind.
fn mask(wake: Wake) -> libc::c_ulong {
    use abi::*;
    let entries = DN_CREATE | DN_DELETE | DN_RENAME;
    match wake {
        Wake::OnEntries => entries | DN_MULTISHOT,
        Wake::OnContent => entries | DN_MODIFY | DN_ATTRIB | DN_MULTISHOT,
    }
}

/// The thread's one reader of NOTICE: a signal that is pending once for any number of events
/// can be read by one reader only, so every watch on the thread shares it and learns of a
/// reading through `readings`.
struct Notices {
    /// NOTICE, blocked and read from a signalfd.
    listener: Listener,
    /// How many times NOTICE was read: a watch that saw fewer has been notified.
    readings: AtomicU64,
}

thread_local! {
    /// This thread's reader while any watch holds it. Per thread, because a signalfd reports
    /// the signals of the thread that reads or polls it, and the signals are sent to the
    /// thread that armed the folder.
    static NOTICES: RefCell<Weak<Notices>> = const { RefCell::new(Weak::new()) };
}

impl Notices {
    /// This thread's reader, made on first use: blocks NOTICE in this thread (threads it
    /// starts later inherit that) and opens the signalfd.
    fn shared() -> io::Result<Arc<Notices>> {
        NOTICES.with(|slot| {
            if let Some(notices) = slot.borrow().upgrade() {
                return Ok(notices);
            }
            let notices = Arc::new(Notices::open()?);
            *slot.borrow_mut() = Arc::downgrade(&notices);
            Ok(notices)
        })
    }

    fn open() -> io::Result<Notices> {
        Ok(Notices {
            listener: Listener::try_new(&[NOTICE])?,
            readings: AtomicU64::new(0),
        })
    }
}

/// dnotify on one folder at a time (and the one above it), re-aimed by
/// [`super::FileWatch`].
pub struct Watcher {
    /// The thread's reader of NOTICE.
    notices: Arc<Notices>,
    /// The folder armed now, and the one above it; closing them disarms them.
    armed: Armed,
    /// The events asked for.
    mask: libc::c_ulong,
    /// `notices.readings` when this watch last woke.
    seen: u64,
}

impl Watcher {
    /// Arms `folder`; fails where dnotify is unavailable (compiled out of the kernel,
    /// `fs.dir-notify-enable = 0`, a sandbox such as gVisor) or the folder cannot be opened.
    pub fn new(folder: &Path, wake: Wake) -> io::Result<Watcher> {
        if !ABI_KNOWN {
            return Err(io::ErrorKind::Unsupported.into());
        }
        let notices = Notices::shared()?;
        let mask = mask(wake);
        let armed = Armed::new(folder, mask)?;
        let seen = notices.readings.load(Ordering::Acquire);
        Ok(Watcher {
            notices,
            armed,
            mask,
            seen,
        })
    }

    /// Watches the folder now at `folder`, unless that is the one watched already; the old
    /// folder stays watched if the new one cannot be.
    pub fn aim(&mut self, folder: &Path) -> io::Result<()> {
        if !self.armed.is_at(folder) {
            self.armed = Armed::new(folder, self.mask)?;
        }
        Ok(())
    }

    /// Resolves once NOTICE has been read since this watch last woke: something changed in
    /// one of the thread's watched folders, maybe this one.
    pub async fn changed(&mut self) {
        loop {
            let readings = self.notices.readings.load(Ordering::Acquire);
            if readings != self.seen {
                self.seen = readings;
                return;
            }
            // A reading by another watch on the thread wakes this one too (the loop above).
            if self.notices.listener.take().await.is_some() {
                self.notices.readings.fetch_add(1, Ordering::AcqRel);
            }
        }
    }
}

/// The events on the folder above: its entries going or renamed, as the watched folder
/// itself does when it is removed or swapped.
const ABOVE: libc::c_ulong = abi::DN_DELETE | abi::DN_RENAME | abi::DN_MULTISHOT;

/// A folder armed for the target's events, and the folder above it for entries going.
struct Armed {
    /// The folder the target is in, or its nearest existing ancestor; held open to stay armed.
    _folder: OwnedFd,
    /// That folder's device and inode: which folder it is, whatever its name now.
    identity: (u64, u64),
    /// Its parent, held open to stay armed; `None` at the root.
    _above: Option<OwnedFd>,
}

impl Armed {
    fn new(folder: &Path, mask: libc::c_ulong) -> io::Result<Armed> {
        let (folder_fd, identity) = arm(folder, mask)?;
        Ok(Armed {
            _folder: folder_fd,
            identity,
            // Best effort: without it, a removed folder is noticed by the next poll instead.
            _above: above(folder).and_then(|above| arm(&above, ABOVE).ok().map(|(fd, _)| fd)),
        })
    }

    /// Whether `folder` names the folder armed (the same inode, not just the same name).
    fn is_at(&self, folder: &Path) -> bool {
        std::fs::metadata(folder).is_ok_and(|m| (m.dev(), m.ino()) == self.identity)
    }
}

/// The folder that holds `folder`, by name: the one in which its removal or renaming shows.
fn above(folder: &Path) -> Option<PathBuf> {
    match folder.parent() {
        None => None,
        Some(parent) if parent.as_os_str().is_empty() => {
            if folder == Path::new(".") || folder.ends_with("..") {
                Some(folder.join(".."))
            } else {
                Some(PathBuf::from("."))
            }
        }
        Some(parent) => Some(parent.to_path_buf()),
    }
}

/// Opens `folder` and asks for NOTICE on its changes, sent to this thread only.
/// Returns the open folder and its identity (device, inode).
fn arm(folder: &Path, mask: libc::c_ulong) -> io::Result<(OwnedFd, (u64, u64))> {
    let folder = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(folder)?;
    let metadata = folder.metadata()?;
    let identity = (metadata.dev(), metadata.ino());
    let folder = OwnedFd::from(folder);
    let fd = folder.as_raw_fd();
    // SAFETY: gettid has no preconditions.
    let thread = unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t;
    let owner = abi::OwnerEx {
        kind: abi::F_OWNER_TID,
        pid: thread,
    };
    // SAFETY: `fd` is an open folder owned above; each call passes the argument type its
    // command expects (an int, an unsigned long, a pointer to a live f_owner_ex). F_NOTIFY
    // makes the whole process the owner, so the thread is named after it.
    let armed = unsafe {
        libc::fcntl(fd, abi::F_SETSIG, NOTICE) == 0
            && libc::fcntl(fd, libc::F_NOTIFY, mask) == 0
            && libc::fcntl(fd, abi::F_SETOWN_EX, &owner as *const abi::OwnerEx) == 0
    };
    if armed {
        Ok((folder, identity))
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn existence_alone_is_not_woken_by_writes() {
        let content = abi::DN_MODIFY | abi::DN_ATTRIB;
        assert_eq!(mask(Wake::OnEntries) & content, 0);
        assert_eq!(mask(Wake::OnContent) & content, content);
        let entries = abi::DN_CREATE | abi::DN_DELETE | abi::DN_RENAME | abi::DN_MULTISHOT;
        assert_eq!(mask(Wake::OnEntries), entries);
        assert_eq!(mask(Wake::OnContent) & entries, entries);
    }

    #[test]
    fn the_folder_above_is_found_by_name() {
        let above = |folder: &str| above(Path::new(folder)).map(|p| p.display().to_string());
        assert_eq!(above("/"), None);
        assert_eq!(above("/run"), Some("/".into()));
        assert_eq!(above("/run/app"), Some("/run".into()));
        assert_eq!(above("app"), Some(".".into()));
        assert_eq!(above("."), Some("./..".into()));
        assert_eq!(above(".."), Some("../..".into()));
        assert_eq!(above("a/b"), Some("a".into()));
    }

    #[tokio::test]
    async fn every_watch_on_the_thread_wakes_for_one_notice() {
        let base = std::env::temp_dir().join(format!("readygate-dnotify-{}", std::process::id()));
        let (one, two) = (base.join("one"), base.join("two"));
        std::fs::create_dir_all(&one).unwrap();
        std::fs::create_dir_all(&two).unwrap();
        let mut first = Watcher::new(&one, Wake::OnEntries).unwrap();
        let mut second = Watcher::new(&two, Wake::OnEntries).unwrap();
        assert!(Arc::ptr_eq(&first.notices, &second.notices));
        let quiet = tokio::time::timeout(Duration::from_millis(100), first.changed()).await;
        assert!(quiet.is_err(), "woke with nothing changed");
        // Both wait at once, as two targets' loops do: whichever reads the signal must wake
        // the other too. And one busy elsewhere when it came hears of it at its next wait.
        let within = Duration::from_secs(2);
        let writer = {
            let ready = one.join("ready");
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                std::fs::write(ready, "").unwrap();
            })
        };
        let (a, b) = tokio::join!(
            tokio::time::timeout(within, first.changed()),
            tokio::time::timeout(within, second.changed()),
        );
        writer.join().unwrap();
        assert!(
            a.is_ok() && b.is_ok(),
            "first woke: {}, second: {}",
            a.is_ok(),
            b.is_ok()
        );
        std::fs::write(two.join("ready"), "").unwrap();
        tokio::time::timeout(within, first.changed()).await.unwrap();
        tokio::time::timeout(within, second.changed())
            .await
            .unwrap();
        std::fs::remove_dir_all(&base).unwrap();
    }
}
