//! How attempts and targets add up to readiness: `--success-threshold`, `--any` and `--all`,
//! and `--invert` (ready once a port closes).

use std::net::TcpListener;

use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::{closed_addr, readygate, wait_until, Running, SECOND};

#[test]
fn success_threshold_needs_consecutive_successes() {
    // 200, 503, then 200 for good: a threshold of 3 must not count across the 503.
    let server = HttpServer::start(|_, hit| Answer::status(if hit == 1 { 503 } else { 200 }));
    readygate([
        "wait",
        "-t",
        "10s",
        "--success-threshold",
        "3",
        &server.url("/"),
    ])
    .outcome()
    .expect_code(0);
    assert_eq!(server.hits(), 5);
}

#[test]
fn any_is_satisfied_by_one_target_all_needs_every_one() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let closed = format!("tcp://{}", closed_addr());
    let url = server.url("/");
    readygate(["wait", "-t", "10s", "--any", &closed, &url])
        .outcome()
        .expect_code(0)
        .expect_faster_than(5 * SECOND);
    readygate(["wait", "-t", "300ms", &closed, &url])
        .outcome()
        .expect_code(1)
        .expect_stderr(&closed);
    readygate(["probe", "--any", &closed, &url])
        .outcome()
        .expect_code(0);
}

#[test]
fn invert_waits_until_a_port_closes() {
    let closed = format!("tcp://{}", closed_addr());
    readygate(["wait", "--invert", &closed])
        .outcome()
        .expect_code(0);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = format!("tcp://{}", listener.local_addr().unwrap());
    readygate(["wait", "--invert", "-t", "300ms", &open])
        .outcome()
        .expect_code(1)
        .expect_stderr("still ready");
    readygate(["probe", "--invert", &open])
        .outcome()
        .expect_code(1)
        .expect_stdout("still ready");
    let running = Running::spawn(&mut readygate(["wait", "--invert", "-t", "30s", &open]));
    // Its first attempt is a connection waiting in the backlog: it found the port open.
    listener.set_nonblocking(true).unwrap();
    wait_until("the inverted wait to connect", || listener.accept().is_ok());
    drop(listener);
    let closed_after = running.started().elapsed();
    running
        .finish()
        .expect_code(0)
        .expect_slower_than(closed_after)
        .expect_faster_than(closed_after + 4 * SECOND);
}
