//! `kafka://` against in-process fakes on 127.0.0.1: the answers of a broker in states a test
//! cannot hold a real one in (fenced, without a controller, wanting a login), and answers no
//! broker gives (a malformed frame, another request's answer, a huge size, a drip). Each ends
//! its attempt with a reason, within the attempt timeout, in little memory.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::probe;
use crate::support::measure::measured;
use crate::support::raw::{self, Peer};
use crate::support::readygate;
use crate::support::run::RunExt;

/// What a fake answers Metadata with.
#[derive(Clone, Copy)]
enum Answer {
    /// Brokers (`None`: the fake itself, at its own address) and a controller id.
    Brokers(&'static [Option<(&'static str, i32)>], i32),
    /// Closes the connection, as a listener that wants a SASL login does.
    Close,
    /// A frame whose broker count is far past its end.
    Malformed,
    /// The answer to another request (its correlation id).
    Stray,
}

/// A broker that answers ApiVersions v0 (Metadata v0–v13), then Metadata as `answer` says.
fn broker(answer: Answer) -> impl Fn(TcpStream) + Send + Sync + 'static {
    move |mut stream| {
        let Some((_, correlation)) = request(&mut stream) else {
            return;
        };
        let versions = [
            &0i16.to_be_bytes()[..],
            &1i32.to_be_bytes(),
            &[0, 3, 0, 0, 0, 13],
        ];
        let _ = stream.write_all(&frame(correlation, &versions.concat()));
        let Some((_, correlation)) = request(&mut stream) else {
            return;
        };
        let body = match answer {
            Answer::Close => return,
            Answer::Malformed => vec![0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1],
            Answer::Stray => {
                let _ = stream.write_all(&frame(correlation + 1, &[0; 8]));
                return;
            }
            Answer::Brokers(brokers, controller) => {
                let own = stream.local_addr().expect("local addr");
                let mut body = (brokers.len() as i32).to_be_bytes().to_vec();
                for (id, broker) in brokers.iter().enumerate() {
                    let own = ("127.0.0.1", i32::from(own.port()));
                    let (host, port) = broker.unwrap_or(own);
                    body.extend_from_slice(&(id as i32 + 1).to_be_bytes());
                    body.extend_from_slice(&(host.len() as i16).to_be_bytes());
                    body.extend_from_slice(host.as_bytes());
                    body.extend_from_slice(&port.to_be_bytes());
                    body.extend_from_slice(&(-1i16).to_be_bytes());
                }
                body.extend_from_slice(&controller.to_be_bytes());
                body.extend_from_slice(&0i32.to_be_bytes());
                body
            }
        };
        let _ = stream.write_all(&frame(correlation, &body));
    }
}

/// Reads one request frame: its API key and correlation id.
fn request(stream: &mut TcpStream) -> Option<(i16, i32)> {
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).ok()?;
    let mut frame = vec![0u8; usize::try_from(i32::from_be_bytes(size)).ok()?.min(4096)];
    stream.read_exact(&mut frame).ok()?;
    let key = i16::from_be_bytes([frame[0], frame[1]]);
    let correlation = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
    Some((key, correlation))
}

/// An answer frame: its size, the correlation id, the body.
fn frame(correlation: i32, body: &[u8]) -> Vec<u8> {
    let size = (body.len() as i32 + 4).to_be_bytes();
    [&size[..], &correlation.to_be_bytes(), body].concat()
}

#[test]
fn a_broker_listed_with_a_controller_is_ready() {
    let peer = Peer::start_with(broker(Answer::Brokers(&[Some(("b0", 9092)), None], 1)));
    let target = peer.url("kafka", "");
    let outcome = readygate(["wait", "-t", "10s", &target]).outcome();
    outcome.expect_code(0);
    assert!(!outcome.stderr.contains("advertises"), "{outcome:#?}");
}

