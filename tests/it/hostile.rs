//! Hostile and broken peers: each one gets `wait --timeout 2s --attempt-timeout 500ms`, which
//! must end with status 1 at the deadline (not before, not long after), name what went wrong,
//! and stay small in memory however much the peer sends.

use std::time::Duration;

use crate::support::emulated::time_limit;
use crate::support::events::exit_within;
use crate::support::http::{Answer, HttpServer};
use crate::support::measure::{measured, measured_at, Measured};
use crate::support::pipe::full_pipe;
use crate::support::raw::{self, HangUpSocket, Peer, ShapeShifter};
use crate::support::run::{finish, RunExt, OVERRUN};
use crate::support::trailerless::TrailerlessGrpc;
use crate::support::{readygate, wait_until, TempDir};

/// The deadline every hostile wait is given.
const DEADLINE: Duration = Duration::from_secs(2);
/// The memory bound of the issue, in MiB (the debug build is measured here: the release
/// binary is smaller).
const MEMORY_MIB: u64 = 20;

/// `readygate wait --timeout 2s --attempt-timeout 500ms EXTRA... TARGET`, measured (once more
/// if it ended late).
fn hostile_wait(target: &str, extra: &[&str]) -> Measured {
    let mut args = vec!["wait", "--timeout", "2s", "--attempt-timeout", "500ms"];
    args.extend_from_slice(extra);
    args.push(target);
    measured_at(&mut readygate(&args), DEADLINE)
}

/// Prints one measurement in the form `bench/hostile.sh` collects.
fn report(label: &str, run: &Measured) {
    eprintln!(
        "bench: {label}: overrun {:.1} ms, peak {} KiB",
        run.outcome.elapsed.saturating_sub(DEADLINE).as_secs_f64() * 1000.0,
        run.peak_kib
    );
}

/// The bounds every hostile run must keep, and the words its reason must contain (`a|b`: either).
#[track_caller]
fn expect_bounded_failure(label: &str, run: &Measured, target: &str, words: &[&str]) {
    let outcome = &run.outcome;
    outcome.expect_code(1).expect_ended_at(DEADLINE);
    run.expect_memory_under(MEMORY_MIB);
    let failure = outcome
        .stderr
        .lines()
        .find(|line| line.contains("ERROR") && line.contains(target))
        .unwrap_or_else(|| panic!("no failure line naming {target}: {outcome:#?}"));
    for word in words {
        // `a|b`: either word will do.
        assert!(
            word.split('|').any(|w| failure.contains(w)),
            "failure line lacks {word:?}: {failure}"
        );
    }
    report(label, run);
}

#[test]
fn a_server_that_accepts_and_never_answers() {
    let peer = Peer::start(raw::silent);
    let url = peer.url("http", "/ready");
    let run = hostile_wait(&url, &[]);
    expect_bounded_failure("silent server", &run, &url, &["no response within"]);
    assert!(peer.accepted() >= 3, "one fresh connection per attempt");

    let target = peer.url("tcp", "");
    let probe = measured_at(
        &mut readygate(["probe", "--attempt-timeout", "500ms", &url, &target]),
        Duration::from_millis(500),
    );
    probe
        .outcome
        .expect_code(1)
        .expect_ended_at(Duration::from_millis(500))
        .expect_stdout(&format!("{url}: no response within 500ms"));
    assert!(
        !probe.outcome.stdout.contains(&target),
        "a TCP target is ready once connected: {:#?}",
        probe.outcome
    );
}

#[test]
fn a_server_that_drips_its_headers_a_byte_a_second() {
    let peer = Peer::start(raw::drip_headers);
    let url = peer.url("http", "/");
    expect_bounded_failure(
        "header drip",
        &hostile_wait(&url, &[]),
        &url,
        &["no response within"],
    );
    assert!(peer.accepted() >= 3);
}

#[test]
fn a_server_that_sends_an_endless_body() {
    let peer = Peer::start(raw::endless_body);
    let url = peer.url("http", "/");
    let run = hostile_wait(&url, &["--contains", "ready"]);
    expect_bounded_failure(
        "endless body",
        &run,
        &url,
        &["body did not contain \"ready\""],
    );
    // Every attempt reads at most 1 MiB and lets go: many attempts, each cut short.
    assert!(peer.accepted() >= 3, "{} attempts", peer.accepted());
}

