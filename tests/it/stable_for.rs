//! `wait --stable-for D`: ready only once a target has stayed ready for D, every attempt in
//! that span succeeding; against an in-process server and a real nginx serving a JSON file.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::support::http::{Answer, HttpServer};
use crate::support::nginx::Nginx;
use crate::support::run::RunExt;
use crate::support::{free_port, readygate, Running};

const SPAN: Duration = Duration::from_secs(1);

/// Generous: the end may come late on a loaded machine, never early.
const LATE: Duration = Duration::from_secs(5);

#[test]
fn one_failure_in_the_span_starts_it_again() {
    // Ready for three answers, one 503, then ready for good.
    let failed_at = Arc::new(Mutex::new(None));
    let failed = failed_at.clone();
    let server = HttpServer::start(move |_, n| match n {
        3 => {
            *failed.lock().unwrap() = Some(Instant::now());
            Answer::status(503)
        }
        _ => Answer::body("ok"),
    });
    let mut running = Running::spawn(&mut readygate([
        "wait",
        "-v",
        "--timeout",
        "30s",
        "--stable-for",
        "1s",
        "--interval",
        "50ms",
        "--max-interval",
        "50ms",
        &server.url("/ready"),
    ]));
    running.line("attempt 4: status 503");
    let ended = running.end();
    ended.outcome.expect_code(0).expect_stderr("ready after");
    let failed_at = failed_at.lock().unwrap().expect("the server failed once");
    assert!(
        ended.at >= failed_at + SPAN && ended.at < failed_at + SPAN + LATE,
        "ready {:?} after the failure: {:#?}",
        ended.at.duration_since(failed_at),
        ended.outcome
    );
    assert!(server.hits() >= 6, "{} requests", server.hits());
}

#[test]
fn a_deadline_within_the_span_says_how_long_it_held_and_probe_refuses_it() {
    // Not ready for 1.5 s from readygate's first request (not from the test's start: its own
    // start-up, slow under emulation or load, must not eat into the span), then ready: 3 s of
    // stability cannot fit before the 4 s deadline, and the first ready answer comes in time
    // unless that first request is over 2 s late.
    let first = OnceLock::new();
    let server = HttpServer::start(move |_, _| {
        match first.get_or_init(Instant::now).elapsed() < Duration::from_millis(1500) {
            true => Answer::status(503),
            false => Answer::body("ok"),
        }
    });
    let outcome = readygate([
        "wait",
        "--timeout",
        "4s",
        "--stable-for",
        "3s",
        &server.url("/"),
    ])
    .outcome();
    outcome
        .expect_code(1)
        .expect_stderr("stable for only ")
        .expect_stderr(" of the 3.0s needed");
    for (args, fault) in [
        (
            &["probe", "--stable-for", "1s", "h:1"][..],
            "--stable-for is an option of wait",
        ),
        (
            &["wait", "--stable-for", "5s", "--timeout", "5s", "h:1"],
            "--stable-for 5s is not shorter than --timeout 5s",
        ),
    ] {
        readygate(args)
            .outcome()
            .expect_code(2)
            .expect_stderr(fault);
    }
}

/// nginx serving `{dir}/health.json` as the file is at each request.
const SITE: &str = "
server {
    listen 127.0.0.1:{port};
    location = /health { default_type application/json; alias {dir}/health.json; }
}";

#[test]
fn nginx_flapping_between_up_and_down_is_ready_a_span_after_it_settles() {
    let port = free_port();
    let nginx = Nginx::start(&SITE.replace("{port}", &port.to_string()));
    let file = nginx.path("health.json");
    std::fs::write(&file, r#"{"status":"UP"}"#).unwrap();
    let mut running = Running::spawn(&mut readygate([
        "wait",
        "-v",
        "--timeout",
        "30s",
        "--stable-for",
        "1s",
        "--interval",
        "20ms",
        "--max-interval",
        "20ms",
        "--json-field",
        "status=UP",
        &format!("http://127.0.0.1:{port}/health"),
    ]));
    // A span began; it breaks when the file says DOWN, and begins again when it says UP.
    running.line("attempt 2: ready");
    std::fs::write(&file, r#"{"status":"DOWN"}"#).unwrap();
    running.line(r#"JSON field status is "DOWN", not "UP""#);
    std::fs::write(&file, r#"{"status":"UP"}"#).unwrap();
    let settled = Instant::now();
    let ended = running.end();
    ended.outcome.expect_code(0).expect_stderr("ready after");
    assert!(
        ended.at >= settled + SPAN && ended.at < settled + SPAN + LATE,
        "ready {:?} after it settled: {:#?}",
        ended.at.duration_since(settled),
        ended.outcome
    );
}
