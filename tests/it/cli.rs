//! Core `wait` and `probe` sessions: TCP, HTTP and file targets, options, exit statuses.

use std::time::Duration;

use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::{closed_addr, readygate};

#[test]
fn probe_of_a_serving_http_endpoint_exits_0_quietly() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let outcome = readygate(["probe", &server.url("/ready")]).outcome();
    outcome.expect_code(0);
    assert_eq!(outcome.stdout, "");
    assert_eq!(server.hits(), 1);
}

#[test]
fn wait_on_a_closed_port_fails_at_the_deadline() {
    let addr = closed_addr();
    let outcome = readygate(["wait", "--timeout", "500ms", &format!("tcp://{addr}")]).outcome();
    outcome
        .expect_code(1)
        .expect_slower_than(Duration::from_millis(500))
        .expect_faster_than(Duration::from_secs(3))
        .expect_stderr("connection refused");
}
