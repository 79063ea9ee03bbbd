//! Core `wait` and `probe` sessions: TCP, HTTP and file targets, every option, every status.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::support::http::{Answer, HttpServer};
use crate::support::run::{finish, Outcome, RunExt};
use crate::support::{
    closed_addr, free_port, readygate, wait_until, write_executable, Running, TempDir,
};

const SECOND: Duration = Duration::from_secs(1);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn probe_of_a_serving_http_endpoint_exits_0_quietly() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let outcome = readygate(["probe", &server.url("/ready")]).outcome();
    outcome.expect_code(0);
    assert_eq!(outcome.stdout, "");
    assert_eq!(outcome.stderr, "");
    assert_eq!(server.hits(), 1);
}

#[test]
fn probe_failure_prints_one_line_per_failing_target_on_stdout() {
    let server = HttpServer::start(|_, _| Answer::status(503));
    let closed = closed_addr();
    let url = server.url("/ready");
    let outcome = readygate(["probe", &url, &format!("tcp://{closed}")]).outcome();
    outcome.expect_code(1);
    assert_eq!(
        outcome.stdout,
        format!("{url}: status 503\ntcp://{closed}: connection refused\n")
    );
}

#[test]
fn probe_makes_exactly_one_attempt() {
    let server = HttpServer::start(|_, _| Answer::status(500));
    readygate(["probe", &server.url("/")])
        .outcome()
        .expect_code(1);
    assert_eq!(server.hits(), 1);
}

#[test]
fn wait_on_a_closed_port_fails_at_the_deadline() {
    let addr = closed_addr();
    let outcome =
        readygate(["wait", "--timeout", "500ms", &format!("tcp://{addr}")]).outcome_at(ms(500));
    outcome
        .expect_code(1)
        .expect_ended_at(ms(500))
        .expect_stderr("connection refused");
    assert_eq!(outcome.stdout, "");
}

#[test]
fn wait_notices_a_late_tcp_listener() {
    let port = free_port();
    let mut running = Running::spawn(&mut readygate([
        "wait",
        "-v",
        "-t",
        "30s",
        &format!("127.0.0.1:{port}"),
    ]));
    running.line("attempt 1: connection refused");
    let opened = Instant::now();
    let _server = HttpServer::start_on(port, |_, _| Answer::body("ok"));
    let started = running.started();
    running
        .finish()
        .expect_code(0)
        .expect_slower_than(opened - started)
        .expect_faster_than(opened - started + 4 * SECOND)
        .expect_stderr("ready after");
}

#[test]
fn wait_retries_http_until_the_status_is_accepted() {
    let server = HttpServer::start(|_, hit| Answer::status(if hit < 3 { 503 } else { 204 }));
    let outcome = readygate(["wait", "-t", "10s", &server.url("/healthz")]).outcome();
    outcome.expect_code(0).expect_faster_than(5 * SECOND);
    assert_eq!(server.hits(), 4);
}

#[test]
fn status_option_chooses_the_accepted_statuses() {
    let server = HttpServer::start(|_, _| Answer::status(503));
    let url = server.url("/");
    readygate(["probe", "--status", "500-599", &url])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--status", "200,204", &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("status 503");
    let redirect = HttpServer::start(|_, _| Answer::status(304));
    readygate(["probe", &redirect.url("/")])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--status", "200-299", &redirect.url("/")])
        .outcome()
        .expect_code(1);
}

