//! What an `http://` target sends and accepts: statuses, body matches, headers and method, URL
//! credentials as Basic auth (never printed), redirects.

use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::{readygate, SECOND};

#[test]
fn wait_retries_http_until_the_status_is_accepted() {
    let server = HttpServer::start(|_, hit| Answer::status(if hit < 3 { 503 } else { 204 }));
    let outcome = readygate(["wait", "-t", "10s", &server.url("/healthz")]).outcome();
    outcome.expect_code(0).expect_faster_than(5 * SECOND);
    assert_eq!(server.hits(), 4);
}

#[test]
fn status_option_chooses_the_accepted_statuses() {
    let server = HttpServer::start(|_, _| Answer::status(503));
    let url = server.url("/");
    readygate(["probe", "--status", "500-599", &url])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--status", "200,204", &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("status 503");
    let redirect = HttpServer::start(|_, _| Answer::status(304));
    readygate(["probe", &redirect.url("/")])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--status", "200-299", &redirect.url("/")])
        .outcome()
        .expect_code(1);
}

#[test]
fn contains_and_matches_judge_the_body() {
    let server = HttpServer::start(|_, _| Answer::body(r#"{"status":"UP","checks":[]}"#));
    let url = server.url("/actuator/health");
    readygate(["probe", "--contains", "\"UP\"", &url])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--contains", "DOWN", &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("body did not contain \"DOWN\"");
    readygate(["probe", "--matches", r#""status":\s*"UP""#, &url])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--matches", "^DOWN", &url])
        .outcome()
        .expect_code(1)
        .expect_stdout("body did not match \"^DOWN\"");
}

#[test]
fn requests_carry_user_agent_headers_and_method() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let url = server.url("/x?y=1");
    readygate([
        "probe",
        "-H",
        "X-Probe: yes",
        "--header",
        "Host: app.example",
        "--method",
        "HEAD",
        &url,
    ])
    .outcome()
    .expect_code(0);
    let seen = &server.seen()[0];
    assert_eq!(seen.method, "HEAD");
    assert_eq!(seen.path, "/x?y=1");
    assert_eq!(seen.header("x-probe"), Some("yes"));
    assert_eq!(seen.header("host"), Some("app.example"));
    assert_eq!(
        seen.header("user-agent"),
        Some(concat!("readygate/", env!("CARGO_PKG_VERSION")))
    );
}

#[test]
fn url_credentials_are_sent_as_basic_auth_and_never_printed() {
    let server = HttpServer::start(|_, _| Answer::status(401));
    let url = format!("http://admin:hunter2@{}/private", server.addr);
    let outcome = readygate([
        "wait",
        "-v",
        "-t",
        "300ms",
        "-H",
        "Cookie: session=s3cr3t",
        &url,
    ])
    .outcome();
    outcome.expect_code(1).expect_stderr("admin:***@");
    assert_eq!(
        server.seen()[0].header("authorization"),
        Some("Basic YWRtaW46aHVudGVyMg==")
    );
    for secret in ["hunter2", "s3cr3t", "YWRtaW46aHVudGVyMg"] {
        assert!(
            !outcome.stderr.contains(secret),
            "{secret} leaked: {}",
            outcome.stderr
        );
        assert!(
            !outcome.stdout.contains(secret),
            "{secret} leaked: {}",
            outcome.stdout
        );
    }
}

#[test]
fn same_host_redirects_are_followed_and_others_are_answers() {
    let server = HttpServer::start(|seen, _| match seen.path.as_str() {
        "/old" => Answer::status(302).header("location", "/new"),
        "/relative/a" => Answer::status(301).header("location", "b"),
        "/elsewhere" => Answer::status(302).header("location", "http://192.0.2.1:9/"),
        "/loop" => Answer::status(307).header("location", "/loop"),
        "/new" | "/relative/b" => Answer::body("arrived"),
        _ => Answer::status(404),
    });
    readygate(["probe", "--contains", "arrived", &server.url("/old")])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--contains", "arrived", &server.url("/relative/a")])
        .outcome()
        .expect_code(0);
    // A redirect to another host is an answer: 302 is accepted by default, not with --status 200.
    readygate(["probe", &server.url("/elsewhere")])
        .outcome()
        .expect_code(0);
    readygate(["probe", "--status", "200", &server.url("/elsewhere")])
        .outcome()
        .expect_code(1)
        .expect_stdout("status 302");
    readygate(["probe", &server.url("/loop")])
        .outcome()
        .expect_code(1)
        .expect_stdout("stopped after 10 redirects");
    // As Go's client (the kubelet's): ten requests, the 10th redirect fails.
    let loops = server.seen().iter().filter(|s| s.path == "/loop").count();
    assert_eq!(loops, 10);
}
