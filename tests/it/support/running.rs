//! A process the test acts on while it runs: its stderr arrives line by line as it is written,
//! so a test waits for what the process says ("waiting up to", "attempt 1: …") before it acts,
//! instead of sleeping and hoping the process got that far.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::events::EVENT_LIMIT;
use super::run::Outcome;

/// How long a run may take to end once the test waits for it: every run here has a deadline
/// of its own well inside this, so reaching it means a hang.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// How long output may keep coming after the process ended (a COMMAND's background child can
/// hold the pipes open).
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// A spawned process: its stderr lines, its stdout, and its exit as events on channels.
pub struct Running {
    /// Its process id (also while it runs as another program after exec).
    pid: u32,
    /// When it was spawned.
    started: Instant,
    /// stderr pieces as written: each a line with its `\n` (the last may lack one).
    lines: Receiver<(Instant, String)>,
    /// The stderr pieces taken from `lines` so far.
    seen: Vec<String>,
    /// stdout, in chunks.
    stdout: Receiver<Vec<u8>>,
    /// The stdout chunks taken from `stdout` so far.
    seen_stdout: Vec<u8>,
    /// Its exit, sent by the thread that waits for it.
    exit: Receiver<(Instant, ExitStatus)>,
    /// Its exit once received.
    exited: Option<(Instant, ExitStatus)>,
}

/// How a run ended: the status itself (for a death by signal), when, and what it wrote.
#[derive(Debug)]
pub struct Ended {
    /// The exit status.
    pub status: ExitStatus,
    /// When it was reaped.
    pub at: Instant,
    /// Code, output and wall time.
    pub outcome: Outcome,
}

