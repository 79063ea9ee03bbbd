//! `readygate serve`'s options of `probe` that decide an answer: `--any`, `--invert`,
//! `--timeout` below `--attempt-timeout`, and `--fresh-for`, counted from its attempt's start.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::support::closed_addr;
use crate::support::h2c::H2c;
use crate::support::http::{Answer as Scripted, HttpServer};
use crate::support::raw::{silent, Peer};
use crate::support::served::Served;

/// A ready target (a listener nobody needs to answer) and one that refuses connections.
fn up_and_down() -> (TcpListener, String, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let up = format!("tcp://{}", listener.local_addr().unwrap());
    (listener, up, format!("tcp://{}", closed_addr()))
}

#[test]
fn any_answers_ready_when_one_target_is() {
    let (_listener, up, down) = up_and_down();
    let served = Served::start(&["--any", &down, &up, "--group", &format!("g={down}")]);
    let answer = served.get("/ready");
    assert_eq!(answer.status, 200, "{answer:?}");
    // Every target still has its line, the one not ready with its reason.
    assert_eq!(
        answer.body,
        format!("{down}: connection refused\n{up}: ready\n")
    );
    let mut grpc = H2c::connect(served.addr).unwrap();
    assert!(
        grpc.check_serving(Duration::from_secs(10)),
        "gRPC: not SERVING"
    );
    // A group whose only target is down is not ready, with --any too.
    assert_eq!(served.get("/ready/g").status, 503);
}

#[test]
fn invert_answers_ready_while_the_target_is_not() {
    let (_listener, up, down) = up_and_down();
    let served = Served::start(&["--invert", &down, "--group", &format!("up={up}")]);
    assert_eq!(served.get("/ready/up").status, 503);
    let answer = served.get("/ready");
    assert_eq!(answer.status, 503, "{answer:?}");
    let answer = served.get(&format!("/ready/{}", "up"));
    assert!(answer.body.starts_with(&format!("{up}: ")), "{answer:?}");
    let served = Served::start(&["--invert", &down]);
    let answer = served.get("/ready");
    assert_eq!(
        (answer.status, answer.body.as_str()),
        (200, &*format!("{down}: ready\n"))
    );
}

#[test]
fn timeout_bounds_an_answer_below_the_attempt_timeout() {
    let target = Peer::start(silent);
    let url = target.url("http", "/");
    // The attempt timeout is 1 s by default; --timeout makes it 300 ms.
    let served = Served::start(&["--timeout", "300ms", &url]);
    let answer = served.get("/ready");
    assert_eq!(answer.status, 503, "{answer:?}");
    let within = answer
        .body
        .split("no response within ")
        .nth(1)
        .and_then(|rest| rest.trim().strip_suffix("ms"))
        .and_then(|ms| ms.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no bound in ms in the reason: {answer:?}"));
    assert!((250..=300).contains(&within), "{answer:?}");
    assert!(
        answer.took >= Duration::from_millis(250) && answer.took < Duration::from_secs(2),
        "answered in {:?}",
        answer.took
    );
}

#[test]
fn fresh_for_counts_from_the_attempt_start() {
    // Each answer takes 1.5 s; the first is 200, every later one 503.
    let server = HttpServer::start(|_, n| {
        std::thread::sleep(Duration::from_millis(1500));
        Scripted::status(if n == 0 { 200 } else { 503 })
    });
    let url = server.url("/");
    let args = ["--fresh-for", "2s", "--attempt-timeout", "5s", &url];
    let served = Served::start(&args);
    let first = served.get("/ready");
    assert_eq!(first.status, 200, "{first:?}");
    let answered = Instant::now();
    // 1 s after the first answer: 2.5 s or more after its attempt began, but only about 1 s
    // after it ended. Counted from the start, the result is stale and a new attempt is made.
    std::thread::sleep(Duration::from_secs(1));
    let answer = served.get("/ready");
    assert_eq!(
        (answer.status, server.hits()),
        (503, 2),
        "a result {:?} after its attempt ended answered again: {answer:?}",
        answered.elapsed() - answer.took
    );
}
