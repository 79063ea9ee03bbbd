//! A FUSE mount whose lookups never answer, as a dead NFS server's do: `hung_fuse.c`, built
//! once per run with cc against libfuse3, mounted in a temporary folder. Its daemon is killed
//! and the mount lazily unmounted when the test ends, whatever way it ends; calls stuck on it
//! then fail, so processes blocked there can exit.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::Instant;

use super::daemon::{require, run_ok, START_LIMIT};
use super::events::EVENT_LIMIT;
use super::TempDir;

/// The daemon's source, next to this file.
const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/support/hung_fuse.c");

/// A mounted hung file system.
pub struct HungMount {
    /// The daemon serving it (`None` once released).
    daemon: Option<Child>,
    /// The mount point.
    root: PathBuf,
    /// The daemon's stdout lines: `lookup NAME` for each lookup left hanging.
    said: Receiver<String>,
    /// Holds the mount point; removed after the unmount.
    _dir: TempDir,
}

impl HungMount {
    /// Mounts a fresh hung file system. `None`, with a line saying why, only when this machine
    /// has no `/dev/fuse` and CI is not set: under CI a missing FUSE device fails the test.
    #[track_caller]
    pub fn new() -> Option<HungMount> {
        if !Path::new("/dev/fuse").exists() {
            let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
            assert!(
                !ci,
                "/dev/fuse is missing: the hung-mount tests cannot run under CI"
            );
            eprintln!("SKIPPED: /dev/fuse is missing, so no hung FUSE mount can be made here");
            return None;
        }
        let dir = TempDir::new();
        let root = dir.join("hung");
        std::fs::create_dir(&root).expect("create mount point");
        let mut daemon = Command::new(daemon_binary())
            .arg(&root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start hung_fuse");
        // It says "mounted" once the kernel has the mount, then a line per hung lookup: read
        // to its end, or the daemon would die of SIGPIPE and let the hung calls go.
        let stdout = daemon.stdout.take().expect("daemon stdout");
        let (sender, said) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut mount = HungMount {
            daemon: Some(daemon),
            root,
            said,
            _dir: dir,
        };
        match mount.said.recv_timeout(START_LIMIT) {
            Ok(line) if line == "mounted" => Some(mount),
            other => {
                mount.release();
                panic!("hung_fuse did not mount: {other:?}");
            }
        }
    }

    /// A path under the mount: looking it up never ends while the daemon runs.
    pub fn join(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Waits until a lookup of `name` (a name right under the mount: the first part of a path
    /// given to [`HungMount::join`]) hangs on the mount; fails the test after [`EVENT_LIMIT`].
    #[track_caller]
    pub fn asked(&self, name: &str) -> Instant {
        let expected = format!("lookup {name}");
        let deadline = Instant::now() + EVENT_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.said.recv_timeout(left) {
                Ok(line) if line == expected => return Instant::now(),
                Ok(_) => {}
                Err(_) => panic!("no lookup of {name:?} on the hung mount within {EVENT_LIMIT:?}"),
            }
        }
    }

    /// The path as a string, for a command line.
    pub fn arg(&self, name: &str) -> String {
        self.join(name)
            .to_str()
            .expect("UTF-8 temp path")
            .to_string()
    }

    /// Kills the daemon and unmounts: every call stuck on the mount fails at once (the kernel
    /// holds a process whose thread is stuck there until then, even one that was killed).
    pub fn release(&mut self) {
        let Some(mut daemon) = self.daemon.take() else {
            return;
        };
        let _ = daemon.kill();
        let _ = daemon.wait();
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.root)
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for HungMount {
    fn drop(&mut self) {
        self.release();
    }
}

/// The daemon's binary, built on first use into a folder of this run's.
fn daemon_binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let (cc, pkg_config) = (require("cc"), require("pkg-config"));
        let flags = run_ok(Command::new(pkg_config).args(["--cflags", "--libs", "fuse3"]));
        let dir = std::env::temp_dir().join(format!("readygate-hung-fuse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create build folder");
        let binary = dir.join("hung_fuse");
        run_ok(
            Command::new(cc)
                .args(["-O1", "-Wall", "-o"])
                .arg(&binary)
                .arg(SOURCE)
                .args(flags.split_whitespace()),
        );
        binary
    })
}
