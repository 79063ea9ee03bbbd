//! `wait --on-exit URL -- COMMAND`: COMMAND runs as a child; when it ends, one `POST URL`
//! tells an old-style sidecar to stop, and readygate exits as COMMAND did.

use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::http::{Answer, HttpServer};
use crate::support::run::{RunExt, OVERRUN};
use crate::support::{
    closed_addr, readygate, require, skip_under_qemu, wait_for_path, Running, TempDir,
};

/// A server standing for the sidecar's shutdown endpoint; it notes whether `marker` (the
/// command's last act) existed when each request arrived.
fn sidecar(marker: &Path) -> (HttpServer, Arc<AtomicBool>) {
    let after = Arc::new(AtomicBool::new(true));
    let (marker, flag) = (marker.to_path_buf(), after.clone());
    let server = HttpServer::start(move |_, _| {
        if !marker.exists() {
            flag.store(false, Ordering::SeqCst);
        }
        Answer::status(200)
    });
    (server, after)
}

fn tcp(server: &HttpServer) -> String {
    format!("tcp://{}", server.addr)
}

#[track_caller]
fn expect_one_post(server: &HttpServer, path: &str) {
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "expected exactly one request: {seen:#?}");
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, path);
}

#[test]
fn the_url_gets_one_post_after_the_command_exits_and_its_status_passes_through() {
    let dir = TempDir::new();
    let marker = dir.join("done");
    let (server, after) = sidecar(&marker);
    let script = format!("echo work; echo done > {}; exit 7", marker.display());
    let outcome = readygate([
        "wait",
        "--on-exit",
        &server.url("/quitquitquit"),
        &tcp(&server),
    ])
    .args(["--", "sh", "-c", &script])
    .outcome();
    outcome
        .expect_code(7)
        .expect_stdout("work")
        .expect_stderr("status 7")
        .expect_faster_than(Duration::from_secs(5));
    expect_one_post(&server, "/quitquitquit");
    assert!(
        after.load(Ordering::SeqCst),
        "the POST came before the command ended"
    );
}

#[test]
fn a_command_killed_by_a_signal_exits_128_plus_n() {
    let dir = TempDir::new();
    let (server, _) = sidecar(&dir.join("unused"));
    readygate(["wait", "--on-exit", &server.url("/stop"), &tcp(&server)])
        .args(["--", "sh", "-c", "kill -9 $$"])
        .outcome()
        .expect_code(137)
        .expect_stderr("killed by signal 9");
    expect_one_post(&server, "/stop");
}

#[test]
fn every_terminating_signal_sent_to_readygate_reaches_the_command() {
    for (signal, name, code) in [
        (libc::SIGTERM, "TERM", 42),
        (libc::SIGHUP, "HUP", 43),
        (libc::SIGINT, "INT", 44),
        (libc::SIGUSR1, "USR1", 45),
        (libc::SIGUSR2, "USR2", 46),
        (libc::SIGQUIT, "QUIT", 47),
        (libc::SIGALRM, "ALRM", 48),
        (libc::SIGRTMIN(), "RTMIN", 49),
        (libc::SIGRTMAX(), "RTMAX", 50),
    ] {
        if signal >= libc::SIGRTMIN()
            && skip_under_qemu(
                "qemu-user moves the guest's real-time signals to other host numbers",
            )
        {
            continue;
        }
        let dir = TempDir::new();
        let (started, got) = (dir.join("started"), dir.join("got"));
        let (server, _) = sidecar(&got);
        let script = format!(
            "trap 'echo {name} > {got}; exit {code}' {signal}; touch {started}; \
             i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 99",
            got = got.display(),
            started = started.display()
        );
        let mut running = Running::spawn(
            readygate(["wait", "--on-exit", &server.url("/stop"), &tcp(&server)])
                .args(["--", "sh", "-c", &script]),
        );
        wait_for_path(&started);
        running.signal(signal);
        let outcome = running.finish();
        assert_eq!(outcome.code, Some(code), "SIG{name}: {outcome:#?}");
        outcome
            .expect_stderr(&format!("forwarding signal {signal}"))
            .expect_faster_than(Duration::from_secs(10));
        assert_eq!(std::fs::read_to_string(&got).unwrap().trim(), name);
        expect_one_post(&server, "/stop");
    }
}

