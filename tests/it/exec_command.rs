//! `-- COMMAND`: readygate becomes COMMAND once ready, handing on the signal state it was
//! given; 126 and 127 when it cannot run, and never run when not ready.

use std::time::Duration;

use crate::support::http::{Answer, HttpServer};
use crate::support::run::{finish, Outcome, RunExt};
use crate::support::{closed_addr, readygate, write_executable, Running, TempDir};

#[test]
fn command_replaces_the_process_once_ready() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let (child, started) = readygate([
        "wait",
        "-q",
        &server.url("/"),
        "--",
        "sh",
        "-c",
        "echo $$; exit 42",
    ])
    .spawn_captured();
    let pid = child.id();
    let outcome = finish(child, started);
    outcome.expect_code(42);
    assert_eq!(
        outcome.stdout.trim(),
        pid.to_string(),
        "COMMAND must run as the same process"
    );
}

/// Runs `grep` of its own signal state as COMMAND, exec'd and as `--on-exit`'s child (last),
/// each `prepared` before readygate starts; returns each run's SigIgn and SigBlk masks.
fn command_signal_state(prepare: impl Fn(&mut std::process::Command)) -> Vec<(Outcome, u64, u64)> {
    let dir = TempDir::new();
    let ready = dir.join("ready");
    std::fs::write(&ready, "").unwrap();
    let ready = ready.to_str().unwrap();
    let status = ["grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status"];
    let plain = [&["wait", ready, "--"][..], &status[..]].concat();
    let with_options = [&["wait", "-q", "-t", "5s", ready, "--"][..], &status[..]].concat();
    let sidecar = HttpServer::start(|_, _| Answer::body("stopping"));
    let url = sidecar.url("/quit");
    let as_child = [&["wait", "--on-exit", &url, ready, "--"][..], &status[..]].concat();
    let mask = |stdout: &str, name: &str| {
        let line = stdout.lines().find(|l| l.starts_with(name)).unwrap();
        u64::from_str_radix(line.split_once(':').unwrap().1.trim(), 16).unwrap()
    };
    [plain, with_options, as_child]
        .iter()
        .map(|args| {
            let mut command = readygate(args);
            prepare(&mut command);
            let outcome = command.outcome();
            outcome.expect_code(0);
            assert_eq!(outcome.stdout.lines().count(), 2, "{outcome:#?}");
            let (ignored, blocked) = (
                mask(&outcome.stdout, "SigIgn"),
                mask(&outcome.stdout, "SigBlk"),
            );
            (outcome, ignored, blocked)
        })
        .collect()
}

/// A signal's bit in a /proc mask.
fn bit(signal: i32) -> u64 {
    1u64 << (signal - 1)
}

#[test]
fn command_starts_with_sigpipe_at_its_default_and_no_signal_blocked() {
    // readygate itself ignores SIGPIPE (a closed stdout must not kill it); an ignored or
    // blocked signal survives exec and fork, so COMMAND would inherit it unless readygate
    // restores what it was given.
    for (outcome, ignored, blocked) in command_signal_state(|_| {}) {
        assert_eq!(
            ignored & bit(libc::SIGPIPE),
            0,
            "COMMAND inherited SIGPIPE ignored: {outcome:#?}"
        );
        assert_eq!(
            blocked, 0,
            "COMMAND inherited blocked signals: {outcome:#?}"
        );
    }
}

#[test]
fn command_gets_the_ignored_signals_and_the_mask_readygate_was_given() {
    // `nohup`, a shell's background job or a supervisor may start readygate with signals
    // ignored or blocked: COMMAND must get them so, though readygate ignores SIGPIPE itself,
    // listens for SIGINT, and std resets both for the programs it starts.
    use std::os::unix::process::CommandExt;
    // The ones readygate handles or forwards itself, and one it never touches.
    const IGNORED: [i32; 7] = [
        libc::SIGPIPE,
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGWINCH,
    ];
    let expected = IGNORED.iter().fold(0, |mask, &signal| mask | bit(signal));
    let runs = command_signal_state(|command| {
        // SAFETY: signal, sigemptyset, sigaddset and sigprocmask are async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                for signal in IGNORED {
                    libc::signal(signal, libc::SIG_IGN);
                }
                let mut set = std::mem::zeroed::<libc::sigset_t>();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGUSR2);
                libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                Ok(())
            })
        };
    });
    for (outcome, ignored, blocked) in runs {
        assert_eq!(ignored & expected, expected, "{outcome:#?}");
        assert_eq!(blocked, bit(libc::SIGUSR2), "{outcome:#?}");
    }
}

#[test]
fn folder_events_around_the_exec_neither_kill_nor_reach_command() {
    // Folder changes keep coming while readygate execs: none may kill readygate or COMMAND,
    // and COMMAND must start with no signal pending or blocked.
    let dir = TempDir::new();
    let ready = dir.join("ready");
    let status = [
        "grep",
        "-E",
        "^(SigPnd|ShdPnd|SigBlk):",
        "/proc/self/status",
    ];
    for round in 0..5 {
        let _ = std::fs::remove_file(&ready);
        let args = [
            &["wait", "-v", "-t", "30s", ready.to_str().unwrap(), "--"][..],
            &status[..],
        ]
        .concat();
        let mut running = Running::spawn(&mut readygate(&args));
        running.line("attempt 1: no such file");
        std::fs::write(&ready, "").unwrap();
        // A stream of changes spread over the exec (its pace is the scenario, not a wait).
        for n in 0..200 {
            std::fs::write(dir.join(&format!("busy-{round}-{n}")), "").unwrap();
            std::thread::sleep(Duration::from_micros(500));
        }
        let outcome = running.finish();
        outcome.expect_code(0);
        for line in outcome.stdout.lines() {
            let (name, mask) = line.split_once(':').unwrap();
            let mask = u64::from_str_radix(mask.trim(), 16).unwrap();
            assert_eq!(mask, 0, "COMMAND started with signals {name}: {line}");
        }
        assert_eq!(outcome.stdout.lines().count(), 3, "{outcome:#?}");
    }
}

#[test]
fn command_statuses_126_127_and_never_run_when_not_ready() {
    let dir = TempDir::new();
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let url = server.url("/");
    readygate(["wait", &url, "--", "/no/such/command"])
        .outcome()
        .expect_code(127)
        .expect_stderr("command not found");
    let not_executable = dir.join("script");
    std::fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    readygate(["wait", &url, "--", not_executable.to_str().unwrap()])
        .outcome()
        .expect_code(126)
        .expect_stderr("permission denied");
    // A script whose interpreter is missing was found: exec's "not found" is the interpreter's.
    let orphan_script = dir.join("orphan-script");
    write_executable(&orphan_script, "#!/nonexistent/sh\necho hi\n");
    let outcome = readygate(["wait", &url, "--", orphan_script.to_str().unwrap()]).outcome();
    outcome
        .expect_code(126)
        .expect_stderr("its interpreter \"/nonexistent/sh\" was not found");
    assert!(
        !outcome.stderr.contains("command not found"),
        "{outcome:#?}"
    );
    let marker = dir.join("ran");
    let closed = format!("tcp://{}", closed_addr());
    readygate([
        "wait",
        "-t",
        "200ms",
        &closed,
        "--",
        "touch",
        marker.to_str().unwrap(),
    ])
    .outcome()
    .expect_code(1);
    assert!(!marker.exists(), "COMMAND ran although not ready");
}