#[test]
fn contains_and_matches_judge_the_body() {
    let server = HttpServer::start(|_, _| Answer::body(r#"{"status":"UP","checks":[]}"#));
    let url = server.url("/actuator/health");
    readygate(["probe", "--contains", "\"UP\"", &url])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--contains", "DOWN", &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("body did not contain \"DOWN\"");
    readygate(["probe", "--matches", r#""status":\s*"UP""#, &url])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--matches", "^DOWN", &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("body did not match \"^DOWN\"");
}

#[test]
fn requests_carry_user_agent_headers_and_method() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let url = server.url("/x?y=1");
    readygate([
        "probe",
        "-H",
        "X-Probe: yes",
        "--header",
        "Host: app.example",
        "--method",
        "HEAD",
        &url,
    ])
    .outcome()
    .expect_code(0);
    let seen = &server.seen()[0];
    assert_eq!(seen.method, "HEAD");
    assert_eq!(seen.path, "/x?y=1");
    assert_eq!(seen.header("x-probe"), Some("yes"));
    assert_eq!(seen.header("host"), Some("app.example"));
    assert_eq!(
        seen.header("user-agent"),
        Some(concat!("readygate/", env!("CARGO_PKG_VERSION")))
    );
}

#[test]
fn url_credentials_are_sent_as_basic_auth_and_never_printed() {
    let server = HttpServer::start(|_, _| Answer::status(401));
    let url = format!("http://admin:hunter2@{}/private", server.addr);
    let outcome = readygate([
        "wait",
        "-v",
        "-t",
        "300ms",
        "-H",
        "Cookie: session=s3cr3t",
        &url,
    ])
    .outcome();
    outcome.expect_code(1).expect_stderr("admin:***@");
    assert_eq!(
        server.seen()[0].header("authorization"),
        Some("Basic YWRtaW46aHVudGVyMg==")
    );
    for secret in ["hunter2", "s3cr3t", "YWRtaW46aHVudGVyMg"] {
        assert!(
            !outcome.stderr.contains(secret),
            "{secret} leaked: {}",
            outcome.stderr
        );
        assert!(
            !outcome.stdout.contains(secret),
            "{secret} leaked: {}",
            outcome.stdout
        );
    }
}

#[test]
fn same_host_redirects_are_followed_and_others_are_answers() {
    let server = HttpServer::start(|seen, _| match seen.path.as_str() {
        "/old" => Answer::status(302).header("location", "/new"),
        "/relative/a" => Answer::status(301).header("location", "b"),
        "/elsewhere" => Answer::status(302).header("location", "http://192.0.2.1:9/"),
        "/loop" => Answer::status(307).header("location", "/loop"),
        "/new" | "/relative/b" => Answer::body("arrived"),
        _ => Answer::status(404),
    });
    readygate(["probe", "--contains", "arrived", &server.url("/old")])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--contains", "arrived", &server.url("/relative/a")])
        .outcome()
        .expect_code(0);
    // A redirect to another host is an answer: 302 is accepted by default, not with --status 200.
    readygate(["probe", &server.url("/elsewhere")])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--status", "200", &server.url("/elsewhere")])
        .outcome()
        .expect_code(1)
        .expect_stdout("status 302");
    readygate(["probe", &server.url("/loop")])
        .outcome()
        .expect_code(1)
        .expect_stdout("stopped after 10 redirects");
    // As Go's client (the kubelet's): ten requests, the 10th redirect fails.
    let loops = server.seen().iter().filter(|s| s.path == "/loop").count();
    assert_eq!(loops, 10);
}

#[test]
fn success_threshold_needs_consecutive_successes() {
    // 200, 503, then 200 for good: a threshold of 3 must not count across the 503.
    let server = HttpServer::start(|_, hit| Answer::status(if hit == 1 { 503 } else { 200 }));
    readygate([
        "wait",
        "-t",
        "10s",
        "--success-threshold",
        "3",
        &server.url("/"),
    ])
    .outcome()
    .expect_code(0);
    assert_eq!(server.hits(), 5);
}

#[test]
fn any_is_satisfied_by_one_target_all_needs_every_one() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let closed = format!("tcp://{}", closed_addr());
    let url = server.url("/");
    readygate(["wait", "-t", "10s", "--any", &closed, &url])
        .outcome()
        .expect_code(0)
        .expect_faster_than(5 * SECOND);
    readygate(["wait", "-t", "300ms", &closed, &url])
        .outcome()
        .expect_code(1)
        .expect_stderr(&closed);
    readygate(["probe", "--any", &closed, &url])
        .outcome()
        .expect_code(0);
}

#[test]
fn invert_waits_until_a_port_closes() {
    let closed = format!("tcp://{}", closed_addr());
    readygate(["wait", "--invert", &closed])
        .outcome()
        .expect_code(0);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = format!("tcp://{}", listener.local_addr().unwrap());
    readygate(["wait", "--invert", "-t", "300ms", &open])
        .outcome()
        .expect_code(1)
        .expect_stderr("still ready");
    readygate(["probe", "--invert", &open])
        .outcome()
        .expect_code(1)
        .expect_stdout("still ready");
    let running = Running::spawn(&mut readygate(["wait", "--invert", "-t", "30s", &open]));
    // Its first attempt is a connection waiting in the backlog: it found the port open.
    listener.set_nonblocking(true).unwrap();
    wait_until("the inverted wait to connect", || listener.accept().is_ok());
    drop(listener);
    let closed_after = running.started().elapsed();
    running
        .finish()
        .expect_code(0)
        .expect_slower_than(closed_after)
        .expect_faster_than(closed_after + 4 * SECOND);
}

#[test]
fn touch_naming_a_folder_is_a_usage_error_at_start() {
    let dir = TempDir::new();
    let folder = dir.0.to_str().unwrap();
    let fault = format!("readygate: --touch \"{folder}\" is a folder: name the file to create");
    // Never ready: the folder is named at start, not once the 30 s deadline has passed.
    let closed = crate::support::closed_addr().to_string();
    readygate(["wait", "--timeout", "30s", "--touch", folder, &closed])
        .outcome()
        .expect_code(2)
        .expect_stderr(&fault)
        .expect_faster_than(10 * SECOND);
    // Ready at once: the same usage error, and COMMAND never runs.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let ready = listener.local_addr().unwrap().to_string();
    let ran = dir.join("ran");
    let ran = ran.to_str().unwrap();
    readygate(["wait", "--touch", folder, &ready, "--", "touch", ran])
        .outcome()
        .expect_code(2)
        .expect_stderr(&fault);
    assert!(!std::path::Path::new(ran).exists(), "COMMAND ran");
    // A trailing slash names a folder without a look.
    readygate(["probe", "--touch", &format!("{folder}/new/"), &ready])
        .outcome()
        .expect_code(2)
        .expect_stderr("names a folder");
}

#[test]
fn touch_marks_readiness_and_termination_log_records_failure() {
    let dir = TempDir::new();
    let marker = dir.join("deep/er/ready");
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    readygate([
        "wait",
        "--touch",
        marker.to_str().unwrap(),
        &server.url("/"),
    ])
    .outcome()
    .expect_code(0);
    assert!(marker.exists(), "--touch did not create {marker:?}");

    // Its folders are made, as --touch's are.
    let log = dir.join("dev/termination-log");
    let closed = format!("tcp://{}", closed_addr());
    let not_made = dir.join("not-made");
    readygate([
        "wait",
        "-t",
        "2s",
        "--touch",
        not_made.to_str().unwrap(),
        "--termination-log",
        log.to_str().unwrap(),
        &closed,
    ])
    .outcome()
    .expect_code(1);
    assert!(!not_made.exists(), "--touch must not mark a failure");
    let written = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        written,
        format!("readygate: not ready: {closed}: connection refused\n")
    );
}

