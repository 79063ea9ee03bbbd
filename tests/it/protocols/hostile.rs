//! Peers that speak none of the protocols: every kind ends its attempt within
//! `--attempt-timeout` and reads no more than a few KiB, however much is sent.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::support::measure::measured;
use crate::support::raw::{self, Peer};
use crate::support::readygate;
use crate::support::run::RunExt;

/// Every protocol kind that takes a host and port.
const SCHEMES: [&str; 9] = [
    "postgres",
    "redis",
    "rediss",
    "mysql",
    "amqp",
    "amqps",
    "memcached",
    "nats",
    "zk",
];

/// Sends bytes without a line end or a frame that ends, as fast as they are read.
fn flood(mut stream: TcpStream) {
    stream.set_nonblocking(true).ok();
    let mut sink = [0u8; 4096];
    let _ = stream.read(&mut sink);
    stream.set_nonblocking(false).ok();
    let chunk = [b'R'; 64 * 1024];
    while stream.write_all(&chunk).is_ok() {}
}

#[test]
fn a_silent_listener_is_not_ready_within_the_attempt_timeout() {
    let peer = Peer::start(raw::silent);
    let targets: Vec<String> = SCHEMES.iter().map(|scheme| peer.url(scheme, "")).collect();
    let mut args = vec!["probe", "--timeout", "5s", "--attempt-timeout", "500ms"];
    args.extend(targets.iter().map(String::as_str));
    let outcome = readygate(&args).outcome();
    outcome
        .expect_code(1)
        .expect_ended_at(Duration::from_millis(500));
    for target in &targets {
        assert!(
            outcome
                .stdout
                .contains(&format!("{target}: no answer within 500ms")),
            "{target}: {outcome:#?}"
        );
    }
    assert!(peer.accepted() >= SCHEMES.len());
}

#[test]
fn a_flood_is_cut_off_at_a_few_kib() {
    let peer = Peer::start(flood);
    for scheme in [
        "postgres",
        "redis",
        "mysql",
        "amqp",
        "memcached",
        "nats",
        "zk",
    ] {
        let target = peer.url(scheme, "");
        let run = measured(&mut readygate([
            "probe",
            "--timeout",
            "20s",
            "--attempt-timeout",
            "10s",
            &target,
        ]));
        // Well inside the attempt timeout: the capped read ends the attempt, not the clock.
        run.outcome
            .expect_code(1)
            .expect_faster_than(Duration::from_secs(5))
            .expect_stdout(" answer");
        run.expect_memory_under(20);
    }
}

/// Answers every Redis command with an error carrying terminal escapes.
fn escaping_redis(mut stream: TcpStream) {
    let mut request = [0u8; 256];
    let _ = stream.read(&mut request);
    let _ = stream.write_all(b"-LOADING \x1b]0;owned\x07\x1b[2J still\r\n");
}

#[test]
fn server_text_in_a_reason_has_its_control_characters_escaped() {
    let peer = Peer::start(escaping_redis);
    let target = peer.url("redis", "");
    let outcome = readygate(["probe", &target]).outcome();
    outcome.expect_code(1);
    assert_eq!(
        outcome.stdout,
        format!("{target}: LOADING \\u{{1b}}]0;owned\\u{{7}}\\u{{1b}}[2J still\n")
    );
}
