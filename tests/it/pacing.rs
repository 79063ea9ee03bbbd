//! How often readygate knocks: local targets fast, remote ones quickly for a second then
//! gently, and a server's `Retry-After` honoured, never past the deadline.

use std::net::Ipv4Addr;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::support::closed_addr;
use crate::support::dns::{Responder, Zone};
use crate::support::http::{Answer, HttpServer};
use crate::support::kube::ApiServer;
use crate::support::pod::Pod;
use crate::support::readygate;
use crate::support::run::{finish, RunExt};

/// Attempts a `-v` run made, from its log.
fn attempts(stderr: &str) -> usize {
    stderr.matches(": attempt ").count()
}

/// The retries a network peer's schedule holds on its first base before the base grows; the
/// API server's and commands' hold none.
const STEADY: usize = 15;

/// The bases of the remote schedules' retry delays, in order: 100 ms for the first `steady`
/// retries, then 30% more per miss, up to 5 s (each delay is drawn from ½–1× its base).
fn remote_bases(steady: usize) -> impl Iterator<Item = Duration> {
    let mut base = Duration::from_millis(100);
    (1..).map(move |retry| {
        let this = base;
        if retry >= steady {
            base = (base * 13 / 10).min(Duration::from_secs(5));
        }
        this
    })
}

/// The most attempts a remote schedule can make within `window` (the first at 0): every
/// delay at its shortest.
fn remote_most(window: Duration, steady: usize) -> usize {
    let mut spent = Duration::ZERO;
    1 + remote_bases(steady)
        .take_while(|base| {
            spent += *base / 2;
            spent <= window
        })
        .count()
}

#[test]
fn retry_after_in_seconds_or_as_a_date_spaces_the_attempts() {
    let seconds = HttpServer::start(|_, _| Answer::status(503).header("Retry-After", "3"));
    let date = HttpServer::start(|_, _| {
        let at = SystemTime::now() + Duration::from_secs(4);
        Answer::status(429).header("Retry-After", httpdate::fmt_http_date(at))
    });
    let runs: Vec<_> = [&seconds, &date]
        .map(|server| readygate(["wait", "-t", "7s", &server.url("/")]).spawn_captured())
        .into_iter()
        .collect();
    let outcomes: Vec<_> = runs.into_iter().map(|(c, s)| finish(c, s)).collect();
    for (server, outcome) in [&seconds, &date].iter().zip(&outcomes) {
        outcome
            .expect_code(1)
            .expect_faster_than(Duration::from_secs(10))
            // The progress line at 5 s says when the next attempt comes, and why.
            .expect_stderr("; next attempt in ")
            .expect_stderr(", as it asked)");
        // At 0, 3 and 6 s (the date: every 3-4 s); without the header, about a hundred.
        let hits = server.hits();
        assert!((2..=4).contains(&hits), "{hits} requests: {outcome:#?}");
    }
}

#[test]
fn a_retry_after_past_the_deadline_does_not_stretch_it() {
    let server = HttpServer::start(|_, _| Answer::status(503).header("Retry-After", "3600"));
    readygate(["wait", "-t", "1500ms", &server.url("/")])
        .outcome()
        .expect_code(1)
        .expect_ended_at(Duration::from_millis(1500))
        .expect_stderr("status 503");
    assert_eq!(server.hits(), 1);
}

#[test]
fn a_retry_after_that_does_not_parse_is_ignored_and_said_at_v() {
    let server = HttpServer::start(|_, _| Answer::status(503).header("Retry-After", "soon"));
    let outcome = readygate(["wait", "-v", "-t", "1s", &server.url("/")]).outcome();
    outcome
        .expect_code(1)
        .expect_stderr("ignoring Retry-After \"soon\": neither seconds nor an HTTP date");
    assert!(server.hits() >= 5, "{} requests", server.hits());
    // Not on a 500: only 503 and 429 carry it.
    let server = HttpServer::start(|_, _| Answer::status(500).header("Retry-After", "30"));
    readygate(["wait", "-t", "1s", &server.url("/")])
        .outcome()
        .expect_code(1);
    assert!(server.hits() >= 5, "{} requests", server.hits());
}

#[test]
fn v_names_the_schedule_each_target_uses() {
    let closed = closed_addr();
    let outcome = readygate(["wait", "-v", "-t", "300ms", &format!("tcp://{closed}")]).outcome();
    outcome.expect_stderr(&format!(
        "tcp://{closed}: local schedule: retries from 10ms, doubling, up to 100ms"
    ));
    let through_socket = readygate([
        "wait",
        "-v",
        "-t",
        "300ms",
        "--unix-socket",
        "/nonexistent.sock",
        "http://web.example/",
    ])
    .outcome();
    through_socket.expect_stderr("http://web.example/: local schedule");
    let set = readygate(["wait", "-v", "-t", "300ms", "--max-interval", "1s"])
        .arg(format!("tcp://{closed}"))
        .outcome();
    set.expect_stderr("--interval/--max-interval schedule: retries from 10ms, doubling, up to 1s");
    let from_env = readygate(["wait", "-v", "-t", "300ms", &format!("tcp://{closed}")])
        .env("READYGATE_INTERVAL", "50ms")
        .outcome();
    from_env.expect_stderr("--interval/--max-interval schedule: retries from 50ms");
}