#[test]
fn termination_log_replaces_a_longer_stale_message() {
    let dir = TempDir::new();
    let log = dir.join("termination-log");
    // An earlier run's message, longer than this one's: none of it may remain.
    let stale = format!("readygate: not ready: {}\n", "stale reason; ".repeat(300));
    std::fs::write(&log, &stale).unwrap();
    let closed = format!("tcp://{}", closed_addr());
    let argv = [
        "wait",
        "-t",
        "300ms",
        "--termination-log",
        log.to_str().unwrap(),
        &closed,
    ];
    readygate(argv).outcome().expect_code(1);
    let written = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        written,
        format!("readygate: not ready: {closed}: connection refused\n")
    );
}

#[test]
fn a_reason_names_an_address_only_when_the_target_does_not() {
    let closed = closed_addr();
    // Long enough for several attempts on a loaded machine: the reason is the last complete one.
    let outcome = readygate(["wait", "-t", "2s", &closed.to_string()]).outcome();
    outcome.expect_code(1);
    let last = outcome.stderr.lines().last().unwrap_or_default();
    assert!(
        last.ends_with(&format!("{closed}: connection refused")),
        "{}",
        outcome.stderr
    );
    // `localhost` is two addresses: which one refused is worth saying.
    let port = closed.port().to_string();
    let outcome = readygate(["probe", &format!("localhost:{port}")]).outcome();
    outcome.expect_code(1);
    assert!(
        outcome
            .stdout
            .starts_with(&format!("localhost:{port}: connection refused to ")),
        "{}",
        outcome.stdout
    );
}

#[test]
fn quiet_verbose_and_json_logging() {
    let server = HttpServer::start(|_, hit| Answer::status(if hit == 0 { 503 } else { 200 }));
    let url = server.url("/");
    let quiet = readygate(["wait", "-q", &url]).outcome();
    quiet.expect_code(0);
    assert_eq!(quiet.stderr, "");

    let verbose = readygate(["wait", "-v", &url]).outcome();
    verbose.expect_code(0).expect_stderr("attempt 1: ready");

    let json = readygate(["wait", "--log-format", "json", &url]).outcome();
    json.expect_code(0);
    let lines: Vec<&str> = json.stderr.lines().collect();
    assert!(lines.len() >= 2, "{json:#?}");
    for line in lines {
        assert!(
            line.starts_with('{') && line.ends_with('}'),
            "not JSON: {line}"
        );
        assert!(line.contains("\"level\":\"INFO\""), "{line}");
    }
}

