//! `probe` makes one attempt and `wait` retries up to its deadline: the exit statuses, the
//! lines each prints, and names resolved as a user's would be.

use std::net::TcpListener;
use std::time::Instant;

use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::{closed_addr, free_port, ms, readygate, skip_under_qemu, Running, SECOND};

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
fn a_slow_wait_reports_progress() {
    let closed = format!("tcp://{}", closed_addr());
    let outcome = readygate(["wait", "-t", "6s", &closed]).outcome();
    outcome
        .expect_code(1)
        .expect_stderr("still waiting after")
        .expect_stderr("connection refused");
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

#[test]
fn probe_of_a_silent_server_says_its_one_second_as_a_person_would() {
    // Accepted in the backlog, never answered: the attempt runs to probe's 1 s deadline, which
    // it reaches a millisecond or so after it started.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/ready", silent.local_addr().unwrap());
    let outcome = readygate(["probe", &url]).outcome();
    outcome.expect_code(1);
    // Under qemu the emulator's start-up takes more of the second before the attempt begins.
    let shown = match skip_under_qemu("the attempt starts too late for the deadline to read 1.0s") {
        true => "",
        false => "1.0s\n",
    };
    outcome.expect_stdout(&format!("{url}: no response within {shown}"));
}
