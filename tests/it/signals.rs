//! Signals and processes: SIGTERM and SIGINT stop a wait at once with 128+N, in every phase of
//! waiting and also as PID 1 of a PID namespace (where a signal without a handler is ignored);
//! readygate never has a child process; once it has exec'd COMMAND, signals reach COMMAND itself.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use crate::support::raw::{self, Peer};
use crate::support::{closed_addr, readygate, TempDir};

/// The bound asserted here; the goal is 100 ms, which `bench/hostile.sh` measures.
const STOP_WITHIN: Duration = Duration::from_secs(1);

/// A running process whose stderr is read line by line as it comes.
struct Running {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn spawn(command: &mut Command) -> Running {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stderr = child.stderr.take().expect("stderr");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (up to 10 s) for a stderr line containing `text`.
    fn wait_for_line(&mut self, text: &str) {
        let until = Instant::now() + Duration::from_secs(10);
        while !self.seen.iter().any(|line| line.contains(text)) {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no line with {text:?} in time; saw {:#?}", self.seen),
            }
        }
    }

    /// Sends `signal` to `pid` and waits for this process to end: its status and how long
    /// it took from the signal.
    fn signal_and_wait(&mut self, pid: u32, signal: i32) -> (std::process::ExitStatus, Duration) {
        let sent = Instant::now();
        // SAFETY: plain kill(2) on a process we started.
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0);
        let status = self.child.wait().expect("wait");
        (status, sent.elapsed())
    }

    /// Everything it wrote to stderr (after it ended).
    fn stderr(&mut self) -> String {
        self.seen.extend(self.lines.iter());
        self.seen.join("\n")
    }

    /// Everything it wrote to stdout (after it ended).
    fn stdout(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut out) = self.child.stdout.take() {
            let _ = out.read_to_string(&mut text);
        }
        text
    }
}

/// The process ids of `pid`'s children, from every one of its threads.
fn children(pid: u32) -> Vec<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("task list");
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .map(|n| n.parse().expect("pid"))
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The phases a wait can be in when a signal comes, as the targets and options that put it there.
fn phases(peer: &Peer, file: &str) -> Vec<(&'static str, Vec<String>)> {
    let closed = format!("tcp://{}", closed_addr());
    vec![
        ("between attempts", vec![closed]),
        (
            "in an attempt that hangs",
            vec![
                "--attempt-timeout".into(),
                "30s".into(),
                peer.url("http", "/"),
            ],
        ),
        (
            "watching a file",
            vec!["--interval".into(), "30s".into(), file.into()],
        ),
    ]
}

#[test]
fn sigterm_and_sigint_stop_every_phase_of_a_wait_at_once() {
    let peer = Peer::start(raw::silent);
    let dir = TempDir::new();
    let file = dir.join("never");
    for (phase, args) in phases(&peer, file.to_str().unwrap()) {
        for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
            let mut command = readygate(["wait", "-t", "60s"]);
            command.args(&args);
            let mut running = Running::spawn(&mut command);
            running.wait_for_line("waiting up to 60.0s");
            std::thread::sleep(Duration::from_millis(200));
            assert_eq!(children(running.child.id()), Vec::<u32>::new(), "{phase}");
            let pid = running.child.id();
            let (status, took) = running.signal_and_wait(pid, signal);
            let stderr = running.stderr();
            assert_eq!(
                status.code(),
                Some(code),
                "{phase}, signal {signal}: {stderr}"
            );
            assert!(took < STOP_WITHIN, "{phase}: took {took:?} to stop");
            assert!(
                stderr.contains(&format!("stopped by signal {signal}")),
                "{stderr}"
            );
            eprintln!(
                "bench: signal {signal} {phase}: exit {code} after {:.1} ms",
                took.as_secs_f64() * 1000.0
            );
        }
    }
    assert!(
        peer.accepted() >= 2,
        "the hanging attempts reached the peer"
    );
}

