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

/// What a hostile peer is, and how to start it: one per row of [`hostile_peers!`].
#[derive(Clone, Copy)]
enum Kind {
    /// A raw TCP peer acting out `behaviour`, named by a URL of `scheme` and `path`.
    Raw(raw::Behaviour, &'static str, &'static str),
    /// An HTTP server whose two paths redirect to each other.
    RedirectLoop,
    /// A gRPC server that answers and never sends its trailers.
    Trailerless,
    /// A Unix socket whose peer closes each connection at once, behind an `http://` target.
    UnixHangUp,
    /// A file replaced, truncated, turned into a folder and a FIFO, over and over.
    ShapeShifter,
    /// A FIFO nobody writes to.
    Fifo,
    /// `/dev/zero`: endless.
    DevZero,
    /// A sparse file of 4 GiB.
    Sparse4GiB,
    /// A file of a mebibyte of word characters (a slow regex's worst case).
    Words,
}

/// A started peer: the target to wait for, options it needs, and how often it was asked.
struct Started {
    /// The target as given to readygate.
    target: String,
    /// Options the target needs (a Unix socket's path).
    options: Vec<String>,
    /// Connections, requests or changes so far; `usize::MAX` for a file nobody counts.
    seen: Box<dyn Fn() -> usize>,
}

impl Kind {
    /// Starts the peer, with any file it needs in `dir`.
    fn start(self, dir: &TempDir) -> Started {
        let file = |target: String| Started {
            target,
            options: Vec::new(),
            seen: Box::new(|| usize::MAX),
        };
        match self {
            Kind::Raw(behaviour, scheme, path) => {
                let peer = Peer::start(behaviour);
                Started {
                    target: peer.url(scheme, path),
                    options: Vec::new(),
                    seen: Box::new(move || peer.accepted()),
                }
            }
            Kind::RedirectLoop => {
                let server = HttpServer::start(|seen, _| match seen.path.as_str() {
                    "/ping" => Answer::status(302).header("location", "/pong"),
                    _ => Answer::status(307).header("location", "/ping"),
                });
                Started {
                    target: server.url("/ping"),
                    options: Vec::new(),
                    seen: Box::new(move || server.hits()),
                }
            }
            Kind::Trailerless => {
                let server = TrailerlessGrpc::start();
                Started {
                    target: format!("grpc://{}/app", server.addr),
                    options: Vec::new(),
                    seen: Box::new(move || server.calls()),
                }
            }
            Kind::UnixHangUp => {
                let socket = HangUpSocket::start(&dir.join("app.sock"));
                Started {
                    target: "http://app.local/ready".into(),
                    options: vec!["--unix-socket".into(), socket.path.display().to_string()],
                    seen: Box::new(move || socket.accepted()),
                }
            }
            Kind::ShapeShifter => {
                let path = dir.join("state");
                let shifter = ShapeShifter::start(&path);
                Started {
                    target: format!("file://{}", path.display()),
                    options: Vec::new(),
                    seen: Box::new(move || shifter.changes()),
                }
            }
            Kind::Fifo => {
                let fifo = dir.join("fifo");
                crate::support::make_fifo(&fifo).unwrap();
                file(format!("file://{}", fifo.display()))
            }
            Kind::DevZero => file("/dev/zero".into()),
            Kind::Sparse4GiB => file(sparse_4_gib(dir).display().to_string()),
            Kind::Words => {
                let path = dir.join("words");
                std::fs::write(&path, vec![b'x'; 1 << 20]).unwrap();
                file(path.display().to_string())
            }
        }
    }
}

/// A sparse file of 4 GiB in `dir`.
fn sparse_4_gib(dir: &TempDir) -> std::path::PathBuf {
    let huge = dir.join("huge");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(4 << 30))
        .unwrap();
    huge
}

/// One hostile peer and what the wait must say of it.
struct Case {
    /// Names the peer in failures and in bench/hostile.sh's report.
    label: &'static str,
    /// The peer.
    kind: Kind,
    /// Options given beside the target.
    options: &'static [&'static str],
    /// Words the failure line must hold (`a|b`: either).
    words: &'static [&'static str],
    /// Fewest connections, requests or changes the peer must have seen: one fresh connection
    /// per attempt, or a file that changed under the reads.
    seen: usize,
}

/// Runs `case`: the wait ends with status 1 at its deadline, within its memory, naming what
/// went wrong, having asked the peer as often as the case says.
fn run(case: Case) {
    let dir = TempDir::new();
    let peer = case.kind.start(&dir);
    let mut options: Vec<&str> = case.options.to_vec();
    options.extend(peer.options.iter().map(String::as_str));
    let run = hostile_wait(&peer.target, &options);
    expect_bounded_failure(case.label, &run, &peer.target, case.words);
    let seen = (peer.seen)();
    assert!(
        seen >= case.seen,
        "{}: seen {seen} times, at least {} expected",
        case.label,
        case.seen
    );
}

/// The table: one test per row, each named for its peer, all held to the same bounds by [`run`].
macro_rules! hostile_peers {
    ($($name:ident: $label:literal, $kind:expr, $options:expr, $words:expr, $seen:expr;)*) => {
        $(
            #[test]
            fn $name() {
                run(Case {
                    label: $label,
                    kind: $kind,
                    options: &$options,
                    words: &$words,
                    seen: $seen,
                });
            }
        )*
    };
}

/// A regex that takes seconds over a megabyte of word characters (even in a release build).
const SLOW_REGEX: &str = r"(\w+\s*){1,20}READY";

