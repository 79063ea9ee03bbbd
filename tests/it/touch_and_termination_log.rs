//! What a run leaves for the kubelet: `--touch` marks readiness, `--termination-log` records
//! why it failed.

use std::net::TcpListener;

use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::{closed_addr, readygate, TempDir, SECOND};

#[test]
fn touch_naming_a_folder_is_a_usage_error_at_start() {
    let dir = TempDir::new();
    let folder = dir.0.to_str().unwrap();
    let fault = format!("readygate: --touch \"{folder}\" is a folder: name the file to create");
    // Never ready: the folder is named at start, not once the 30 s deadline has passed.
    let closed = crate::support::closed_addr().to_string();
    readygate(["wait", "--timeout", "30s", "--touch", folder, &closed])
        .outcome()
        .expect_code(2)
        .expect_stderr(&fault)
        .expect_faster_than(10 * SECOND);
    // Ready at once: the same usage error, and COMMAND never runs.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let ready = listener.local_addr().unwrap().to_string();
    let ran = dir.join("ran");
    let ran = ran.to_str().unwrap();
    readygate(["wait", "--touch", folder, &ready, "--", "touch", ran])
        .outcome()
        .expect_code(2)
        .expect_stderr(&fault);
    assert!(!std::path::Path::new(ran).exists(), "COMMAND ran");
    // A trailing slash names a folder without a look.
    readygate(["probe", "--touch", &format!("{folder}/new/"), &ready])
        .outcome()
        .expect_code(2)
        .expect_stderr("names a folder");
}

#[test]
fn touch_marks_readiness_and_termination_log_records_failure() {
    let dir = TempDir::new();
    let marker = dir.join("deep/er/ready");
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    readygate([
        "wait",
        "--touch",
        marker.to_str().unwrap(),
        &server.url("/"),
    ])
    .outcome()
    .expect_code(0);
    assert!(marker.exists(), "--touch did not create {marker:?}");

    // Its folders are made, as --touch's are.
    let log = dir.join("dev/termination-log");
    let closed = format!("tcp://{}", closed_addr());
    let not_made = dir.join("not-made");
    readygate([
        "wait",
        "-t",
        "2s",
        "--touch",
        not_made.to_str().unwrap(),
        "--termination-log",
        log.to_str().unwrap(),
        &closed,
    ])
    .outcome()
    .expect_code(1);
    assert!(!not_made.exists(), "--touch must not mark a failure");
    let written = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        written,
        format!("readygate: not ready: {closed}: connection refused\n")
    );
}

#[test]
fn termination_log_replaces_a_longer_stale_message() {
    let dir = TempDir::new();
    let log = dir.join("termination-log");
    // An earlier run's message, longer than this one's: none of it may remain.
    let stale = format!("readygate: not ready: {}\n", "stale reason; ".repeat(300));
    std::fs::write(&log, &stale).unwrap();
    let closed = format!("tcp://{}", closed_addr());
    let argv = [
        "wait",
        "-t",
        "300ms",
        "--termination-log",
        log.to_str().unwrap(),
        &closed,
    ];
    readygate(argv).outcome().expect_code(1);
    let written = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        written,
        format!("readygate: not ready: {closed}: connection refused\n")
    );
}