#[test]
fn a_fenced_or_starting_broker_is_not_ready() {
    for (answer, reason) in [
        (
            Answer::Brokers(&[], -1),
            "the broker lists no live broker, itself included (starting up, fenced or shutting \
             down)",
        ),
        (
            Answer::Brokers(&[None], -1),
            "the broker knows no controller (no quorum?)",
        ),
    ] {
        let peer = Peer::start_with(broker(answer));
        let target = peer.url("kafka", "");
        probe(&[], &[&target])
            .expect_code(1)
            .expect_stdout(&format!("{target}: {reason}\n"));
    }
}

#[test]
fn a_broker_not_advertising_the_target_is_ready_and_said_once() {
    let brokers = Answer::Brokers(
        &[Some(("kafka-0.kafka", 9092)), Some(("kafka-1.kafka", 9092))],
        0,
    );
    let peer = Peer::start_with(broker(brokers));
    let target = peer.url("kafka", "");
    let outcome = readygate(["wait", "--success-threshold", "2", "-t", "10s", &target]).outcome();
    outcome.expect_code(0).expect_stderr(&format!(
        "{target}: no live broker advertises this address (brokers: kafka-0.kafka:9092, \
         kafka-1.kafka:9092; a Service in front?)"
    ));
    assert_eq!(
        outcome.stderr.matches("no live broker advertises").count(),
        1,
        "{outcome:#?}"
    );
    assert_eq!(peer.accepted(), 2);
}

#[test]
fn a_listener_that_wants_a_login_is_named() {
    let peer = Peer::start_with(broker(Answer::Close));
    let target = peer.url("kafka", "");
    probe(&[], &[&target])
        .expect_code(1)
        .expect_stdout(&format!(
            "{target}: the listener closed the connection at Metadata (it wants a SASL login, \
         which readygate does not make?)\n"
        ));
}

#[test]
fn malformed_and_stray_answers_are_not_kafka_answers() {
    for answer in [Answer::Malformed, Answer::Stray] {
        let peer = Peer::start_with(broker(answer));
        let target = peer.url("kafka", "");
        probe(&[], &[&target])
            .expect_code(1)
            .expect_stdout(&format!("{target}: not a Kafka answer: "));
    }
}

/// Answers any request with a size of 2 GiB - 1, then sends as much as is read.
fn huge_size(mut stream: TcpStream) {
    let _ = request(&mut stream);
    let _ = stream.write_all(&i32::MAX.to_be_bytes());
    let chunk = [0u8; 64 * 1024];
    while stream.write_all(&chunk).is_ok() {}
}

/// Answers with a size of 64 bytes, then one byte every 100 ms, forever.
fn drip(mut stream: TcpStream) {
    let _ = request(&mut stream);
    if stream.write_all(&64i32.to_be_bytes()).is_ok() {
        raw::drip(
            &mut stream,
            std::iter::repeat(0),
            Duration::from_millis(100),
        );
    }
}

#[test]
fn a_huge_size_is_refused_before_it_is_read() {
    let peer = Peer::start(huge_size);
    let target = peer.url("kafka", "");
    let run = measured(&mut readygate([
        "probe",
        "-t",
        "20s",
        "--attempt-timeout",
        "10s",
        &target,
    ]));
    run.outcome
        .expect_code(1)
        .expect_faster_than(Duration::from_secs(5))
        .expect_stdout(&format!("{target}: not a Kafka answer: \"\\u{{7f}}"));
    run.expect_memory_under(20);
}

#[test]
fn a_drip_ends_at_the_attempt_timeout() {
    let peer = Peer::start(drip);
    let target = peer.url("kafka", "");
    let args = ["probe", "-t", "5s", "--attempt-timeout", "500ms", &target];
    let outcome = readygate(args).outcome_at(Duration::from_millis(500));
    outcome
        .expect_code(1)
        .expect_ended_at(Duration::from_millis(500))
        .expect_stdout(&format!("{target}: no answer within 500ms"));
}