#[test]
fn a_slow_wait_reports_progress() {
    let closed = format!("tcp://{}", closed_addr());
    let outcome = readygate(["wait", "-t", "6s", &closed]).outcome();
    outcome
        .expect_code(1)
        .expect_stderr("still waiting after")
        .expect_stderr("connection refused");
}

#[test]
fn environment_supplies_options_and_the_command_line_wins() {
    let closed = format!("tcp://{}", closed_addr());
    readygate(["wait", &closed])
        .env("READYGATE_TIMEOUT", "300ms")
        .outcome_at(ms(300))
        .expect_code(1)
        .expect_ended_at(ms(300));
    readygate(["wait", "--timeout", "200ms", &closed])
        .env("READYGATE_TIMEOUT", "1h")
        .outcome_at(ms(200))
        .expect_code(1)
        .expect_ended_at(ms(200));
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    readygate(["wait"])
        .env(
            "READYGATE_TARGETS",
            format!("{}, {}", server.url("/a"), server.addr),
        )
        .outcome()
        .expect_code(0);
    assert_eq!(server.seen()[0].path, "/a");
    readygate(["probe", &server.url("/")])
        .env("READYGATE_STATUS", "500")
        .outcome()
        .expect_code(1);
    readygate(["wait", "-t", "300ms", &closed])
        .env("READYGATE_INVERT", "true")
        .outcome()
        .expect_code(0);
    readygate(["wait", "-t", "300ms", &closed])
        .env("READYGATE_INVERT", "false")
        .outcome()
        .expect_code(1);
}

#[test]
fn disabled_skips_all_waiting() {
    let closed = format!("tcp://{}", closed_addr());
    readygate(["wait", "-t", "10s", &closed])
        .env("READYGATE_DISABLED", "true")
        .outcome()
        .expect_code(0)
        .expect_faster_than(5 * SECOND);
    readygate(["probe", &closed])
        .env("READYGATE_DISABLED", "1")
        .outcome()
        .expect_code(0);
    let outcome = readygate(["wait", &closed, "--", "echo", "went straight"])
        .env("READYGATE_DISABLED", "true")
        .outcome();
    outcome.expect_code(0).expect_stdout("went straight");
    readygate(["wait", "-t", "200ms", &closed])
        .env("READYGATE_DISABLED", "false")
        .outcome()
        .expect_code(1);
}

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
fn two_files_in_two_folders_are_each_noticed_by_their_events() {
    // One inotify instance tells of changes in every watched folder: each file's watch wakes.
    let dir = TempDir::new();
    std::fs::create_dir(dir.join("a")).unwrap();
    std::fs::create_dir(dir.join("b")).unwrap();
    let (a, b) = (dir.join("a/ready"), dir.join("b/ready"));
    let (a_name, b_name) = (a.to_str().unwrap(), b.to_str().unwrap());
    released_by_its_event(&[], &[a_name, b_name], |running| {
        std::fs::write(&a, "").unwrap();
        running.line(&format!("{a_name}: ready after"));
        std::fs::write(&b, "").unwrap();
    });
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

#[test]
fn localhost_resolves_to_ipv6_and_ipv4_listeners_alike() {
    let v4 = TcpListener::bind("127.0.0.1:0").unwrap();
    readygate([
        "probe",
        &format!("localhost:{}", v4.local_addr().unwrap().port()),
    ])
    .outcome()
    .expect_code(0);
    if let Ok(v6) = TcpListener::bind("[::1]:0") {
        let port = v6.local_addr().unwrap().port();
        readygate(["probe", &format!("tcp://localhost:{port}")])
            .outcome()
            .expect_code(0);
        readygate(["probe", &format!("[::1]:{port}")])
            .outcome()
            .expect_code(0);
    }
}

#[test]
fn an_unknown_name_is_not_ready_rather_than_a_usage_error() {
    let outcome = readygate(["probe", "tcp://no-such-host.invalid:80"]).outcome();
    outcome
        .expect_code(1)
        .expect_stdout("no such host no-such-host.invalid");
}

/// Runs `wait -v OPTIONS TARGETS` polling only every minute (no retry before 30 s), waits
/// until each target has had its first attempt, makes `change` (which may wait for what the
/// run says between its steps), and asserts the wait ended soon after: only a file-system
/// event can release it that fast.
fn released_by_its_event(options: &[&str], targets: &[&str], change: impl FnOnce(&mut Running)) {
    let mut argv = vec![
        "wait",
        "-v",
        "--interval",
        "60s",
        "--max-interval",
        "60s",
        "-t",
        "90s",
    ];
    argv.extend_from_slice(options);
    argv.extend_from_slice(targets);
    let mut running = Running::spawn(&mut readygate(argv));
    let first: Vec<String> = targets
        .iter()
        .map(|t| format!("{t}: attempt 1: "))
        .collect();
    running.lines(&first);
    running.expect_running("ready before the change");
    let change_began = running.started().elapsed();
    change(&mut running);
    let changed = running.started().elapsed();
    running
        .finish()
        .expect_code(0)
        .expect_slower_than(change_began)
        .expect_faster_than(changed + 10 * SECOND);
}

/// Makes `step`, then waits for the run's next attempt: it has been woken by the step.
fn next_attempt_after(running: &mut Running, step: impl FnOnce()) {
    running.skip_written();
    step();
    running.line(": attempt ");
}

#[test]
fn a_file_is_noticed_by_its_event_not_by_polling() {
    let dir = TempDir::new();
    let path = dir.join("not/yet/there/ready");
    released_by_its_event(&[], &[path.to_str().unwrap()], |_| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "").unwrap();
    });
}

