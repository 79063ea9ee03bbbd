//! `-q`, `-v` and `--log-format json`, wherever on the command line they come.

use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::{closed_addr, readygate};

#[test]
fn quiet_verbose_and_json_logging() {
    let server = HttpServer::start(|_, hit| Answer::status(if hit == 0 { 503 } else { 200 }));
    let url = server.url("/");
    let quiet = readygate(["wait", "-q", &url]).outcome();
    quiet.expect_code(0);
    assert_eq!(quiet.stderr, "");

    let verbose = readygate(["wait", "-v", &url]).outcome();
    verbose.expect_code(0).expect_stderr("attempt 1: ready");

    let json = readygate(["wait", "--log-format", "json", &url]).outcome();
    json.expect_code(0);
    let lines: Vec<&str> = json.stderr.lines().collect();
    assert!(lines.len() >= 2, "{json:#?}");
    for line in lines {
        assert!(
            line.starts_with('{') && line.ends_with('}'),
            "not JSON: {line}"
        );
        assert!(line.contains("\"level\":\"INFO\""), "{line}");
    }
}

#[test]
fn logging_options_may_come_before_the_command() {
    let closed = format!("tcp://{}", closed_addr());
    let quiet = readygate(["-q", "wait", "-t", "300ms", &closed]).outcome();
    quiet.expect_code(1);
    assert_eq!(quiet.stderr.lines().count(), 1, "{}", quiet.stderr);
    assert!(quiet.stderr.contains("ERROR"), "{}", quiet.stderr);

    let json = readygate(["--log-format", "json", "-v", "probe", &closed]).outcome();
    json.expect_code(1);
    assert!(
        json.stderr.lines().count() >= 1 && json.stderr.lines().all(|line| line.starts_with('{')),
        "{}",
        json.stderr
    );
    readygate(["-q", "-v", "probe", &closed])
        .outcome()
        .expect_code(2)
        .expect_stderr("--verbose");
}