#[test]
fn the_sidecar_is_told_when_readiness_never_comes() {
    let dir = TempDir::new();
    let (server, _) = sidecar(&dir.join("unused"));
    let marker = dir.join("ran");
    let closed = format!("tcp://{}", closed_addr());
    readygate([
        "wait",
        "-t",
        "300ms",
        "--on-exit",
        &server.url("/stop"),
        &closed,
    ])
    .args(["--", "touch", marker.to_str().unwrap()])
    .outcome()
    .expect_code(1)
    .expect_stderr("POST")
    .expect_faster_than(Duration::from_millis(300) + OVERRUN);
    expect_one_post(&server, "/stop");
    assert!(!marker.exists(), "the command ran though not ready");
}

#[test]
fn the_sidecar_is_told_when_a_signal_stops_the_wait() {
    // SIGUSR1 would end a readygate without a handler; standing for COMMAND it is caught.
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGUSR1, 128 + libc::SIGUSR1)] {
        let dir = TempDir::new();
        let (server, _) = sidecar(&dir.join("unused"));
        let closed = format!("tcp://{}", closed_addr());
        let mut running = Running::spawn(
            readygate([
                "wait",
                "-t",
                "60s",
                "--on-exit",
                &server.url("/stop"),
                &closed,
            ])
            .args(["--", "true"]),
        );
        running.line("waiting up to");
        running.signal(signal);
        let outcome = running.finish();
        assert_eq!(outcome.code, Some(code), "signal {signal}: {outcome:#?}");
        outcome
            .expect_stderr(&format!("stopped by signal {signal}"))
            .expect_faster_than(Duration::from_secs(10));
        expect_one_post(&server, "/stop");
    }
}

#[test]
fn a_failed_post_is_logged_and_not_fatal() {
    let dir = TempDir::new();
    let (server, _) = sidecar(&dir.join("unused"));
    let url = format!("http://{}/quitquitquit", closed_addr());
    readygate(["wait", "--on-exit", &url, &tcp(&server)])
        .args(["--", "sh", "-c", "exit 0"])
        .outcome()
        .expect_code(0)
        .expect_stderr("connection refused")
        .expect_faster_than(Duration::from_secs(5));
}

#[test]
fn a_sidecar_that_never_answers_cannot_hold_the_exit_past_the_attempt_timeout() {
    // Connections complete in the backlog, but nothing ever reads or answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = TempDir::new();
    let (server, _) = sidecar(&dir.join("unused"));
    let url = format!("http://{}/quitquitquit", silent.local_addr().unwrap());
    readygate([
        "wait",
        "--attempt-timeout",
        "300ms",
        "--on-exit",
        &url,
        &tcp(&server),
    ])
    .args(["--", "sh", "-c", "exit 4"])
    .outcome()
    .expect_code(4)
    .expect_stderr("no answer within 300ms")
    // Two starts to allow for, readygate's and COMMAND's, before the notice's 300 ms.
    .expect_faster_than(Duration::from_millis(300) + 2 * OVERRUN);
}

#[test]
fn a_command_that_cannot_start_still_stops_the_sidecar() {
    let dir = TempDir::new();
    let (server, _) = sidecar(&dir.join("unused"));
    readygate(["wait", "--on-exit", &server.url("/stop"), &tcp(&server)])
        .args(["--", "/no/such/command"])
        .outcome()
        .expect_code(127)
        .expect_stderr("command not found");
    expect_one_post(&server, "/stop");
}

#[test]
fn disabled_still_runs_the_command_as_a_child_and_posts() {
    let dir = TempDir::new();
    let (server, _) = sidecar(&dir.join("unused"));
    readygate([
        "wait",
        "--on-exit",
        &server.url("/stop"),
        &format!("tcp://{}", closed_addr()),
    ])
    .env("READYGATE_DISABLED", "true")
    .args(["--", "sh", "-c", "exit 3"])
    .outcome()
    .expect_code(3);
    expect_one_post(&server, "/stop");
}