#[test]
fn a_file_renamed_in_from_another_folder_is_noticed_by_its_event() {
    let dir = TempDir::new();
    let (folder, staging) = (dir.join("run"), dir.join("staging"));
    std::fs::create_dir(&folder).unwrap();
    std::fs::create_dir(&staging).unwrap();
    let path = folder.join("ready");
    // Written elsewhere, then moved in: the watched folder sees only the move (MOVED_TO).
    released_by_its_event(&[], &[path.to_str().unwrap()], |_| {
        std::fs::write(staging.join("ready"), "").unwrap();
        std::fs::rename(staging.join("ready"), &path).unwrap();
    });
}

#[test]
fn a_watched_folder_deleted_or_swapped_and_made_again_is_followed() {
    let dir = TempDir::new();
    let folder = dir.join("run");
    let path = folder.join("ready");
    std::fs::create_dir(&folder).unwrap();
    released_by_its_event(&[], &[path.to_str().unwrap()], |running| {
        // Each step waits until readygate has been woken by the one before.
        next_attempt_after(running, || std::fs::remove_dir(&folder).unwrap());
        next_attempt_after(running, || std::fs::create_dir(&folder).unwrap());
        std::fs::write(&path, "").unwrap();
    });
    std::fs::remove_file(&path).unwrap();
    released_by_its_event(&[], &[path.to_str().unwrap()], |running| {
        // Not a change in the watched folder: nothing to wait for.
        std::fs::create_dir(dir.join("next")).unwrap();
        next_attempt_after(running, || {
            std::fs::rename(&folder, dir.join("old")).unwrap();
            std::fs::rename(dir.join("next"), &folder).unwrap();
        });
        std::fs::write(&path, "").unwrap();
    });
}