#[test]
fn a_server_that_resets_the_connection_mid_response() {
    let peer = Peer::start(raw::reset_in_head);
    let url = peer.url("http", "/head");
    expect_bounded_failure("reset in head", &hostile_wait(&url, &[]), &url, &["reset"]);
    assert!(peer.accepted() >= 3);

    let peer = Peer::start(raw::reset_in_body);
    let url = peer.url("http", "/body");
    let run = hostile_wait(&url, &["--contains", "ready"]);
    expect_bounded_failure("reset in body", &run, &url, &["reading body", "reset"]);
    assert!(peer.accepted() >= 3);
}

#[test]
fn a_server_that_sends_a_1_mib_header() {
    let peer = Peer::start(raw::huge_header);
    let url = peer.url("http", "/");
    expect_bounded_failure(
        "1 MiB header",
        &hostile_wait(&url, &[]),
        &url,
        &["too large"],
    );

    let peer = Peer::start(raw::header_flood);
    let url = peer.url("http", "/flood");
    expect_bounded_failure(
        "1 MiB of headers",
        &hostile_wait(&url, &[]),
        &url,
        &["too large"],
    );
}

#[test]
fn a_redirect_loop() {
    let server = HttpServer::start(|seen, _| match seen.path.as_str() {
        "/ping" => Answer::status(302).header("location", "/pong"),
        _ => Answer::status(307).header("location", "/ping"),
    });
    let url = server.url("/ping");
    let run = hostile_wait(&url, &[]);
    expect_bounded_failure("redirect loop", &run, &url, &["stopped after 10 redirects"]);
    assert!(server.hits() >= 20, "{} requests", server.hits());
}

#[test]
fn a_server_that_sends_informational_heads_forever() {
    let peer = Peer::start(raw::informational_forever);
    let url = peer.url("http", "/");
    let run = hostile_wait(&url, &[]);
    expect_bounded_failure(
        "endless 103 heads",
        &run,
        &url,
        &["too many informational (1xx) responses"],
    );
    assert!(peer.accepted() >= 3, "{} attempts", peer.accepted());
}

#[test]
fn sigterm_ends_a_wait_on_endless_informational_heads() {
    let peer = Peer::start(raw::informational_forever);
    let url = peer.url("http", "/");
    let (child, started) = readygate(["wait", "-t", "60s", &url]).spawn_captured();
    wait_until("a second connection to the peer", || peer.accepted() >= 2);
    let signalled = std::time::Instant::now();
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    finish(child, started).expect_code(143);
    let took = signalled.elapsed();
    assert!(
        took < time_limit(took, Duration::from_secs(2)),
        "SIGTERM answered after {took:?}"
    );
}

#[test]
fn a_body_that_stalls_is_not_ready_at_the_attempt_timeout() {
    let peer = Peer::start(raw::stalled_body);
    let url = peer.url("http", "/");
    // Status only: the kubelet's timeout covers reading the body, and so does readygate's.
    expect_bounded_failure(
        "stalled body",
        &hostile_wait(&url, &[]),
        &url,
        &["body not complete within"],
    );
    readygate(["probe", "--attempt-timeout", "300ms", &url])
        .outcome()
        .expect_code(1)
        .expect_stdout(&format!("{url}: body not complete within 300ms"));
    // An endless body is read only as far as a status check needs (10 KiB), then ready.
    let endless = Peer::start(raw::endless_body);
    readygate(["probe", &endless.url("http", "/")])
        .outcome()
        .expect_code(0);
}

