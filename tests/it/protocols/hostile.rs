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
const SCHEMES: [&str; 11] = [
    "postgres",
    "redis",
    "rediss",
    "mysql",
    "amqp",
    "amqps",
    "memcached",
    "nats",
    "zk",
    "kafka",
    "kafkas",
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
    let outcome = readygate(&args).outcome_at(Duration::from_millis(500));
    outcome
        .expect_code(1)
        .expect_ended_at(Duration::from_millis(500));
    for target in &targets {
        // Over TLS, the silence is inside the handshake, and the reason says so as https's does.
        let tls = ["rediss:", "amqps:", "kafkas:"];
        let waited = match tls.iter().any(|scheme| target.starts_with(scheme)) {
            true => "TLS handshake not complete",
            false => "no answer",
        };
        assert!(
            outcome
                .stdout
                .contains(&format!("{target}: {waited} within 500ms")),
            "{target}: {outcome:#?}"
        );
    }
    assert!(peer.accepted() >= SCHEMES.len());
}

/// Answers anything with `answer`, then holds the connection open, reading, as a server of
/// another protocol may.
fn answers_and_holds(answer: &'static [u8]) -> impl Fn(TcpStream) + Send + Sync + 'static {
    move |mut stream: TcpStream| {
        let mut request = [0u8; 256];
        let _ = stream.read(&mut request);
        let _ = stream.write_all(answer);
        while stream.read(&mut request).is_ok_and(|n| n > 0) {}
    }
}

#[test]
fn zk_quotes_the_first_bytes_of_another_protocol_that_holds_the_connection_open() {
    for (answer, shown) in [
        (
            &b"HTTP/1.1 400 Bad Request\r\n\r\n"[..],
            "\"HTTP/1.1 400 Bad Request\\r\\n\\r\\n\"",
        ),
        (
            b"SSH-2.0-OpenSSH_9.2p1\r\n",
            "\"SSH-2.0-OpenSSH_9.2p1\\r\\n\"",
        ),
        (
            b"-ERR unknown command 'srvr'\r\n",
            "\"-ERR unknown command \\'srvr\\'\\r\\n\"",
        ),
    ] {
        let peer = Peer::start_with(answers_and_holds(answer));
        let target = peer.url("zk", "");
        readygate(["probe", "-t", "10s", &target])
            .outcome()
            .expect_code(1)
            .expect_stdout(&format!("{target}: not a ZooKeeper answer: {shown}"))
            .expect_faster_than(Duration::from_secs(5));
    }
    // The start of a ZooKeeper's answer, then nothing: that one is waited for.
    let peer = Peer::start_with(answers_and_holds(b"Zookeeper version: 3.8"));
    let target = peer.url("zk", "");
    readygate(["probe", "-t", "2s", "--attempt-timeout", "500ms", &target])
        .outcome()
        .expect_code(1)
        .expect_stdout(&format!("{target}: no answer within 500ms"));
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
        "kafka",
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
        eprintln!(
            "bench: flood of bytes, {scheme}://: peak {} KiB",
            run.peak_kib
        );
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

/// Answers every Redis command with an error carrying a line separator and bidi controls.
fn invisible_redis(mut stream: TcpStream) {
    let mut request = [0u8; 256];
    let _ = stream.read(&mut request);
    let text = "-LOADING a\u{2028}b\u{2029}c \u{202E}gnp.exe\u{2066} d\u{200B}\r\n";
    let _ = stream.write_all(text.as_bytes());
}

#[test]
fn line_separators_and_bidi_controls_from_a_server_are_escaped_in_text_and_json() {
    let peer = Peer::start(invisible_redis);
    let target = peer.url("redis", "");
    let shown = "LOADING a\\u{2028}b\\u{2029}c \\u{202e}gnp.exe\\u{2066} d\\u{200b}";
    let probe = readygate(["probe", &target]).outcome();
    probe
        .expect_code(1)
        .expect_stdout(&format!("{target}: {shown}"));
    for format in ["text", "json"] {
        let wait = readygate(["wait", "--log-format", format, "-t", "300ms", &target]).outcome();
        wait.expect_code(1).expect_stderr("gnp.exe");
        let raw = ['\u{2028}', '\u{2029}', '\u{202E}', '\u{2066}', '\u{200B}'];
        for out in [&probe.stdout, &wait.stderr] {
            assert!(!out.contains(raw), "{format}: {out}");
        }
    }
}