#[test]
fn file_content_and_configmap_style_symlink_swaps() {
    let dir = TempDir::new();
    // The kubelet's layout: key -> ..data/key, ..data -> ..v1, swapped atomically to ..v2.
    std::fs::create_dir(dir.join("..v1")).unwrap();
    std::fs::write(dir.join("..v1/mode"), "starting").unwrap();
    std::os::unix::fs::symlink("..v1", dir.join("..data")).unwrap();
    std::os::unix::fs::symlink("..data/mode", dir.join("mode")).unwrap();
    let key = dir.join("mode");
    let url = format!("file://{}", key.display());
    readygate(["probe", "--contains", "serving", &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("content did not contain \"serving\"");
    released_by_its_event(&["--matches", "^serv"], &[&url], |_| {
        std::fs::create_dir(dir.join("..v2")).unwrap();
        std::fs::write(dir.join("..v2/mode"), "serving").unwrap();
        std::os::unix::fs::symlink("..v2", dir.join("..data_tmp")).unwrap();
        std::fs::rename(dir.join("..data_tmp"), dir.join("..data")).unwrap();
    });
}

#[test]
fn content_written_in_place_is_noticed_by_its_event() {
    let dir = TempDir::new();
    let path = dir.join("mode");
    std::fs::write(&path, "starting").unwrap();
    // An existence-only watch does not listen for writes; a content match must.
    released_by_its_event(
        &["--contains", "serving"],
        &[path.to_str().unwrap()],
        |_| {
            std::fs::write(&path, "serving").unwrap();
        },
    );
}

#[test]
fn invert_waits_until_a_file_is_gone() {
    let dir = TempDir::new();
    let path = dir.join("lock");
    std::fs::write(&path, "").unwrap();
    let name = path.to_str().unwrap();
    let mut running = Running::spawn(&mut readygate([
        "wait",
        "-v",
        "--invert",
        "--interval",
        "60s",
        "--max-interval",
        "60s",
        "-t",
        "90s",
        name,
    ]));
    // Each attempt that finds the file still there says so at -v, before the goal is judged;
    // the progress line comes only once it was judged not met yet.
    running.line(&format!("{name}: attempt 1: still ready"));
    running.line(&format!("{name} (still ready)"));
    let removed = running.started().elapsed();
    std::fs::remove_file(&path).unwrap();
    running
        .finish()
        .expect_code(0)
        .expect_slower_than(removed)
        .expect_faster_than(removed + 10 * SECOND);
}

#[test]
fn help_and_version_exit_0() {
    readygate(["--help"])
        .outcome()
        .expect_code(0)
        .expect_stdout("Usage");
    readygate(["wait", "--help"])
        .outcome()
        .expect_code(0)
        .expect_stdout("--attempt-timeout");
}

/// `--version` names the release, the commit (HEAD's, when built from this clone) and the
/// architecture the binary runs on.
#[test]
fn version_names_the_release_the_commit_and_the_target() {
    let outcome = readygate(["--version"]).outcome();
    outcome.expect_code(0);
    let line = outcome.stdout.trim_end();
    let rest = line
        .strip_prefix(concat!(
            "readygate ",
            env!("CARGO_PKG_VERSION"),
            " (commit "
        ))
        .unwrap_or_else(|| panic!("{line:?}"));
    let (commit, target) = rest
        .strip_suffix(')')
        .and_then(|rest| rest.split_once(", "))
        .unwrap_or_else(|| panic!("{line:?}"));
    assert!(
        commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
        "{line:?}"
    );
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|head| head.status.success());
    if let Some(head) = head {
        assert_eq!(
            commit,
            String::from_utf8_lossy(&head.stdout).trim(),
            "{line:?}"
        );
    }
    assert!(
        target.starts_with(&format!("{}-", std::env::consts::ARCH)) && target.contains("-linux-"),
        "{line:?}"
    );
    assert_eq!(outcome.stdout.lines().count(), 1, "{line:?}");
}

/// A bad command line, the text its one-line error must contain, and an extra variable.
type BadInput<'a> = (Vec<&'a str>, &'a str, Option<(&'a str, &'a str)>);

#[test]
fn usage_errors_are_one_line_naming_the_fault_with_status_2() {
    let long = "x".repeat(100_000);
    let cases: Vec<BadInput> = vec![
        (
            vec!["wait", "tcp://:80"],
            "invalid target \"tcp://:80\": missing host",
            None,
        ),
        (vec!["wait", "db:0"], "port 0", None),
        (vec!["wait", "db:65536"], "invalid port", None),
        (vec!["wait", "ftp://x:1"], "unknown scheme", None),
        (vec!["wait", ""], "invalid target \"\"", None),
        (vec!["wait", "a\u{1b}[31m:1"], "\\u{1b}", None),
        (vec!["wait", "-t", "soon", "db:1"], "--timeout", None),
        (
            vec!["wait", "--attempt-timeout", "2s", "-t", "1s", "db:1"],
            "--attempt-timeout 2s is longer than --timeout 1s",
            None,
        ),
        (
            vec!["wait", "--interval", "2s", "--max-interval", "1s", "db:1"],
            "--interval",
            None,
        ),
        (
            vec!["wait", "--attempt-timeout", "0", "db:1"],
            "--attempt-timeout must be above 0",
            None,
        ),
        (vec!["wait", "--status", "99", "db:1"], "--status", None),
        (
            vec!["wait", "--status", "300-200", "db:1"],
            "300 is above 200",
            None,
        ),
        (vec!["wait", "-H", "no colon", "db:1"], "--header", None),
        (vec!["wait", "--matches", "(", "db:1"], "--matches", None),
        (
            vec!["wait", "--success-threshold", "0", "db:1"],
            "--success-threshold",
            None,
        ),
        (vec!["wait", "--method", "POST", "db:1"], "--method", None),
        (
            vec!["wait", "--log-format", "xml", "db:1"],
            "--log-format",
            None,
        ),
        (vec!["wait", "--bogus", "db:1"], "--bogus", None),
        (
            vec!["wait", "--on-exit", "http://127.0.0.1:1/quit", "db:1"],
            "--on-exit needs a command",
            None,
        ),
        (
            vec!["wait", "--contains", "a", "--matches", "b", "db:1"],
            "--contains",
            None,
        ),
        (vec!["wait"], "no target given", None),
        (vec!["wait", &long], "invalid target", None),
        (
            vec!["wait", "db:1"],
            "READYGATE_TIMEOUT=\"abc\": invalid duration",
            Some(("READYGATE_TIMEOUT", "abc")),
        ),
        (
            vec!["wait", "db:1"],
            "READYGATE_DISABLED",
            Some(("READYGATE_DISABLED", "maybe")),
        ),
        (
            vec!["wait"],
            "invalid target",
            Some(("READYGATE_TARGETS", "http://")),
        ),
        (vec!["frobnicate"], "frobnicate", None),
        (
            vec!["install"],
            "required arguments were not provided: <DIR>",
            None,
        ),
        (
            vec!["sidecar", "legacy", "--state", "/tmp/s"],
            "<COMMAND>",
            None,
        ),
    ];
    for (args, fault, env) in cases {
        let mut command = readygate(&args);
        if let Some((key, value)) = env {
            command.env(key, value);
        }
        let outcome = command.outcome();
        let shown: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
        assert_eq!(outcome.code, Some(2), "{shown:?}: {outcome:#?}");
        assert_eq!(outcome.stdout, "", "{shown:?}");
        let line = outcome.stderr.trim_end();
        assert!(
            !line.contains('\n'),
            "{shown:?}: more than one line: {line}"
        );
        assert!(line.starts_with("readygate: "), "{shown:?}: {line}");
        assert!(
            line.contains(fault),
            "{shown:?}: {line:?} should mention {fault:?}"
        );
        assert!(
            line.len() < 400 || args.iter().any(|a| a.len() > 1000),
            "{shown:?}: too long"
        );
    }
}

#[test]
fn non_utf8_arguments_are_usage_errors() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"tcp://\xff:80");
    let outcome = readygate([std::ffi::OsStr::new("wait"), bad]).outcome();
    outcome.expect_code(2).expect_stderr("readygate: ");
    assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
}