#[test]
fn a_redirect_to_any_location_is_followed_or_named() {
    const LOCATIONS: [&str; 12] = [
        "/a b",
        "/<script>",
        "/`id`",
        "/tab\there",
        "/caf\u{e9}",
        "../x y?q=<1>",
        "/next?to=http://elsewhere/x",
        "//127.0.0.1:{port}/ok b",
        "http:/one-slash",
        "http://bad host/",
        "http://[zz]/",
        "http://h:99999/",
    ];
    let server = HttpServer::start(|seen, _| match seen.path.strip_prefix("/start/") {
        Some(n) => {
            let port = seen
                .header("host")
                .unwrap_or_default()
                .rsplit(':')
                .next()
                .unwrap_or_default()
                .to_string();
            let location = LOCATIONS[n.parse::<usize>().unwrap()].replace("{port}", &port);
            Answer::status(302).header("location", location)
        }
        None => Answer::body(format!("landed at {}", seen.path)),
    });
    for (n, location) in LOCATIONS.iter().enumerate() {
        let url = server.url(&format!("/start/{n}"));
        let outcome = readygate(["probe", "--status", "200", &url]).outcome();
        let invalid = location.starts_with("http");
        if invalid {
            outcome
                .expect_code(1)
                .expect_stdout("redirect to an invalid location");
            assert_eq!(outcome.stdout.lines().count(), 1, "{outcome:#?}");
        } else {
            outcome.expect_code(0);
        }
        assert!(outcome.stderr.is_empty(), "{location}: {outcome:#?}");
    }
    let landed: Vec<String> = server
        .seen()
        .into_iter()
        .map(|s| s.path)
        .filter(|p| !p.starts_with("/start/"))
        .collect();
    assert_eq!(
        landed,
        [
            "/a%20b",
            "/%3Cscript%3E",
            "/%60id%60",
            "/tab%09here",
            "/caf%C3%A9",
            "/x%20y?q=%3C1%3E",
            "/next?to=http://elsewhere/x",
            "/ok%20b",
        ]
    );
}

#[test]
fn a_tls_listener_that_never_finishes_the_handshake() {
    let peer = Peer::start(raw::silent);
    let url = peer.url("https", "/ready");
    expect_bounded_failure(
        "stalled TLS handshake (https)",
        &hostile_wait(&url, &["--insecure"]),
        &url,
        &["TLS handshake not complete within"],
    );
    assert!(peer.accepted() >= 3);
    let target = peer.url("grpcs", "");
    expect_bounded_failure(
        "stalled TLS handshake (grpcs)",
        &hostile_wait(&target, &["--insecure"]),
        &target,
        &["TLS handshake not complete within"],
    );
}

#[test]
fn a_grpc_server_that_never_sends_trailers() {
    let server = TrailerlessGrpc::start();
    let target = format!("grpc://{}/app", server.addr);
    expect_bounded_failure(
        "gRPC without trailers",
        &hostile_wait(&target, &[]),
        &target,
        &["answer not complete within"],
    );
    assert!(server.calls() >= 3, "{} calls", server.calls());
}

#[test]
fn a_unix_socket_whose_peer_closes_at_once() {
    let dir = TempDir::new();
    let socket = HangUpSocket::start(&dir.join("app.sock"));
    let path = socket.path.to_str().unwrap();
    let url = "http://app.local/ready";
    // Closed before reading the request, or with it unread (then the kernel reports a reset).
    expect_bounded_failure(
        "Unix socket hang-up",
        &hostile_wait(url, &["--unix-socket", path]),
        url,
        &["connection closed|connection reset"],
    );
    assert!(socket.accepted() >= 3);
    // For a `unix://` target a connection is all that is asked: it is ready at once.
    readygate(["wait", "-t", "2s", &format!("unix://{path}")])
        .output()
        .map(|o| assert_eq!(o.status.code(), Some(0), "{o:?}"))
        .unwrap();
}

#[test]
fn a_file_replaced_truncated_and_turned_into_a_folder_while_read() {
    let dir = TempDir::new();
    let path = dir.join("state");
    let shifter = ShapeShifter::start(&path);
    let target = format!("file://{}", path.display());
    let run = hostile_wait(&target, &["--contains", "serving"]);
    let changes = shifter.changes();
    drop(shifter);
    let outcome = &run.outcome;
    outcome.expect_code(1).expect_ended_at(DEADLINE);
    run.expect_memory_under(MEMORY_MIB);
    report("shape-shifting file", &run);
    let reasons = [
        "did not contain \"serving\"",
        "is a directory",
        "not a regular file",
        "no such file",
    ];
    assert!(
        reasons.iter().any(|r| outcome.stderr.contains(r)),
        "{outcome:#?}"
    );
    assert!(changes > 100, "the file changed only {changes} times");
}