hostile_peers! {
    a_server_that_accepts_and_never_answers: "silent server",
        Kind::Raw(raw::silent, "http", "/ready"), [], ["no response within"], 3;
    a_server_that_drips_its_headers_a_byte_a_second: "header drip",
        Kind::Raw(raw::drip_headers, "http", "/"), [], ["no response within"], 3;
    // Every attempt reads at most 1 MiB and lets go: many attempts, each cut short.
    a_server_that_sends_an_endless_body: "endless body",
        Kind::Raw(raw::endless_body, "http", "/"), ["--contains", "ready"],
        ["body did not contain \"ready\""], 3;
    a_server_that_resets_the_connection_in_its_head: "reset in head",
        Kind::Raw(raw::reset_in_head, "http", "/head"), [], ["reset"], 3;
    a_server_that_resets_the_connection_in_its_body: "reset in body",
        Kind::Raw(raw::reset_in_body, "http", "/body"), ["--contains", "ready"],
        ["reading body", "reset"], 3;
    a_server_that_sends_a_1_mib_header: "1 MiB header",
        Kind::Raw(raw::huge_header, "http", "/"), [], ["too large"], 1;
    a_server_that_sends_1_mib_of_headers: "1 MiB of headers",
        Kind::Raw(raw::header_flood, "http", "/flood"), [], ["too large"], 1;
    a_redirect_loop: "redirect loop",
        Kind::RedirectLoop, [], ["stopped after 10 redirects"], 20;
    a_server_that_sends_informational_heads_forever: "endless 103 heads",
        Kind::Raw(raw::informational_forever, "http", "/"), [],
        ["too many informational (1xx) responses"], 3;
    // Status only: the kubelet's timeout covers reading the body, and so does readygate's.
    a_body_that_stalls_is_not_ready_at_the_attempt_timeout: "stalled body",
        Kind::Raw(raw::stalled_body, "http", "/"), [], ["body not complete within"], 1;
    an_https_listener_that_never_finishes_the_handshake: "stalled TLS handshake (https)",
        Kind::Raw(raw::silent, "https", "/ready"), ["--insecure"],
        ["TLS handshake not complete within"], 3;
    a_grpcs_listener_that_never_finishes_the_handshake: "stalled TLS handshake (grpcs)",
        Kind::Raw(raw::silent, "grpcs", ""), ["--insecure"],
        ["TLS handshake not complete within"], 1;
    a_grpc_server_that_never_sends_trailers: "gRPC without trailers",
        Kind::Trailerless, [], ["answer not complete within"], 3;
    // Closed before reading the request, or with it unread (then the kernel reports a reset).
    a_unix_socket_whose_peer_closes_at_once: "Unix socket hang-up",
        Kind::UnixHangUp, [], ["connection closed|connection reset"], 3;
    a_file_replaced_truncated_and_turned_into_a_folder_while_read: "shape-shifting file",
        Kind::ShapeShifter, ["--contains", "serving"],
        ["did not contain \"serving\"|is a directory|not a regular file|no such file"], 101;
    // Opening a FIFO nobody writes to for reading must not block the wait.
    a_fifo_nobody_writes_to: "FIFO file",
        Kind::Fifo, ["--contains", "ready"], ["not a regular file"], 0;
    an_endless_device: "/dev/zero",
        Kind::DevZero, ["--contains", "ready"], ["not a regular file"], 0;
    // Only its first MiB is ever read. On a loaded machine one attempt (a debug build's regex
    // over that MiB) may outlast the 500 ms attempt timeout, so either reason will do.
    a_4_gib_sparse_file: "4 GiB sparse file",
        Kind::Sparse4GiB, ["--matches", "ready$"], ["content did not match|no answer within"], 0;
    a_slow_regex_over_a_hostile_body: "slow regex over body",
        Kind::Raw(raw::endless_body, "http", "/"), ["--matches", SLOW_REGEX],
        ["no answer within"], 1;
    a_slow_regex_over_a_file: "slow regex over file",
        Kind::Words, ["--matches", SLOW_REGEX], ["no answer within"], 0;
}

#[test]
fn a_probe_of_a_silent_server_ends_at_its_attempt_timeout_and_a_tcp_target_is_ready() {
    let peer = Peer::start(raw::silent);
    let (url, target) = (peer.url("http", "/ready"), peer.url("tcp", ""));
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
fn a_probe_of_a_stalled_body_fails_and_of_an_endless_one_reads_only_what_it_needs() {
    let peer = Peer::start(raw::stalled_body);
    let url = peer.url("http", "/");
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
fn a_unix_target_is_ready_once_connected_even_to_a_peer_that_hangs_up() {
    let dir = TempDir::new();
    let socket = HangUpSocket::start(&dir.join("app.sock"));
    // For a `unix://` target a connection is all that is asked: it is ready at once.
    readygate([
        "wait",
        "-t",
        "2s",
        &format!("unix://{}", socket.path.display()),
    ])
    .output()
    .map(|o| assert_eq!(o.status.code(), Some(0), "{o:?}"))
    .unwrap();
}

#[test]
fn a_4_gib_file_is_read_only_as_far_as_its_content_check_needs() {
    // One attempt given ample time ends with the content's verdict: reading all 4 GiB would
    // take it far past that.
    let dir = TempDir::new();
    let huge = sparse_4_gib(&dir);
    let target = huge.to_str().unwrap();
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
