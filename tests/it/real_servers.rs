//! readygate against real servers from Debian's packages, started by the test: nginx (HTTP, a
//! location that answers 503, a Unix-socket listener) and redis-server (TCP, and `--invert`
//! when it shuts down).

use std::time::{Duration, Instant};

use crate::support::nginx::Nginx;
use crate::support::redis::Redis;
use crate::support::run::RunExt;
use crate::support::{free_port, readygate, wait_until, Running};

/// A site with a healthy location, a failing one, one that echoes the Host header, listening
/// on TCP and on a Unix socket.
const SITE: &str = "
server {
    listen 127.0.0.1:{port};
    listen unix:{dir}/http.sock;
    location / { return 200 \"nginx ok\\n\"; }
    location /down { return 503 \"maintenance\\n\"; }
    location /host { return 200 \"host=$host\\n\"; }
}";

fn nginx() -> (Nginx, u16) {
    let port = free_port();
    let nginx = Nginx::start(&SITE.replace("{port}", &port.to_string()));
    (nginx, port)
}

#[test]
fn nginx_serving_200_is_ready() {
    let (_nginx, port) = nginx();
    let url = format!("http://127.0.0.1:{port}/");
    let outcome = readygate(["probe", "--contains", "nginx ok", &url]).outcome();
    outcome.expect_code(0);
    assert_eq!(outcome.stdout, "");
    readygate([
        "wait",
        "--timeout",
        "10s",
        &format!("http://localhost:{port}/"),
    ])
    .outcome()
    .expect_code(0)
    .expect_stderr("ready");
}

#[test]
fn nginx_answering_503_is_not_ready_and_says_so() {
    let (_nginx, port) = nginx();
    let url = format!("http://127.0.0.1:{port}/down");
    let outcome = readygate(["probe", &url]).outcome();
    outcome.expect_code(1);
    assert_eq!(outcome.stdout, format!("{url}: status 503\n"));
    readygate(["wait", "--timeout", "700ms", &url])
        .outcome_at(Duration::from_millis(700))
        .expect_code(1)
        .expect_ended_at(Duration::from_millis(700))
        .expect_stderr("status 503");
    readygate(["probe", "--status", "503", &url])
        .outcome()
        .expect_code(0);
}

#[test]
fn nginx_unix_socket_as_target_and_as_transport() {
    let (mut nginx, _port) = nginx();
    let socket = nginx.path("http.sock");
    let socket = socket.to_str().unwrap();
    readygate(["probe", &format!("unix://{socket}")])
        .outcome()
        .expect_code(0);
    // As curl's --unix-socket: the URL gives Host and path; its host is never resolved.
    readygate([
        "probe",
        "--unix-socket",
        socket,
        "--contains",
        "host=api.internal.invalid",
        "http://api.internal.invalid/host",
    ])
    .outcome()
    .expect_code(0);
    readygate(["probe", "--unix-socket", socket, "http://localhost/down"])
        .outcome()
        .expect_code(1)
        .expect_stdout("status 503");
    nginx.stop();
    let outcome = readygate(["probe", &format!("unix://{socket}")]).outcome();
    outcome.expect_code(1).expect_stdout(socket);
}

#[test]
fn redis_port_is_ready_while_it_runs() {
    let redis = Redis::start();
    assert_eq!(redis.ping().trim(), "PONG");
    let port = redis.addr.port();
    readygate(["probe", &format!("tcp://127.0.0.1:{port}")])
        .outcome()
        .expect_code(0);
    readygate(["wait", "--timeout", "10s", &format!("localhost:{port}")])
        .outcome()
        .expect_code(0);
}

#[test]
fn redis_shutdown_ends_an_inverted_wait() {
    let mut redis = Redis::start();
    let target = format!("tcp://127.0.0.1:{}", redis.addr.port());
    let before = redis.connections_received();
    let mut running = Running::spawn(&mut readygate([
        "wait",
        "--invert",
        "--timeout",
        "60s",
        &target,
    ]));
    // Its first attempt connected (redis counts our own query too).
    wait_until("the inverted wait to connect to redis", || {
        redis.connections_received() >= before + 2
    });
    running.expect_running("an inverted wait ended while redis was still up");
    let shutdown = Instant::now();
    redis.shutdown();
    let outcome = running.finish();
    outcome.expect_code(0).expect_stderr("not ready");
    assert!(
        shutdown.elapsed() < Duration::from_secs(5),
        "took {:?} to notice the shutdown: {outcome:#?}",
        shutdown.elapsed()
    );
}
