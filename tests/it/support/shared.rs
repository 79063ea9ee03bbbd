//! Servers shared by every test of a run: started once, on first use, by a thread that keeps
//! them for the life of the test binary. They die with it (`PR_SET_PDEATHSIG` from that
//! thread), and at exit their processes are killed and their folders removed.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::sync::Mutex;

/// Processes and folders to end at exit.
static AT_EXIT: Mutex<Vec<(Option<u32>, Option<PathBuf>)>> = Mutex::new(Vec::new());

/// Starts a server with `start` on a thread that then holds it until the process exits, and
/// returns what `start` says tests need (its address…). A failed start fails the caller.
#[track_caller]
pub fn keep<S: 'static, I: Send + 'static>(
    what: &str,
    start: impl FnOnce() -> (S, I) + Send + 'static,
) -> I {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: registering a plain `extern "C"` function.
        unsafe { libc::atexit(end_all) };
    });
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let (server, info) = start();
        let _ = sender.send(info);
        let _held = server;
        loop {
            std::thread::park();
        }
    });
    receiver
        .recv()
        .unwrap_or_else(|_| panic!("the shared {what} did not start (its log is above)"))
}

/// Makes `command`'s process die with the thread that spawns it (set after any change of
/// user, which would clear it).
pub fn die_with_parent(command: &mut Command) -> &mut Command {
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec here.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        })
    }
}

/// Kills `pid` at exit (a shared server's process).
pub fn end_at_exit(pid: u32) {
    AT_EXIT.lock().unwrap().push((Some(pid), None));
}

/// Removes `dir` at exit, after the processes are gone.
pub fn remove_at_exit(dir: PathBuf) {
    AT_EXIT.lock().unwrap().push((None, Some(dir)));
}

extern "C" fn end_all() {
    let Ok(mut list) = AT_EXIT.lock() else {
        return;
    };
    for (pid, _) in list.iter() {
        if let Some(pid) = pid.and_then(|p| libc::pid_t::try_from(p).ok()) {
            // SAFETY: our own children, not reaped yet.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
    for (_, dir) in list.drain(..) {
        if let Some(dir) = dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The uid and gid of a system user a server that refuses root runs as (`postgres`,
/// `mysql`), or `None` when the tests do not run as root (the server runs as us).
pub fn service_user(name: &str) -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let name = std::ffi::CString::new(name).expect("user name");
    // SAFETY: a NUL-terminated name; the result is read at once, before any other call.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(
        !entry.is_null(),
        "no user {name:?}: run scripts/install-test-deps.sh (as root)"
    );
    // SAFETY: non-null, as checked.
    unsafe { Some(((*entry).pw_uid, (*entry).pw_gid)) }
}

/// Runs `command` as `user` (from [`service_user`]).
pub fn run_as(command: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        command.uid(uid).gid(gid).env("HOME", "/tmp");
    }
    command
}

/// Hands `path` (and what is in it) to `user`.
pub fn give(path: &std::path::Path, user: Option<(u32, u32)>) {
    if let Some((uid, gid)) = user {
        for entry in walk(path) {
            std::os::unix::fs::lchown(&entry, Some(uid), Some(gid)).expect("chown");
        }
    }
}

fn walk(path: &std::path::Path) -> Vec<PathBuf> {
    let mut all = vec![path.to_path_buf()];
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("read dir").flatten() {
            all.extend(walk(&entry.path()));
        }
    }
    all
}