#[test]
fn on_exit_without_a_command_is_a_usage_error() {
    readygate([
        "wait",
        "--on-exit",
        "http://127.0.0.1:1/stop",
        "tcp://127.0.0.1:1",
    ])
    .outcome()
    .expect_code(2)
    .expect_stderr("--on-exit needs a command");
}

#[test]
fn as_pid_1_orphans_are_reaped() {
    let dir = TempDir::new();
    let (server, _) = sidecar(&dir.join("unused"));
    // The inner shell leaves a `sleep` behind; orphaned, it is handed to PID 1 (readygate),
    // and once it exits it stays a zombie unless readygate waits for it. The script waits
    // (up to 30 s) for it to be gone from /proc, which a zombie never is, then counts.
    let script = "orphan=$(sh -c 'sleep 0.2 >/dev/null 2>&1 & echo $!'); \
                  i=0; while [ -e /proc/$orphan ] && [ $i -lt 600 ]; do \
                  sleep 0.05; i=$((i+1)); done; \
                  echo pid1=$(cat /proc/1/comm); \
                  echo zombies=$(cat /proc/[0-9]*/stat 2>/dev/null | grep -c ') Z ')";
    let outcome = std::process::Command::new(require("unshare"))
        .args(["--pid", "--fork", "--mount-proc"])
        .arg(env!("CARGO_BIN_EXE_readygate"))
        .args(["wait", "--on-exit", &server.url("/stop"), &tcp(&server)])
        .args(["--", "sh", "-c", script])
        .stdin(Stdio::null())
        .outcome();
    outcome
        .expect_code(0)
        .expect_stdout("pid1=readygate")
        .expect_stdout("zombies=0");
    expect_one_post(&server, "/stop");
}

#[test]
fn a_signal_is_forwarded_even_while_an_earlier_check_still_runs_on_its_thread() {
    // A file check whose regex takes seconds is still running on its worker thread when the
    // other target is ready and COMMAND starts (a TCP check ignores `--matches`). SIGHUP must
    // reach COMMAND whichever of readygate's threads the kernel delivers it to: handlers are
    // process-wide, never a mask on one thread that another could miss.
    let dir = TempDir::new();
    let words = dir.join("words");
    std::fs::write(&words, vec![b'x'; 1 << 20]).unwrap();
    let (started, got) = (dir.join("started"), dir.join("got"));
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let script = format!(
        "trap 'echo HUP > {got}; exit 43' HUP; touch {started}; \
         i=0; while [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exit 99",
        got = got.display(),
        started = started.display()
    );
    // The file comes first, so its check is under way before the TCP target is found ready.
    let mut running = Running::spawn(
        readygate(["wait", "--any", "--on-exit", &server.url("/stop")])
            .args(["--matches", r"(\w+\s*){1,20}READY", words.to_str().unwrap()])
            .args([&tcp(&server), "--", "sh", "-c", &script]),
    );
    wait_for_path(&started);
    running.signal(libc::SIGHUP);
    // Bounded: a lost signal fails the test instead of hanging it.
    let outcome = running.finish();
    assert_eq!(outcome.code, Some(43), "{outcome:#?}");
    outcome
        .expect_stderr("forwarding signal 1")
        .expect_faster_than(Duration::from_secs(10));
}

#[test]
fn the_sidecar_is_told_when_the_plan_is_refused() {
    // A manifest with a bad target: exit 2, and the sidecar still hears that this is the end.
    let dir = TempDir::new();
    let (server, _) = sidecar(&dir.join("unused"));
    readygate(["wait", "--on-exit", &server.url("/stop"), "db:99999"])
        .args(["--", "true"])
        .outcome()
        .expect_code(2)
        .expect_stderr("invalid port")
        .expect_faster_than(Duration::from_secs(5));
    expect_one_post(&server, "/stop");
}
