//! `readygate serve`'s `/metrics`, read by prometheus_client's parser: each target's and
//! group's readiness follows the attempts that requests make, attempts are counted by result
//! and timed, answers counted by code, connections refused at the cap and those evicted counted;
//! labels are redacted as log lines are; and a scrape makes no attempt of its own.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::h2c::{self, H2c};
use crate::support::http::{Answer as Scripted, HttpServer};
use crate::support::scraped::Scrape;
use crate::support::served::{ask, closed_within, grpc_health, Served};

/// The password and token given to the HTTP target: never in a scrape.
const PASSWORD: &str = "Sup3r-secret-passw0rd";
const TOKEN: &str = "tok-4f9a1c7e-never-shown";

/// `/metrics` scraped and parsed; its raw text checked for the secrets first.
#[track_caller]
fn scrape(served: &Served) -> Scrape {
    let answer = served.get("/metrics");
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(
        answer.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    for secret in [PASSWORD, TOKEN] {
        assert!(
            !answer.body.contains(secret),
            "{secret} shown: {}",
            answer.body
        );
    }
    Scrape::parse(&answer.body)
}

#[test]
fn metrics_follow_the_targets_and_a_scrape_attempts_nothing() {
    let up = Arc::new(AtomicBool::new(true));
    let state = up.clone();
    let server = HttpServer::start(move |_, _| match state.load(Ordering::SeqCst) {
        true => Scripted::status(200),
        false => Scripted::status(503),
    });
    let url = server
        .url("/health")
        .replacen("http://", &format!("http://app:{PASSWORD}@"), 1);
    let shown = server
        .url("/health")
        .replacen("http://", "http://app:***@", 1);
    let db = TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp = format!("tcp://{}", db.local_addr().unwrap());
    let served = Served::start(&[
        "--fresh-for",
        "0",
        "-H",
        &format!("Authorization: Bearer {TOKEN}"),
        &url,
        "--group",
        &format!("db={tcp}"),
    ]);

    // Before any request: every family with its help and type, counters at 0, no readiness.
    let first = scrape(&served);
    let kinds: Vec<(&str, &str)> = first
        .families
        .iter()
        .map(|f| (f.name.as_str(), f.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("readygate_ready", "gauge"),
            ("readygate_group_ready", "gauge"),
            ("readygate_target_ready", "gauge"),
            ("readygate_attempts", "counter"),
            ("readygate_attempt_duration_seconds", "histogram"),
            ("readygate_answers", "counter"),
            ("readygate_connections_refused", "counter"),
            ("readygate_connections_evicted", "counter"),
        ]
    );
    assert!(first.families.iter().all(|f| !f.help.is_empty()));
    for reason in REASONS {
        let labels = [("reason", reason)];
        assert_eq!(
            first.get("readygate_connections_evicted_total", &labels),
            0.0
        );
    }
    for target in [shown.as_str(), tcp.as_str()] {
        for result in ["ready", "not_ready"] {
            let labels = [("result", result), ("target", target)];
            assert_eq!(first.get("readygate_attempts_total", &labels), 0.0);
        }
        let labels = [("target", target)];
        assert_eq!(first.value("readygate_target_ready", &labels), None);
        let count = first.get("readygate_attempt_duration_seconds_count", &labels);
        assert_eq!(count, 0.0);
    }
    assert_eq!(first.value("readygate_ready", &[]), None);
    for _ in 0..5 {
        scrape(&served);
    }
    assert_eq!(server.hits(), 0, "a scrape made an attempt");

    // Both up.
    assert_eq!(served.get("/ready").status, 200);
    let both = scrape(&served);
    assert_eq!(server.hits(), 1);
    assert_eq!(both.get("readygate_ready", &[]), 1.0);
    assert_eq!(both.get("readygate_group_ready", &[("group", "db")]), 1.0);
    assert_eq!(
        both.get("readygate_target_ready", &[("target", &shown)]),
        1.0
    );
    assert_eq!(both.get("readygate_target_ready", &[("target", &tcp)]), 1.0);
    let ready = [("result", "ready"), ("target", shown.as_str())];
    assert_eq!(both.get("readygate_attempts_total", &ready), 1.0);
    let labels = [("target", shown.as_str())];
    assert_eq!(
        both.get("readygate_attempt_duration_seconds_count", &labels),
        1.0
    );
    let sum = both.get("readygate_attempt_duration_seconds_sum", &labels);
    assert!(sum > 0.0 && sum < 10.0, "{sum}");
    let inf = [("le", "+Inf"), ("target", shown.as_str())];
    assert_eq!(
        both.get("readygate_attempt_duration_seconds_bucket", &inf),
        1.0
    );
    // Six scrapes answered before this one, and the /ready.
    let ok = [("code", "200"), ("protocol", "http")];
    assert_eq!(both.get("readygate_answers_total", &ok), 7.0);

    // The HTTP target goes down.
    up.store(false, Ordering::SeqCst);
    assert_eq!(served.get("/ready").status, 503);
    let down = scrape(&served);
    assert_eq!(down.get("readygate_ready", &[]), 0.0);
    assert_eq!(down.get("readygate_group_ready", &[("group", "db")]), 1.0);
    assert_eq!(
        down.get("readygate_target_ready", &[("target", &shown)]),
        0.0
    );
    let not_ready = [("result", "not_ready"), ("target", shown.as_str())];
    assert_eq!(down.get("readygate_attempts_total", &not_ready), 1.0);
    let unavailable = [("code", "503"), ("protocol", "http")];
    assert_eq!(down.get("readygate_answers_total", &unavailable), 1.0);

    // It comes back; the database goes away.
    up.store(true, Ordering::SeqCst);
    drop(db);
    assert_eq!(served.get("/ready").status, 503);
    let swapped = scrape(&served);
    assert_eq!(
        swapped.get("readygate_target_ready", &[("target", &shown)]),
        1.0
    );
    assert_eq!(
        swapped.get("readygate_target_ready", &[("target", &tcp)]),
        0.0
    );
    assert_eq!(
        swapped.get("readygate_group_ready", &[("group", "db")]),
        0.0
    );
    assert_eq!(swapped.get("readygate_ready", &[]), 0.0);
    assert_eq!(swapped.get("readygate_attempts_total", &ready), 2.0);

    // gRPC answers are counted by how the call ended.
    assert_eq!(grpc_health(served.addr, "db", "Check"), "NOT_SERVING");
    assert_eq!(grpc_health(served.addr, "nope", "Check"), "NOT_FOUND");
    let grpc = scrape(&served);
    for code in ["NOT_SERVING", "NOT_FOUND"] {
        let labels = [("code", code), ("protocol", "grpc")];
        assert_eq!(grpc.get("readygate_answers_total", &labels), 1.0, "{code}");
    }
    assert_eq!(
        server.hits(),
        3,
        "only the requests for /ready made attempts"
    );

    // The request limits hold for /metrics too.
    let big = format!("X-Big: {}", "a".repeat(9000));
    assert_eq!(ask(served.addr, "GET", "/metrics", &[&big]).status, 431);
    assert_eq!(served.ask("POST", "/metrics").status, 405);
    let head = served.ask("HEAD", "/metrics");
    assert_eq!((head.status, head.body.as_str()), (200, ""));
}

#[test]
fn quiet_body_labels_targets_by_position() {
    let url = format!("http://app:{PASSWORD}@{}/", crate::support::closed_addr());
    let served = Served::start(&["--quiet-body", &url]);
    assert_eq!(served.get("/ready").status, 503);
    let scraped = scrape(&served);
    assert_eq!(
        scraped.get("readygate_target_ready", &[("target", "1")]),
        0.0
    );
    let body = served.get("/metrics").body;
    assert!(!body.contains("app:"), "{body}");
}

/// How many connections serve holds at most (docs/cli.md).
const CAP: usize = 64;

#[test]
fn a_scrape_obeys_the_connection_cap_and_refusals_are_counted() {
    // A target that never answers: every /ready waits out the attempt, its connection busy.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let target = format!("http://{}/", silent.local_addr().unwrap());
    let mut served = Served::start(&["-v", "--attempt-timeout", "3s", &target]);
    let asking: Vec<TcpStream> = (0..CAP)
        .map(|_| {
            let mut stream = TcpStream::connect(served.addr).unwrap();
            stream
                .write_all(b"GET /ready HTTP/1.1\r\nHost: x\r\n\r\n")
                .unwrap();
            stream
        })
        .collect();
    let requests: Vec<&str> = (0..CAP).map(|_| "GET /ready").collect();
    served.running.lines(&requests);
    // Every connection busy, all from this address: a scrape finds no room and is closed.
    let refused = refused_at_once(served.addr);
    assert!(
        refused,
        "a scrape got in past the cap of {CAP} busy connections"
    );
    let started = Instant::now();
    for mut stream in asking {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    }
    assert!(started.elapsed() < Duration::from_secs(15));
    let scraped = scrape(&served);
    assert_eq!(scraped.get("readygate_connections_refused_total", &[]), 1.0);
    let unavailable = [("code", "503"), ("protocol", "http")];
    assert_eq!(
        scraped.get("readygate_answers_total", &unavailable),
        CAP as f64
    );
    drop(silent);
}

/// Whether a `GET /metrics` on a new connection to `addr` is closed without an answer.
fn refused_at_once(addr: SocketAddr) -> bool {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let _ = stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer.is_empty()
}

/// The reasons a connection is evicted for (docs/cli.md).
const REASONS: [&str; 4] = ["cap", "head_timeout", "lifetime", "read_budget"];

#[test]
fn evictions_are_counted_by_reason() {
    let target = TcpListener::bind("127.0.0.1:0").unwrap();
    let ready = format!("tcp://{}", target.local_addr().unwrap());
    // Connections live 6 s: the attempt timeout and a 5 s linger.
    let served = Served::start(&["--attempt-timeout", "1s", &ready]);
    let limit = Duration::from_secs(15);
    // The cap full of connections that say nothing, and one more: the oldest makes room.
    let mut silent: Vec<TcpStream> = (0..=CAP)
        .map(|_| TcpStream::connect(served.addr).unwrap())
        .collect();
    assert!(closed_within(&mut silent[0], limit), "the oldest is open");
    // The others, the newest too, are closed when their 2 s for a head are up.
    for (n, stream) in silent.iter_mut().enumerate().skip(1) {
        assert!(closed_within(stream, limit), "connection {n} is open");
    }
    // One connection asks once and then idles until its life is up; another floods frames
    // until it has sent all a connection may.
    let mut idle = H2c::connect(served.addr).unwrap();
    assert!(idle.check_serving(limit));
    let mut flood = H2c::connect(served.addr).unwrap();
    assert!(flood.check_serving(limit));
    let pings: Vec<u8> = (0..10_000)
        .flat_map(|_| h2c::frame(h2c::PING, 0, 0, &[0u8; 8]))
        .collect();
    let _ = flood.send(&pings);
    assert!(closed_within(&mut flood.stream, limit), "the flood goes on");
    assert!(
        closed_within(&mut idle.stream, limit),
        "the idle one is open"
    );
    let scraped = scrape(&served);
    let counts: Vec<f64> = REASONS
        .iter()
        .map(|reason| scraped.get("readygate_connections_evicted_total", &[("reason", reason)]))
        .collect();
    assert_eq!(counts, [1.0, CAP as f64, 1.0, 1.0], "{REASONS:?}");
    assert_eq!(scraped.get("readygate_connections_refused_total", &[]), 0.0);
}
