//! Running the real `readygate` binary as a user would, and reading what it did.

use std::ffi::OsStr;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How far past its deadline (or attempt timeout) a run may end, measured from its spawn: room
/// for process start and scheduling on a loaded 2-core machine, where tens of milliseconds are
/// usual and a few hundred happen, while a run 500 ms late (plus its own start) always fails.
/// The benchmark (bench/hostile.sh) records the real overruns.
pub const OVERRUN: Duration = Duration::from_millis(450);

/// A `readygate` command with a clean environment (no inherited `READYGATE_*`) and the signal
/// state a pod gives it: a suite started by `nohup` or as a shell's background job ignores
/// SIGHUP, SIGINT and SIGQUIT, which readygate rightly hands on to COMMAND.
pub fn readygate<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    binary(env!("CARGO_BIN_EXE_readygate"), args)
}

/// A `readygate-cluster` command (`inject`, `webhook`), set up as [`readygate`] is.
pub fn readygate_cluster<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    binary(env!("CARGO_BIN_EXE_readygate-cluster"), args)
}

/// One of the crate's binaries, with `args`, as [`readygate`] describes.
fn binary<I, S>(path: &str, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(path);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("READYGATE_") {
            command.env_remove(key);
        }
    }
    // No test reaches the developer's own cluster: `doctor` finds none unless a test gives one.
    command
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent/readygate-test-home");
    command.args(args).stdin(Stdio::null());
    // SAFETY: signal(2) is async-signal-safe, and the hook touches nothing else between fork
    // and exec. A test that wants signals ignored adds its own hook, which runs after this one.
    unsafe {
        command.pre_exec(|| {
            for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
                libc::signal(signal, libc::SIG_DFL);
            }
            Ok(())
        })
    };
    command
}

/// What one run did: status, output and how long it took.
#[derive(Debug)]
pub struct Outcome {
    /// The exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
}

impl Outcome {
    /// Panics with the whole outcome unless the exit code is `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit status: {self:#?}");
        self
    }

    /// Panics unless the run took less than `limit`.
    #[track_caller]
    pub fn expect_faster_than(&self, limit: Duration) -> &Self {
        let limit = super::emulated::time_limit(self.elapsed, limit);
        assert!(
            self.elapsed < limit,
            "took {:?}, limit {limit:?}: {self:#?}",
            self.elapsed
        );
        self
    }

    /// Panics unless the run ended at `bound` (its deadline, or the attempt timeout of a
    /// single attempt): not before it, and less than [`OVERRUN`] after it.
    #[track_caller]
    pub fn expect_ended_at(&self, bound: Duration) -> &Self {
        self.expect_slower_than(bound)
            .expect_faster_than(bound + OVERRUN)
    }

    /// Panics unless the run took at least `floor`.
    #[track_caller]
    pub fn expect_slower_than(&self, floor: Duration) -> &Self {
        assert!(
            self.elapsed >= floor,
            "took {:?}, floor {floor:?}: {self:#?}",
            self.elapsed
        );
        self
    }

    /// Panics unless stderr contains `text`.
    #[track_caller]
    pub fn expect_stderr(&self, text: &str) -> &Self {
        assert!(
            self.stderr.contains(text),
            "stderr lacks {text:?}: {self:#?}"
        );
        self
    }

    /// Panics unless stdout contains `text`.
    #[track_caller]
    pub fn expect_stdout(&self, text: &str) -> &Self {
        assert!(
            self.stdout.contains(text),
            "stdout lacks {text:?}: {self:#?}"
        );
        self
    }
}

/// Extension: run a command to completion and time it.
pub trait RunExt {
    /// Runs to completion, capturing output.
    fn outcome(&mut self) -> Outcome;
    /// Runs to completion, for a run that should end at `bound` (see
    /// [`Outcome::expect_ended_at`]): one that ends [`OVERRUN`] or more past it is run once more,
    /// and that second run is returned. Load can hold up one run; a bug holds up every run.
    fn outcome_at(&mut self, bound: Duration) -> Outcome;
    /// Spawns with captured output, for tests that act while it runs.
    fn spawn_captured(&mut self) -> (Child, Instant);
}

/// Whether a run that took `elapsed` is to be run once more, as [`RunExt::outcome_at`] says.
pub fn late(elapsed: Duration, bound: Duration) -> bool {
    let late = elapsed >= bound + OVERRUN;
    if late {
        eprintln!(
            "ended {elapsed:?} after its spawn, {OVERRUN:?} or more past {bound:?}: once more"
        );
    }
    late
}

impl RunExt for Command {
    fn outcome(&mut self) -> Outcome {
        let (child, started) = self.spawn_captured();
        finish(child, started)
    }

    fn outcome_at(&mut self, bound: Duration) -> Outcome {
        let first = self.outcome();
        match late(first.elapsed, bound) {
            true => self.outcome(),
            false => first,
        }
    }

    fn spawn_captured(&mut self) -> (Child, Instant) {
        let started = Instant::now();
        let child = self
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn readygate");
        (child, started)
    }
}

/// Waits for a spawned child and collects its outcome.
pub fn finish(child: Child, started: Instant) -> Outcome {
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().expect("wait for readygate");
    Outcome {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        elapsed: started.elapsed(),
    }
}