impl Running {
    /// Spawns `command` (stdin from `/dev/null`, stdout and stderr captured).
    #[track_caller]
    pub fn spawn(command: &mut Command) -> Running {
        let started = Instant::now();
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {:?}: {e}", command.get_program()));
        let pid = child.id();
        let (stderr, stdout_pipe) = (child.stderr.take().unwrap(), child.stdout.take().unwrap());
        let (line_sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut piece = Vec::new();
            while matches!(reader.read_until(b'\n', &mut piece), Ok(n) if n > 0) {
                let text = String::from_utf8_lossy(&piece).into_owned();
                if line_sender.send((Instant::now(), text)).is_err() {
                    break;
                }
                piece.clear();
            }
        });
        let (chunk_sender, stdout) = mpsc::channel();
        std::thread::spawn(move || {
            let mut pipe = stdout_pipe;
            let mut buffer = [0u8; 8192];
            while let Ok(n @ 1..) = pipe.read(&mut buffer) {
                if chunk_sender.send(buffer[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let (exit_sender, exit) = mpsc::channel();
        std::thread::spawn(move || {
            let status = child.wait().expect("wait for the child");
            let _ = exit_sender.send((Instant::now(), status));
        });
        Running {
            pid,
            started,
            lines,
            seen: Vec::new(),
            stdout,
            seen_stdout: Vec::new(),
            exit,
            exited: None,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether it has a handler of its own for `signal` now (`SigCgt` in its `/proc` status):
    /// from then on the signal is its to act on, not the kernel's default.
    pub fn catches(&self, signal: i32) -> bool {
        catches(self.pid, signal)
    }

    /// When it was spawned.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// When the next stderr line containing `text` was written (lines taken by earlier calls
    /// are not looked at again); fails the test after [`EVENT_LIMIT`].
    #[track_caller]
    pub fn line(&mut self, text: &str) -> Instant {
        self.line_within(text, EVENT_LIMIT)
    }

    /// As [`Running::line`], failing after `limit`.
    #[track_caller]
    pub fn line_within(&mut self, text: &str, limit: Duration) -> Instant {
        self.lines_within(&[text], limit)
    }

    /// When the last of `texts` was written, each in a stderr line of its own and in any
    /// order; fails the test after [`EVENT_LIMIT`].
    #[track_caller]
    pub fn lines<S: AsRef<str>>(&mut self, texts: &[S]) -> Instant {
        self.lines_within(texts, EVENT_LIMIT)
    }

    /// As [`Running::lines`], failing after `limit`.
    #[track_caller]
    pub fn lines_within<S: AsRef<str>>(&mut self, texts: &[S], limit: Duration) -> Instant {
        let mut missing: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
        let deadline = Instant::now() + limit;
        let mut last = Instant::now();
        while !missing.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((at, line)) => {
                    if let Some(found) = missing.iter().position(|text| line.contains(text)) {
                        missing.remove(found);
                        last = at;
                    }
                    self.seen.push(line);
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    panic!(
                        "no stderr line with {missing:?} within {limit:?}; it wrote:\n{}",
                        self.seen.concat()
                    );
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!(
                        "it ended without a stderr line with {missing:?}; it wrote:\n{}",
                        self.seen.concat()
                    );
                }
            }
        }
        last
    }

    /// The stderr lines taken so far, as one text.
    pub fn written(&self) -> String {
        self.seen.concat()
    }

    /// When stdout first held `text` (`probe`'s reason line), failing the test after `limit`.
    #[track_caller]
    pub fn stdout_within(&mut self, text: &str, limit: Duration) -> Instant {
        let deadline = Instant::now() + limit;
        loop {
            if String::from_utf8_lossy(&self.seen_stdout).contains(text) {
                return Instant::now();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(chunk) => self.seen_stdout.extend(chunk),
                Err(_) => {
                    self.kill();
                    self.skip_written();
                    panic!(
                        "no {text:?} on stdout within {limit:?}; stdout:\n{}\nstderr:\n{}",
                        String::from_utf8_lossy(&self.seen_stdout),
                        self.seen.concat()
                    );
                }
            }
        }
    }

    /// Takes every stderr line written so far, so that the next [`Running::line`] sees only
    /// what is written after this call.
    pub fn skip_written(&mut self) {
        self.seen
            .extend(self.lines.try_iter().map(|(_, line)| line));
    }

    /// Whether any stderr line written so far contains `text` (without waiting).
    pub fn said(&mut self, text: &str) -> bool {
        self.skip_written();
        self.seen.iter().any(|line| line.contains(text))
    }

    /// Whether it is still running (not yet reaped).
    pub fn is_running(&mut self) -> bool {
        if self.exited.is_none() {
            self.exited = self.exit.try_recv().ok();
        }
        self.exited.is_none()
    }

    /// Fails the test, saying `why`, unless it is still running.
    #[track_caller]
    pub fn expect_running(&mut self, why: &str) {
        if !self.is_running() {
            self.skip_written();
            panic!(
                "{why}: it has already exited; it wrote:\n{}",
                self.seen.concat()
            );
        }
    }

    /// Sends `signal` to it.
    #[track_caller]
    pub fn signal(&mut self, signal: i32) {
        self.expect_running(&format!("cannot send signal {signal}"));
        // SAFETY: kill(2) on our own child, which has not been reaped (its waiter has not
        // reported), so the pid is still its own.
        assert_eq!(unsafe { libc::kill(self.pid as libc::pid_t, signal) }, 0);
    }

    /// Waits for it to end (failing the test after [`RUN_LIMIT`]): status, time, output.
    #[track_caller]
    pub fn end(mut self) -> Ended {
        let (at, status) = match self.exited.take() {
            Some(exited) => exited,
            None => match self.exit.recv_timeout(RUN_LIMIT) {
                Ok(exited) => exited,
                Err(_) => {
                    self.kill();
                    self.skip_written();
                    panic!("still running after {RUN_LIMIT:?}:\n{}", self.seen.concat());
                }
            },
        };
        // Whatever is left, until the writers close the pipes (or a straggler keeps them).
        let until = Instant::now() + DRAIN_LIMIT;
        while let Ok((_, line)) = self
            .lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            self.seen.push(line);
        }
        let mut stdout = std::mem::take(&mut self.seen_stdout);
        while let Ok(chunk) = self
            .stdout
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            stdout.extend(chunk);
        }
        let outcome = Outcome {
            code: status.code(),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: std::mem::take(&mut self.seen).concat(),
            elapsed: at.duration_since(self.started),
        };
        self.exited = Some((at, status));
        Ended {
            status,
            at,
            outcome,
        }
    }

    /// Waits for it to end: code, output, and wall time from spawn to exit.
    #[track_caller]
    pub fn finish(self) -> Outcome {
        self.end().outcome
    }

    /// SIGKILL, unless it has been reaped already.
    fn kill(&mut self) {
        if self.is_running() {
            // SAFETY: as in `signal`: our own child, not yet reaped.
            unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) };
        }
    }
}

impl Drop for Running {
    /// A test that fails half-way leaves no process behind.
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether process `pid` has a handler of its own for `signal` now (`SigCgt` in its `/proc`
/// status), for a child the test spawned itself.
pub fn catches(pid: u32, signal: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
    status.is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << (signal - 1)) != 0)
    })
}