// A forgiving command line: what a user gets wrong is named, with the fix.

const FORGOT: &str = "(did you forget \"--\" before the command?)";

#[test]
fn a_command_without_its_dashes_is_pointed_out() {
    let closed = closed_addr().to_string();
    // A path that is not there: the final line asks.
    let outcome = readygate(["wait", "-t", "2s", &closed, "/no/such/app/server"]).outcome();
    outcome.expect_code(1);
    assert!(
        outcome
            .stderr
            .contains(&format!("/no/such/app/server: no such file {FORGOT}")),
        "{}",
        outcome.stderr
    );
    assert!(!outcome
        .stderr
        .contains(&format!("{closed}: connection refused {FORGOT}")));

    // A word that is no target: the usage error asks.
    let outcome = readygate(["wait", &closed, "echo", "hi"]).outcome();
    outcome.expect_code(2);
    assert!(
        outcome
            .stderr
            .starts_with("readygate: invalid target \"echo\"")
            && outcome.stderr.trim_end().ends_with(FORGOT),
        "{}",
        outcome.stderr
    );

    // An executable file is a usage error at once (usage_names.rs), unless COMMAND is given.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = listener.local_addr().unwrap().to_string();

    // No hint when the target is clearly meant: the first one, file://, or a COMMAND given.
    for args in [
        vec!["wait", "-t", "300ms", "/no/such/file"],
        vec!["wait", "-t", "300ms", &closed, "file:///no/such/file"],
        vec![
            "wait",
            "-t",
            "300ms",
            &closed,
            "/no/such/file",
            "--",
            "true",
        ],
    ] {
        let outcome = readygate(&args).outcome();
        outcome.expect_code(1);
        assert!(
            !outcome.stderr.contains(FORGOT),
            "{args:?}: {}",
            outcome.stderr
        );
    }
    let outcome = readygate(["wait", &open, "/bin/sh", "--", "true"]).outcome();
    outcome.expect_code(0);
    assert!(!outcome.stderr.contains(FORGOT), "{}", outcome.stderr);
}

#[test]
fn probe_says_it_takes_no_command() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let outcome = readygate(["probe", &server.url("/"), "--", "echo", "hi"]).outcome();
    outcome.expect_code(2);
    assert_eq!(outcome.stdout, "");
    assert!(
        outcome
            .stderr
            .starts_with("readygate: probe takes no command (\"echo\" after --)"),
        "{}",
        outcome.stderr
    );
    assert_eq!(outcome.stderr.lines().count(), 1);
    assert_eq!(
        server.hits(),
        0,
        "a usage error must come before any attempt"
    );
}