#[test]
fn a_remote_name_is_polled_quickly_at_first_then_gently_and_localhost_fast() {
    let pod = Pod::new("127.0.0.1 localhost\n::1 localhost\n");
    let name = "db.default.svc.cluster.local";
    let dns = Responder::start(
        &pod.net_namespace(),
        "127.0.0.1:53".parse().unwrap(),
        Zone {
            records: vec![(name.into(), Ipv4Addr::new(127, 0, 0, 2))],
            ttl: 5,
            negative_ttl: Some(5),
            silent: false,
        },
    );
    let window = Duration::from_secs(4);
    let remote = pod
        .readygate([
            "wait",
            "-v",
            "--log-format",
            "json",
            "-t",
            "4s",
            "tcp://db:80",
        ])
        .outcome();
    remote
        .expect_code(1)
        .expect_stderr(
            "tcp://db:80: remote schedule: retries from 100ms (the first 15 times), then ×1.3 \
             per miss, up to 5s, each delay ½–1× that",
        )
        .expect_stderr("connection refused to 127.0.0.2:80");
    let lines: Vec<Value> = (remote.stderr.lines())
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let at: Vec<u64> = (lines.iter())
        .filter(|line| line["event"] == "attempt")
        .filter_map(|line| line["elapsed_ms"].as_u64())
        .collect();
    let gaps: Vec<u64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    // Quick at first: the steady retries, each ≤ 100 ms, take at most 1.5 s of the 4 (with no
    // steady phase there would be at most 13 attempts in all), and most come on time even on
    // a loaded machine.
    assert!(at.len() > STEADY, "{} attempts: {remote:#?}", at.len());
    let mut steady: Vec<u64> = gaps[..STEADY].to_vec();
    steady.sort();
    assert!(steady[STEADY / 2] <= 110, "steady gaps (ms) {steady:?}");
    // Then gently: no sooner than the schedule allows (a timer never fires early; 10 ms for
    // how long a refused connect and its log line take), and no more attempts in all.
    for (gap, base) in gaps.iter().zip(remote_bases(STEADY)) {
        let shortest = base.as_millis() as u64 / 2;
        assert!(
            *gap + 10 >= shortest,
            "{gap} ms for a base of {base:?}: {gaps:?}"
        );
    }
    let most = remote_most(window, STEADY);
    assert!(
        at.len() <= most,
        "{} attempts, at most {most}: {gaps:?}",
        at.len()
    );
    assert_eq!(
        dns.count(name, 1),
        1,
        "one lookup within the TTL: {:?}",
        dns.queries()
    );
    let local = pod
        .readygate(["wait", "-v", "-t", "3s", "tcp://localhost:81"])
        .outcome();
    local.expect_code(1).expect_stderr("local schedule");
    let made = attempts(&local.stderr);
    assert!(made >= 20, "{made} attempts: {local:#?}");
}

#[test]
fn the_api_server_and_commands_keep_the_gentle_schedule_from_the_first_retry() {
    let api = ApiServer::start("eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2Vu.c2lnbmF0dXJl");
    let watched = api
        .readygate(["wait", "-v", "-t", "300ms", "k8s://job/migrate"])
        .outcome();
    watched.expect_stderr(
        "k8s://job/migrate: api server schedule: retries from 100ms, ×1.3 per miss, up to 5s, \
         each delay ½–1× that",
    );
    // Two seconds: at most 10 attempts, every delay at its shortest (a network peer's makes 18
    // or more).
    let window = Duration::from_secs(2);
    let command = readygate(["wait", "-v", "-t", "2s", "exec:false"]).outcome();
    command
        .expect_code(1)
        .expect_stderr("exec:false: command schedule: retries from 100ms, ×1.3 per miss, up to 5s");
    let (made, most) = (attempts(&command.stderr), remote_most(window, 0));
    assert!(
        (2..=most).contains(&made),
        "{made} attempts, at most {most}: {command:#?}"
    );
}

#[test]
fn a_retry_after_of_decades_is_capped_at_five_minutes_or_the_max_interval() {
    let far = "Fri, 31 Dec 9999 23:59:59 GMT";
    for (value, extra, capped) in [
        ("999999999", &[][..], "300.0s"),
        (far, &[][..], "300.0s"),
        (
            "999999999",
            &["--interval", "1s", "--max-interval", "10m"][..],
            "600.0s",
        ),
    ] {
        let server =
            HttpServer::start(move |_, _| Answer::status(503).header("Retry-After", value));
        // No deadline: only the cap stands between the server's mistake and a wait of decades.
        let mut command = readygate(["wait", "-v", "-t", "0"]);
        command.args(extra).arg(server.url("/"));
        let mut running = crate::support::Running::spawn(&mut command);
        running.line(&format!("next attempt in {capped}, as the target asked"));
        running.signal(libc::SIGTERM);
        let out = running.finish();
        assert!(!out.stderr.contains("next attempt in 999"), "{out:#?}");
        assert_eq!(server.hits(), 1);
    }
}
