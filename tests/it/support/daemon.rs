//! Real servers (nginx, etcd, redis, dnsmasq) run by the tests: spawned with their own temp
//! config, waited for, and killed when the test ends, whatever way it ends.

use std::fs::File;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub use super::deps::require;

/// How long a server may take to come up; generous, as the machine is shared.
pub const START_LIMIT: Duration = Duration::from_secs(60);

/// A running server process, killed (and reaped) on drop. Its output goes to a log file that
/// is shown when it fails to start.
pub struct Daemon {
    /// What it is, for messages.
    name: String,
    /// The process.
    child: Option<Child>,
    /// Where its stdout and stderr go.
    log: PathBuf,
}

impl Daemon {
    /// Spawns `command` with output to `log`.
    #[track_caller]
    pub fn spawn(name: &str, mut command: Command, log: &Path) -> Daemon {
        let out = File::create(log).expect("create server log");
        let err = out.try_clone().expect("clone server log");
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Daemon {
            name: name.to_string(),
            child: Some(child),
            log: log.to_path_buf(),
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Waits until `ready()` holds, failing the test with the server's log if it exits first
    /// or takes longer than [`START_LIMIT`].
    #[track_caller]
    pub fn wait_until(&mut self, what: &str, mut ready: impl FnMut() -> bool) {
        let mut exited = None;
        let child = &mut self.child;
        let seen = super::events::poll_until(START_LIMIT, Duration::from_millis(20), || {
            if ready() {
                return true;
            }
            exited = child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            exited.is_some()
        });
        if let Some(status) = exited {
            panic!(
                "{} exited ({status}) before {what}:\n{}",
                self.name,
                self.log()
            );
        }
        if seen.is_none() {
            panic!(
                "{} not {what} after {START_LIMIT:?}:\n{}",
                self.name,
                self.log()
            );
        }
    }

    /// Waits until `addr` accepts TCP connections.
    #[track_caller]
    pub fn wait_for_port(&mut self, addr: SocketAddr) {
        self.wait_until(&format!("listening on {addr}"), || {
            TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
        });
    }

    /// Waits until `path` exists (a pid file or socket the server writes once it listens).
    #[track_caller]
    pub fn wait_for_path(&mut self, path: &Path) {
        self.wait_until(&format!("ready ({} missing)", path.display()), || {
            path.exists()
        });
    }

    /// Where its output goes.
    pub fn log_path(&self) -> PathBuf {
        self.log.clone()
    }

    /// Kills the server at once (SIGKILL), as a crash or the OOM killer would, and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// What the server wrote so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Stops the server as its service manager would (SIGTERM: nginx's master then ends its
    /// workers), SIGKILL if it lingers, and reaps it.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: signalling our own child, which has not been reaped yet.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
        if super::events::exit_within(&mut child, Duration::from_secs(5)).is_some() {
            return;
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs a helper command to completion, failing the test with its output if it fails.
#[track_caller]
pub fn run_ok(command: &mut Command) -> String {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", command.get_program()));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
