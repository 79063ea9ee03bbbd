//! The private podman that `tests/containers/run.sh` sets up: its config, storage and
//! registries file live in a temporary folder, and every podman call of the tests goes through
//! here, bounded in time, so that a stuck runtime fails the test instead of hanging it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

/// How long one podman command may take unless a caller says otherwise.
pub const PODMAN_LIMIT: Duration = Duration::from_secs(90);

/// The sandbox folder; panics with one line when the tests were not started by run.sh, so they
/// never touch the machine's own podman storage.
pub fn sandbox() -> &'static Path {
    static SANDBOX: OnceLock<PathBuf> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        let dir = std::env::var_os("READYGATE_CONTAINER_SANDBOX").map(PathBuf::from);
        let conf = std::env::var_os("CONTAINERS_CONF").map(PathBuf::from);
        match (dir, conf) {
            (Some(dir), Some(conf)) if conf.starts_with(&dir) && dir.is_dir() => dir,
            _ => panic!(
                "the container tests need a private podman: run them with tests/containers/run.sh"
            ),
        }
    })
}

/// What a finished command left.
#[derive(Debug)]
pub struct Finished {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Finished {
    /// stdout then stderr, as `podman logs` interleaves a container's streams.
    pub fn output(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Runs `program args`, killing it and panicking past `limit`.
pub fn run(program: &str, args: &[&str], limit: Duration) -> Finished {
    run_within(program, args, limit)
        .unwrap_or_else(|| panic!("`{program} {}` took more than {limit:?}", args.join(" ")))
}

/// Runs `program args`; past `limit` kills it and returns None.
pub fn run_within(program: &str, args: &[&str], limit: Duration) -> Option<Finished> {
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| {
            panic!("cannot run {program} ({err}): scripts/install-container-deps.sh installs it")
        });
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let Some(status) = crate::support::events::exit_within(&mut child, limit) else {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    Some(Finished {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
        took: started.elapsed(),
    })
}

/// Reads a pipe to its end on a thread, so neither pipe can fill up and block the child.
fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs podman in the sandbox, whatever its exit status.
pub fn podman(args: &[&str]) -> Finished {
    sandbox();
    run("podman", args, PODMAN_LIMIT)
}

/// Runs podman in the sandbox and returns its trimmed stdout; any failure panics with stderr.
pub fn podman_ok(args: &[&str]) -> String {
    let finished = podman(args);
    assert!(
        finished.code == 0,
        "`podman {}` failed with {}:\n{}",
        args.join(" "),
        finished.code,
        finished.output()
    );
    finished.stdout.trim().to_string()
}