#[test]
fn probe_is_stopped_by_sigterm_in_its_one_attempt() {
    let peer = Peer::start(raw::silent);
    let mut running = Running::spawn(&mut readygate([
        "probe",
        "-v",
        "-t",
        "60s",
        "--attempt-timeout",
        "60s",
        &peer.url("http", "/"),
    ]));
    // probe logs nothing before its attempt: wait for the peer to see the connection.
    let until = Instant::now() + Duration::from_secs(10);
    while peer.accepted() == 0 {
        assert!(Instant::now() < until, "probe never connected");
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = running.child.id();
    let (status, took) = running.signal_and_wait(pid, libc::SIGTERM);
    assert_eq!(status.code(), Some(143), "{}", running.stderr());
    assert!(took < STOP_WITHIN, "took {took:?}");
}

/// `unshare --pid --fork --mount-proc ARGS…`: ARGS run as PID 1 of a new PID namespace.
fn as_pid_1<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Command {
    let unshare = "/usr/bin/unshare";
    assert!(
        std::path::Path::new(unshare).exists(),
        "{unshare} is missing (Debian package util-linux)"
    );
    let mut command = Command::new(unshare);
    command.args(["--pid", "--fork", "--mount-proc"]).args(args);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("READYGATE_") {
            command.env_remove(key);
        }
    }
    command
}

/// The one child of `unshare --fork`, checked to be PID 1 inside its namespace.
fn pid_1_of(unshare: u32) -> u32 {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(&pid) = children(unshare).first() {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            let nspid = status
                .lines()
                .find(|l| l.starts_with("NSpid:"))
                .expect("NSpid");
            assert!(nspid.ends_with("\t1"), "not PID 1 inside: {nspid}");
            return pid;
        }
        assert!(Instant::now() < until, "unshare started no child");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn as_pid_1_sigterm_and_sigint_still_stop_a_wait() {
    let binary = env!("CARGO_BIN_EXE_readygate");
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let closed = format!("tcp://{}", closed_addr());
        let mut running = Running::spawn(&mut as_pid_1(&[binary, "wait", "-t", "60s", &closed]));
        running.wait_for_line("waiting up to 60.0s");
        let pid = pid_1_of(running.child.id());
        assert_eq!(children(pid), Vec::<u32>::new());
        let (status, took) = running.signal_and_wait(pid, signal);
        let stderr = running.stderr();
        assert_eq!(status.code(), Some(code), "signal {signal}: {stderr}");
        assert!(took < STOP_WITHIN, "took {took:?} to stop as PID 1");
        eprintln!(
            "bench: signal {signal} as PID 1: exit {code} after {:.1} ms",
            took.as_secs_f64() * 1000.0
        );
    }
}

/// A COMMAND that reports the signals it receives through its own handlers.
const TRAPPING: &str = "trap 'echo got TERM; exit 7' TERM; trap 'echo got INT; exit 8' INT; \
                        echo started >&2; while :; do sleep 0.05; done";

#[test]
fn after_exec_the_command_itself_receives_the_signals() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let open = format!("tcp://{}", listener.local_addr().unwrap());
    for (signal, code, word) in [(libc::SIGTERM, 7, "got TERM"), (libc::SIGINT, 8, "got INT")] {
        let mut running = Running::spawn(&mut readygate([
            "wait", "-q", &open, "--", "sh", "-c", TRAPPING,
        ]));
        running.wait_for_line("started");
        let pid = running.child.id();
        let (status, _) = running.signal_and_wait(pid, signal);
        assert_eq!(status.code(), Some(code), "{}", running.stderr());
        assert!(running.stdout().contains(word));
    }
    // Without a handler of its own, COMMAND dies of the signal: no readygate handler is left
    // to turn it into an exit status.
    let mut running = Running::spawn(&mut readygate([
        "wait",
        "-q",
        &open,
        "--",
        "sh",
        "-c",
        "echo started >&2; exec sleep 60",
    ]));
    running.wait_for_line("started");
    std::thread::sleep(Duration::from_millis(100));
    let pid = running.child.id();
    let (status, took) = running.signal_and_wait(pid, libc::SIGTERM);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(took < STOP_WITHIN);
}

#[test]
fn as_pid_1_the_command_receives_the_signals_it_handles() {
    let binary = env!("CARGO_BIN_EXE_readygate");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let open = format!("tcp://{}", listener.local_addr().unwrap());
    let mut running = Running::spawn(&mut as_pid_1(&[
        binary, "wait", "-q", &open, "--", "sh", "-c", TRAPPING,
    ]));
    running.wait_for_line("started");
    let pid = pid_1_of(running.child.id());
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm.trim(), "sh", "PID 1 is COMMAND itself");
    let (status, took) = running.signal_and_wait(pid, libc::SIGTERM);
    assert_eq!(status.code(), Some(7), "{}", running.stderr());
    assert!(running.stdout().contains("got TERM"));
    assert!(took < STOP_WITHIN);
}