#[test]
fn files_that_are_endless_huge_or_never_written() {
    let dir = TempDir::new();
    // A FIFO nobody writes to: opening it for reading must not block the wait.
    let fifo = dir.join("fifo");
    crate::support::make_fifo(&fifo).unwrap();
    let target = format!("file://{}", fifo.display());
    expect_bounded_failure(
        "FIFO file",
        &hostile_wait(&target, &["--contains", "ready"]),
        &target,
        &["not a regular file"],
    );
    // An endless device.
    expect_bounded_failure(
        "/dev/zero",
        &hostile_wait("/dev/zero", &["--contains", "ready"]),
        "/dev/zero",
        &["not a regular file"],
    );
    // A 4 GiB (sparse) file: only its first MiB is ever read. On a loaded machine one attempt
    // (a debug build's regex over that MiB) may outlast the 500 ms attempt timeout, so the
    // wait keeps its deadline and memory with either reason...
    let huge = dir.join("huge");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(4 << 30))
        .unwrap();
    let target = huge.to_str().unwrap();
    // On a starved machine the debug build's regex over that MiB can outlast an attempt.
    expect_bounded_failure(
        "4 GiB sparse file",
        &hostile_wait(target, &["--matches", "ready$"]),
        target,
        &["content did not match|no answer within"],
    );
    // ...and one attempt given ample time ends with the content's verdict: reading all 4 GiB
    // would take it far past that.
    let probe = measured(&mut readygate([
        "probe",
        "--timeout",
        "20s",
        "--attempt-timeout",
        "20s",
        "--matches",
        "ready$",
        target,
    ]));
    probe
        .outcome
        .expect_code(1)
        .expect_faster_than(Duration::from_secs(20))
        .expect_stdout(&format!("{target}: content did not match"));
    probe.expect_memory_under(MEMORY_MIB);
}

/// A regex that takes seconds over a megabyte of word characters (even in a release build).
const SLOW_REGEX: &str = r"(\w+\s*){1,20}READY";

#[test]
fn a_slow_regex_over_a_hostile_body_or_file_does_not_stall_the_deadline() {
    let peer = Peer::start(raw::endless_body);
    let url = peer.url("http", "/");
    expect_bounded_failure(
        "slow regex over body",
        &hostile_wait(&url, &["--matches", SLOW_REGEX]),
        &url,
        &["no answer within"],
    );
    let dir = TempDir::new();
    let path = dir.join("words");
    std::fs::write(&path, vec![b'x'; 1 << 20]).unwrap();
    let target = path.to_str().unwrap();
    expect_bounded_failure(
        "slow regex over file",
        &hostile_wait(target, &["--matches", SLOW_REGEX]),
        target,
        &["no answer within"],
    );
}

#[test]
fn a_slow_file_target_does_not_hold_up_another_target() {
    // Each target's blocking work has a lane of its own: a regex busy for seconds over one
    // file must not delay a healthy HTTP target.
    let server = HttpServer::start(|_, _| Answer::body("all systems READY"));
    let dir = TempDir::new();
    let big = dir.join("big-file");
    std::fs::write(&big, vec![b'x'; 1 << 20]).unwrap();
    let url = server.url("/");
    let big = big.to_str().unwrap();
    readygate([
        "wait",
        "-t",
        "20s",
        "--any",
        "--matches",
        SLOW_REGEX,
        big,
        &url,
    ])
    .outcome()
    .expect_code(0)
    .expect_faster_than(Duration::from_secs(5));
    // A FIFO nobody writes to, alike.
    let fifo = dir.join("fifo");
    crate::support::make_fifo(&fifo).unwrap();
    let fifo = fifo.to_str().unwrap();
    readygate([
        "wait",
        "-t",
        "20s",
        "--any",
        "--contains",
        "READY",
        fifo,
        &url,
    ])
    .outcome()
    .expect_code(0)
    .expect_faster_than(Duration::from_secs(5));
}

/// Runs `command` to its end, or kills it after `limit`: its status and how long it took.
fn ended_within(command: &mut std::process::Command, limit: Duration) -> (Option<i32>, Duration) {
    let started = std::time::Instant::now();
    let mut child = command.spawn().expect("spawn readygate");
    let status = exit_within(&mut child, limit);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    (status.and_then(|s| s.code()), started.elapsed())
}

/// How long exit waits for queued lines to be written (docs/cli.md: "at most 200 ms").
const FLUSH: Duration = Duration::from_millis(200);

