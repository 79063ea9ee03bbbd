//! `kafka://` against real Apache Kafka 4 nodes (KRaft): a node is waited for while it starts,
//! its broker and controller listeners are ready once it serves, and refused once it is
//! killed; a controller without a quorum is not ready, in its own words. Each test starts one
//! JVM of its own.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Child;
use std::time::{Duration, Instant};

use super::probe;
use crate::support::certs::Certs;
use crate::support::kafka;
use crate::support::readygate;
use crate::support::run::{finish, Outcome, RunExt};

/// How long after the node says it serves `wait` may take to see it: local targets are tried
/// every 100 ms at most; the rest is room for a loaded machine.
const SEEN_WITHIN: Duration = Duration::from_secs(10);

#[test]
fn a_node_is_waited_for_while_it_starts_then_ready_and_refused_once_killed() {
    let certs = Certs::localhost();
    let formatted = kafka::format(true, Some(&certs));
    let broker = format!("kafka://{}", formatted.broker);
    let named = format!("kafka://localhost:{}", formatted.broker.port());
    let controller = format!("kafka://localhost:{}", formatted.controller.port());
    let args = ["wait", "-v", "--timeout", "120s", &named, &controller];
    let (wait, spawned) = readygate(args).spawn_captured();
    let mut node = formatted.start();
    node.wait_started();
    let outcome = exited_within(wait, spawned, SEEN_WITHIN);
    outcome
        .expect_code(0)
        .expect_stderr(&format!("{named}: attempt 1: connection refused"))
        .expect_stderr(&format!("{named}: ready after"))
        .expect_stderr(&format!("{controller}: ready after"));
    probe(&[], &[&named, &controller]).expect_code(0);
    // Over TLS, verified as https:// is.
    let tls = format!(
        "kafkas://localhost:{}",
        node.tls.expect("a TLS listener").port()
    );
    let ca = certs.ca.to_str().expect("utf-8 path");
    probe(&["--cacert", ca], &[&tls]).expect_code(0);
    probe(&[], &[&tls])
        .expect_code(1)
        .expect_stdout("unknown authority");
    // The broker advertises itself as localhost: by its address, it is not known to be the
    // broker that answered, which is said once; a live broker and a controller are enough.
    let by_address = readygate(["wait", "-t", "10s", &broker, &broker]).outcome();
    by_address.expect_code(0).expect_stderr(&format!(
        "{broker}: no live broker advertises this address (brokers: localhost:{}; a Service",
        node.broker.port()
    ));
    assert_eq!(
        by_address
            .stderr
            .matches("no live broker advertises")
            .count(),
        1
    );
    let by_name = readygate(["wait", "-t", "10s", &named]).outcome();
    assert!(!by_name.expect_code(0).stderr.contains("advertises"));

    node.daemon.kill();
    let killed = probe(&[], &[&named, &controller]);
    killed.expect_code(1);
    for target in [&named, &controller] {
        killed.expect_stdout(&format!("{target}: connection refused"));
    }
    readygate(["wait", "--timeout", "1s", &broker])
        .outcome()
        .expect_code(1)
        .expect_slower_than(Duration::from_secs(1))
        .expect_stderr(&format!("{broker}: connection refused"));
}

#[test]
fn a_controller_without_a_quorum_is_not_ready_in_its_own_words() {
    let mut node = kafka::format(false, None).start();
    let addr = node.controller;
    node.daemon
        .wait_until("answering", || answers_api_versions(addr));
    let controller = format!("kafka://{addr}");
    let outcome = probe(&[], &[&controller]);
    outcome
        .expect_code(1)
        .expect_stdout(&format!("{controller}: KRaft controller: "))
        .expect_stdout("until it has read the cluster's metadata: no quorum?)\n");
    // Its broker waits for the quorum before it even listens.
    let broker = format!("kafka://{}", node.broker);
    probe(&[], &[&broker])
        .expect_code(1)
        .expect_stdout(&format!("{broker}: connection refused"));
    readygate(["wait", "--timeout", "1s", &controller])
        .outcome()
        .expect_code(1)
        .expect_slower_than(Duration::from_secs(1))
        .expect_stderr("no quorum?");
}

/// The outcome of `child`, which must exit within `limit` from now (it is killed otherwise).
fn exited_within(mut child: Child, spawned: Instant, limit: Duration) -> Outcome {
    if crate::support::events::exit_within(&mut child, limit).is_none() {
        let _ = child.kill();
        let outcome = finish(child, spawned);
        panic!("not seen within {limit:?} of the start: {outcome:#?}");
    }
    finish(child, spawned)
}

/// Whether the listener at `addr` answers an ApiVersions v0 request (the node's own sign that
/// it serves requests, not only accepts connections).
fn answers_api_versions(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = b"\0\0\0\x0d\0\x12\0\0\0\0\0\x01\0\x03rgt";
    let mut size = [0u8; 4];
    stream.write_all(request).is_ok() && stream.read_exact(&mut size).is_ok()
}
