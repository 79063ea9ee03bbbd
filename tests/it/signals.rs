//! Signals and processes: SIGTERM and SIGINT stop a wait at once with 128+N, in every phase of
//! waiting and also as PID 1 of a PID namespace (where a signal without a handler is ignored);
//! readygate never has a child process; once it has exec'd COMMAND, signals reach COMMAND itself.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::raw::{self, Peer};
use crate::support::run::OVERRUN;
use crate::support::running::Ended;
use crate::support::{closed_addr, readygate, require, wait_until, Running, TempDir, SECOND};

/// The bound asserted here, from the signal to the run's end: a stop 500 ms late fails. The
/// issue's goal is 100 ms, which `bench/hostile.sh` measures.
const STOP_WITHIN: Duration = OVERRUN;

/// Sends `signal` to `pid` (the run itself, or a process inside it) and waits for the run to
/// end: how it ended, and how long after the signal.
fn signal_and_wait(running: Running, pid: u32, signal: i32) -> (Ended, Duration) {
    let sent = Instant::now();
    // SAFETY: plain kill(2) on a process of ours that has not been reaped.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0);
    let ended = running.end();
    let took = ended.at.saturating_duration_since(sent);
    (ended, took)
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

/// The phases a wait can be in when a signal comes, as the targets and options that put it
/// there; the stderr line (with `-v`) that shows it got there, or `None` for an attempt that
/// hangs (the peer's accepted connection shows that).
fn phases(peer: &Peer, file: &str) -> Vec<(&'static str, Vec<String>, Option<&'static str>)> {
    let closed = format!("tcp://{}", closed_addr());
    vec![
        (
            "between attempts",
            vec![closed],
            Some("attempt 1: connection refused"),
        ),
        (
            "in an attempt that hangs",
            vec![
                "--attempt-timeout".into(),
                "30s".into(),
                peer.url("http", "/"),
            ],
            None,
        ),
        (
            "watching a file",
            vec!["--interval".into(), "30s".into(), file.into()],
            Some("attempt 1: no such file"),
        ),
    ]
}

#[test]
fn sigterm_and_sigint_stop_every_phase_of_a_wait_at_once() {
    let peer = Peer::start(raw::silent);
    let dir = TempDir::new();
    let file = dir.join("never");
    for (phase, args, there) in phases(&peer, file.to_str().unwrap()) {
        for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
            let accepted = peer.accepted();
            let mut command = readygate(["wait", "-v", "-t", "60s"]);
            command.args(&args);
            let mut running = Running::spawn(&mut command);
            running.line("waiting up to 60.0s");
            match there {
                Some(line) => drop(running.line(line)),
                None => drop(wait_until("the attempt to reach the peer", || {
                    peer.accepted() > accepted
                })),
            }
            assert_eq!(children(running.pid()), Vec::<u32>::new(), "{phase}");
            let pid = running.pid();
            let (ended, took) = signal_and_wait(running, pid, signal);
            let stderr = &ended.outcome.stderr;
            assert_eq!(
                ended.status.code(),
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
    let running = Running::spawn(&mut readygate([
        "probe",
        "-v",
        "-t",
        "60s",
        "--attempt-timeout",
        "60s",
        &peer.url("http", "/"),
    ]));
    // probe logs nothing before its attempt: wait for the peer to see the connection.
    wait_until("the probe to connect", || peer.accepted() > 0);
    let pid = running.pid();
    let (ended, took) = signal_and_wait(running, pid, libc::SIGTERM);
    assert_eq!(ended.status.code(), Some(143), "{}", ended.outcome.stderr);
    assert!(took < STOP_WITHIN, "took {took:?}");
}

/// `unshare --pid --fork --mount-proc ARGS…`: ARGS run as PID 1 of a new PID namespace.
fn as_pid_1<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Command {
    let mut command = Command::new(require("unshare"));
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
    let mut child = None;
    wait_until("unshare to start its child", || {
        child = children(unshare).first().copied();
        child.is_some()
    });
    let pid = child.unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let nspid = status
        .lines()
        .find(|l| l.starts_with("NSpid:"))
        .expect("NSpid");
    assert!(nspid.ends_with("\t1"), "not PID 1 inside: {nspid}");
    pid
}

#[test]
fn as_pid_1_sigterm_and_sigint_still_stop_a_wait() {
    let binary = env!("CARGO_BIN_EXE_readygate");
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let closed = format!("tcp://{}", closed_addr());
        let mut running =
            Running::spawn(&mut as_pid_1(&[binary, "wait", "-v", "-t", "60s", &closed]));
        running.line("waiting up to 60.0s");
        running.line("attempt 1: connection refused");
        let pid = pid_1_of(running.pid());
        assert_eq!(children(pid), Vec::<u32>::new());
        let (ended, took) = signal_and_wait(running, pid, signal);
        let stderr = &ended.outcome.stderr;
        assert_eq!(ended.status.code(), Some(code), "signal {signal}: {stderr}");
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
        running.line("started");
        let pid = running.pid();
        let (ended, _) = signal_and_wait(running, pid, signal);
        assert_eq!(ended.status.code(), Some(code), "{}", ended.outcome.stderr);
        assert!(ended.outcome.stdout.contains(word));
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
    running.line("started");
    let pid = running.pid();
    let comm = format!("/proc/{pid}/comm");
    wait_until("the shell to exec sleep", || {
        std::fs::read_to_string(&comm).is_ok_and(|name| name.trim() == "sleep")
    });
    let (ended, took) = signal_and_wait(running, pid, libc::SIGTERM);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        ended.status.signal(),
        Some(libc::SIGTERM),
        "{:?}",
        ended.status
    );
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
    running.line("started");
    let pid = pid_1_of(running.pid());
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    assert_eq!(comm.trim(), "sh", "PID 1 is COMMAND itself");
    let (ended, took) = signal_and_wait(running, pid, libc::SIGTERM);
    assert_eq!(ended.status.code(), Some(7), "{}", ended.outcome.stderr);
    assert!(ended.outcome.stdout.contains("got TERM"));
    assert!(took < STOP_WITHIN);
}

#[test]
fn sigterm_and_sigint_stop_a_wait_with_128_plus_n() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let closed = format!("tcp://{}", closed_addr());
        let mut running = Running::spawn(&mut readygate(["wait", "-t", "30s", &closed]));
        running.line("waiting up to 30.0s");
        let sent = Instant::now();
        running.signal(signal);
        let ended = running.end();
        ended.outcome.expect_code(code);
        let took = ended.at - sent;
        assert!(took < 2 * SECOND, "took {took:?} to stop");
    }
}