#[test]
fn probe_rejects_the_options_of_wait_and_lists_only_its_own() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let url = server.url("/");
    for (option, value) in [
        ("--interval", "1s"),
        ("--max-interval", "1s"),
        ("--success-threshold", "3"),
        ("--stable-for", "1s"),
        ("--on-exit", "http://127.0.0.1:1/done"),
    ] {
        let outcome = readygate(["probe", option, value, &url]).outcome();
        outcome
            .expect_code(2)
            .expect_stderr(&format!("readygate: {option} is an option of wait"));
        assert!(
            !outcome.stderr.contains("similar"),
            "no look-alike: {}",
            outcome.stderr
        );
        let probe_help = readygate(["probe", "--help"]).outcome().stdout;
        assert!(!probe_help.contains(option), "probe --help lists {option}");
        let wait_help = readygate(["wait", "--help"]).outcome().stdout;
        assert!(wait_help.contains(option), "wait --help lacks {option}");
    }
    assert_eq!(server.hits(), 0);
    // The same settings in the environment (shared by a pod's wait and probe) are not read.
    readygate(["probe", &url])
        .env("READYGATE_SUCCESS_THRESHOLD", "3")
        .env("READYGATE_INTERVAL", "1s")
        .env("READYGATE_STABLE_FOR", "1h")
        .env("READYGATE_ON_EXIT", "http://127.0.0.1:1/done")
        .outcome()
        .expect_code(0);
    assert_eq!(server.hits(), 1);
}

#[test]
fn every_boolean_variable_takes_one_syntax() {
    let closed = format!("tcp://{}", closed_addr());
    // --invert on a closed port: true is ready (0), false is not (1).
    for (value, code) in [
        ("true", 0),
        ("TRUE", 0),
        ("1", 0),
        ("yes", 0),
        ("Yes", 0),
        ("on", 0),
        ("false", 1),
        ("0", 1),
        ("no", 1),
        ("NO", 1),
        ("off", 1),
        ("", 1),
    ] {
        readygate(["probe", &closed])
            .env("READYGATE_INVERT", value)
            .outcome()
            .expect_code(code);
    }
    readygate(["probe", &closed])
        .env("READYGATE_DISABLED", "YES")
        .outcome()
        .expect_code(0);
    for variable in [
        "READYGATE_INVERT",
        "READYGATE_ANY",
        "READYGATE_INSECURE",
        "READYGATE_QUIET",
        "READYGATE_VERBOSE",
        "READYGATE_DISABLED",
    ] {
        let outcome = readygate(["probe", &closed])
            .env(variable, "maybe")
            .outcome();
        outcome.expect_code(2);
        assert_eq!(
            outcome.stderr,
            format!(
                "readygate: {variable}=\"maybe\" is not a boolean: use true or false (1/0, yes/no)\n"
            )
        );
    }
}

#[test]
fn typos_get_a_suggestion() {
    for (args, suggestion) in [
        (vec!["wiat", "db:1"], "a similar subcommand exists: 'wait'"),
        (
            vec!["wait", "--tiemout", "1s", "db:1"],
            "a similar argument exists: '--timeout'",
        ),
        (vec!["probe", "--insecur", "db:1"], "'--insecure'"),
    ] {
        let outcome = readygate(&args).outcome();
        outcome.expect_code(2).expect_stderr(suggestion);
        assert_eq!(outcome.stderr.lines().count(), 1, "{}", outcome.stderr);
    }
}

#[test]
fn help_is_a_command_too() {
    let outcome = readygate(["help"]).outcome();
    outcome.expect_code(0).expect_stdout("Usage: readygate");
    let outcome = readygate(["help", "wait"]).outcome();
    outcome
        .expect_code(0)
        .expect_stdout("Usage: readygate wait")
        .expect_stdout("--timeout");
}

#[test]
fn logging_options_may_come_before_the_command() {
    let closed = format!("tcp://{}", closed_addr());
    let quiet = readygate(["-q", "wait", "-t", "300ms", &closed]).outcome();
    quiet.expect_code(1);
    assert_eq!(quiet.stderr.lines().count(), 1, "{}", quiet.stderr);
    assert!(quiet.stderr.contains("ERROR"), "{}", quiet.stderr);

    let json = readygate(["--log-format", "json", "-v", "probe", &closed]).outcome();
    json.expect_code(1);
    assert!(
        json.stderr.lines().count() >= 1 && json.stderr.lines().all(|line| line.starts_with('{')),
        "{}",
        json.stderr
    );
    readygate(["-q", "-v", "probe", &closed])
        .outcome()
        .expect_code(2)
        .expect_stderr("--verbose");
}