#[test]
fn a_stderr_or_stdout_nobody_reads_never_holds_the_deadline() {
    use std::process::Stdio;
    let closed = format!("tcp://{}", crate::support::closed_addr());
    // `wait -v`: a line per attempt, to a full stderr.
    let (_reader, writer) = full_pipe();
    let mut wait = readygate(["wait", "-v", "-t", "1s", &closed]);
    wait.stdout(Stdio::null()).stderr(writer);
    let (code, took) = ended_within(&mut wait, Duration::from_secs(15));
    assert_eq!(
        code,
        Some(1),
        "wait with a full stderr: ended after {took:?}"
    );
    assert!(
        took < time_limit(took, Duration::from_secs(1) + FLUSH + OVERRUN),
        "took {took:?}"
    );
    // `probe` with many failures, to a full stdout.
    let (_reader, writer) = full_pipe();
    let targets: Vec<String> = (0..50).map(|_| closed.clone()).collect();
    let mut probe = readygate(["probe"]);
    probe.args(&targets).stdout(writer).stderr(Stdio::null());
    let (code, took) = ended_within(&mut probe, Duration::from_secs(15));
    assert_eq!(
        code,
        Some(1),
        "probe with a full stdout: ended after {took:?}"
    );
    assert!(
        took < time_limit(took, Duration::from_secs(1) + FLUSH + OVERRUN),
        "took {took:?}"
    );
}

#[test]
fn a_sigterm_is_answered_while_stderr_is_full() {
    use std::process::Stdio;
    let peer = Peer::start(raw::silent);
    let url = peer.url("http", "/");
    let (_reader, writer) = full_pipe();
    let mut child = readygate(["wait", "-v", "-t", "60s", &url])
        .stdout(Stdio::null())
        .stderr(writer)
        .spawn()
        .unwrap();
    // The pipe was full before it started: every line it writes is stuck behind it. Its
    // handler is in place before its first attempt connects. (Not `catches`: under qemu-user,
    // `SigCgt` shows the emulator's own handlers from the start.)
    wait_until("readygate's first attempt", || peer.accepted() > 0);
    let sent = std::time::Instant::now();
    // SAFETY: kill(2) on our own child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = exit_within(&mut child, Duration::from_secs(10));
    let took = sent.elapsed();
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert_eq!(status.and_then(|s| s.code()), Some(143), "after {took:?}");
    assert!(
        took < time_limit(took, Duration::from_secs(2)),
        "took {took:?}"
    );
}

#[test]
fn a_fifo_named_as_a_file_to_write_is_refused_not_waited_on() {
    let dir = TempDir::new();
    let fifo = dir.join("fifo");
    crate::support::make_fifo(&fifo).unwrap();
    let closed = format!("tcp://{}", crate::support::closed_addr());
    readygate([
        "wait",
        "-t",
        "300ms",
        "--termination-log",
        fifo.to_str().unwrap(),
        &closed,
    ])
    .outcome()
    .expect_code(1)
    .expect_stderr("cannot write --termination-log")
    .expect_stderr("not a regular file")
    .expect_faster_than(Duration::from_secs(5));
    let ready = dir.join("ready");
    std::fs::write(&ready, "").unwrap();
    readygate([
        "wait",
        "-t",
        "5s",
        "--touch",
        fifo.to_str().unwrap(),
        ready.to_str().unwrap(),
    ])
    .outcome()
    .expect_code(1)
    .expect_stderr("cannot create --touch file")
    .expect_stderr("not a regular file")
    .expect_faster_than(Duration::from_secs(5));
}

/// CPU time (user + system) the process `pid` has used so far.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_millis(ticks * 1000 / per_second)
}

#[test]
fn a_busy_folder_does_not_make_a_file_target_retry_on_every_event() {
    // A log folder with constant writes to another file: a `--contains` file target is tried
    // again at once only for events on its own name; the others are rate-limited.
    let dir = TempDir::new();
    let target = dir.join("ready");
    std::fs::write(&target, "not yet").unwrap();
    let mut running = crate::support::Running::spawn(&mut readygate([
        "wait",
        "-t",
        "60s",
        "--contains",
        "READY",
        target.to_str().unwrap(),
    ]));
    running.line("waiting up to");
    let pid = running.pid();
    let before = cpu_time(pid);
    let started = std::time::Instant::now();
    let mut writes = 0u32;
    {
        use std::io::Write;
        let mut log = std::fs::File::create(dir.join("busy.log")).unwrap();
        while started.elapsed() < Duration::from_secs(2) {
            log.write_all(b"a line of log\n").unwrap();
            writes += 1;
        }
    }
    let used = cpu_time(pid) - before;
    eprintln!("{writes} writes to another file in 2 s: readygate used {used:?} of CPU");
    assert!(
        used < Duration::from_millis(300),
        "used {used:?} for {writes} writes elsewhere"
    );
    std::fs::write(&target, "READY").unwrap();
    running.line("ready after");
    assert_eq!(running.finish().code, Some(0));
}
