//! What an answer must hold beyond its status: `--json-field`, `--header-matches`, and
//! `--matches` read line by line, against in-process servers, a real nginx serving a JSON file,
//! and files written as a shell writes them.

use crate::support::http::{Answer, HttpServer};
use crate::support::measure::measured;
use crate::support::nginx::Nginx;
use crate::support::run::RunExt;
use crate::support::{free_port, readygate, TempDir};

/// Spring Boot's actuator, as it answers when its database is down.
const HEALTH_DOWN: &str = r#"{"status":"DOWN","components":{"db":{"status":"DOWN"},
    "ping":{"status":"UP"}},"items":[{"ready":false},{"ready":true,"replicas":3}]}"#;

#[test]
fn json_fields_of_an_in_process_health_endpoint() {
    let server = HttpServer::start(|_, _| {
        Answer::body(HEALTH_DOWN).header("Content-Type", "application/json")
    });
    let url = server.url("/actuator/health");
    let probe = |fields: &[&str]| {
        let mut args = vec!["probe"];
        for field in fields {
            args.extend(["--json-field", field]);
        }
        args.push(&url);
        readygate(&args).outcome()
    };
    probe(&[
        "components.ping.status=UP",
        "items.1.ready",
        "items.1.replicas=3",
    ])
    .expect_code(0);
    for (fields, reason) in [
        (
            &["status=UP"][..],
            r#"JSON field status is "DOWN", not "UP""#,
        ),
        (&["items.0.ready"], "JSON field items.0.ready is false"),
        (
            &["components.ping.status=UP", "components.cache.status=UP"],
            r#"no JSON field components.cache.status (components has no key "cache")"#,
        ),
        (
            &["items.2.ready"],
            r#"no JSON field items.2.ready (items is an array of 2, with no element "2")"#,
        ),
    ] {
        let outcome = probe(fields);
        outcome.expect_code(1);
        assert_eq!(outcome.stdout, format!("{url}: {reason}\n"), "{fields:?}");
    }
    let before = server.hits();
    probe(&["status"]).expect_code(0);
    assert_eq!(server.hits(), before + 1);
}

#[test]
fn a_wait_on_a_json_field_ends_when_the_value_comes() {
    // DOWN for the first three answers, UP from then on.
    let server = HttpServer::start(|_, n| match n {
        0..=2 => Answer::body(r#"{"status":"DOWN"}"#),
        _ => Answer::body(r#"{"status":"UP"}"#),
    });
    readygate([
        "wait",
        "-v",
        "--timeout",
        "20s",
        "--json-field",
        "status=UP",
    ])
    .arg(server.url("/health"))
    .outcome()
    .expect_code(0)
    .expect_stderr(r#"JSON field status is "DOWN", not "UP""#);
    assert!(server.hits() >= 4, "{}", server.hits());
}

#[test]
fn a_body_that_is_not_json_is_a_clear_reason_and_a_huge_one_costs_no_tree() {
    let server = HttpServer::start(|seen, _| match seen.path.as_str() {
        "/html" => Answer::body("<html>maintenance</html>"),
        // A megabyte of tiny values: as a tree of values it would take 16 MiB and more.
        _ => Answer::body(format!("[{}0]", "0,".repeat(600_000))),
    });
    let url = server.url("/html");
    let outcome = readygate(["probe", "--json-field", "status=UP", &url]).outcome();
    outcome.expect_code(1);
    assert_eq!(
        outcome.stdout,
        format!("{url}: body is not JSON (expected value at line 1 column 1)\n")
    );
    let url = server.url("/huge");
    let run = measured(&mut readygate([
        "probe",
        "--timeout",
        "10s",
        "--attempt-timeout",
        "10s",
        "--json-field",
        "status=UP",
        &url,
    ]));
    run.outcome
        .expect_code(1)
        .expect_stdout("body is not JSON (EOF while parsing a list")
        .expect_stdout("only its first 1 MiB is read");
    // The hostile peers' bound (tests/it/hostile.rs); a tree of values peaks near 30 MiB.
    run.expect_memory_under(20);
}

#[test]
fn header_matches_in_process() {
    let server = HttpServer::start(|_, _| {
        Answer::body("{}")
            .header("Content-Type", "application/json; charset=utf-8")
            .header("Set-Cookie", "session=s3cret")
            .header("Vary", "Accept")
            .header("Vary", "Origin")
    });
    let url = server.url("/");
    let probe = |expected: &[&str]| {
        let mut args = vec!["probe"];
        for header in expected {
            args.extend(["--header-matches", header]);
        }
        args.push(&url);
        readygate(&args).outcome()
    };
    probe(&["content-type: ^application/json", "Vary: ^Origin$"]).expect_code(0);
    for (expected, reason) in [
        (
            "Content-Type: ^text/html",
            r#"header content-type "application/json; charset=utf-8" did not match "^text/html""#,
        ),
        ("X-Ready: yes", "no header x-ready"),
        (
            "Set-Cookie: ^ready=",
            r#"header set-cookie (value hidden) did not match "^ready=""#,
        ),
    ] {
        let outcome = probe(&[expected]);
        outcome.expect_code(1);
        assert_eq!(outcome.stdout, format!("{url}: {reason}\n"), "{expected}");
        assert!(!outcome.stdout.contains("s3cret"));
    }
    // HEAD has headers too.
    readygate([
        "probe",
        "--method",
        "HEAD",
        "--header-matches",
        "Vary: Origin",
        &url,
    ])
    .outcome()
    .expect_code(0);
}

#[test]
fn a_wait_on_a_header_ends_when_the_header_comes_and_any_of_its_values_will_do() {
    // No header for the first two answers, then one that does not match, then two values of
    // which the second matches.
    let server = HttpServer::start(|_, n| match n {
        0..=1 => Answer::body("{}"),
        2 => Answer::body("{}").header("X-Ready", "no"),
        _ => Answer::body("{}")
            .header("X-Ready", "no")
            .header("X-Ready", "yes"),
    });
    let out = readygate([
        "wait",
        "-v",
        "-t",
        "20s",
        "--header-matches",
        "x-ready: ^yes$",
    ])
    .arg(server.url("/"))
    .outcome();
    out.expect_code(0)
        .expect_stderr("no header x-ready")
        .expect_stderr(r#"header x-ready "no" did not match "^yes$""#);
    assert_eq!(server.hits(), 4, "ready at the first answer that has it");
}

#[test]
fn a_json_value_that_is_no_json_text_names_its_field() {
    // A lone UTF-16 surrogate: valid to skip over, not a string once read.
    let server = HttpServer::start(|_, _| Answer::body(r#"{"status":"\ud800"}"#));
    let url = server.url("/health");
    let out = readygate(["probe", "--json-field", "status=UP", &url]).outcome();
    out.expect_code(1);
    assert!(
        out.stdout
            .starts_with(&format!("{url}: JSON field status is not JSON: ")),
        "{}",
        out.stdout
    );
}

/// nginx serving `{dir}/health.json` as the file is at each request.
const SITE: &str = "
server {
    listen 127.0.0.1:{port};
    location = /health {
        default_type application/json;
        add_header X-Served-By nginx;
        alias {dir}/health.json;
    }
}";

#[test]
fn json_field_and_header_matches_against_nginx_serving_a_json_file() {
    let port = free_port();
    let nginx = Nginx::start(&SITE.replace("{port}", &port.to_string()));
    let file = nginx.path("health.json");
    let url = format!("http://127.0.0.1:{port}/health");
    std::fs::write(&file, HEALTH_DOWN).unwrap();
    let probe = |extra: &[&str]| {
        let mut args = vec!["probe"];
        args.extend_from_slice(extra);
        args.push(&url);
        readygate(&args).outcome()
    };
    let header = ["--header-matches", "Content-Type: ^application/json$"];
    probe(&header).expect_code(0);
    probe(&["--header-matches", "X-Served-By: ^nginx$"]).expect_code(0);
    probe(&["--header-matches", "Content-Type: text/plain"])
        .expect_code(1)
        .expect_stdout(r#"header content-type "application/json" did not match "text/plain""#);
    probe(&["--json-field", "status=UP"])
        .expect_code(1)
        .expect_stdout(r#"JSON field status is "DOWN", not "UP""#);
    probe(&[
        "--json-field",
        "components.ping.status=UP",
        "--json-field",
        "items.1.replicas=3",
    ])
    .expect_code(0);
    std::fs::write(&file, r#"{"status":"UP"}"#).unwrap();
    probe(&["--json-field", "status=UP", header[0], header[1]]).expect_code(0);
    std::fs::write(&file, "<html>502 Bad Gateway</html>").unwrap();
    probe(&["--json-field", "status"])
        .expect_code(1)
        .expect_stdout("body is not JSON");
}

#[test]
fn matches_reads_line_by_line_in_files_and_bodies() {
    let dir = TempDir::new();
    let file = dir.join("state");
    // What `echo ready > state` writes.
    std::fs::write(&file, "ready\n").unwrap();
    let path = file.to_str().unwrap();
    readygate(["probe", "--matches", "^ready$", path])
        .outcome()
        .expect_code(0);
    std::fs::write(&file, "starting\nready now\n").unwrap();
    readygate(["probe", "--matches", "^ready$", path])
        .outcome()
        .expect_code(1)
        .expect_stdout(
            r#"content did not match "^ready$" (multi-line: ^ and $ match at each line)"#,
        );
    let server = HttpServer::start(|_, _| Answer::body("starting\r\nstatus: ok\r\n"));
    readygate(["probe", "--matches", "^status: ok$", &server.url("/")])
        .outcome()
        .expect_code(0);
}

#[test]
fn json_field_faults_are_usage_errors() {
    for (args, fault) in [
        (&["--json-field", "a..b"][..], "empty key in \"a..b\""),
        (&["--json-field", "=UP"], "PATH or PATH=VALUE"),
        (
            &["--json-field", "status", "--method", "HEAD"],
            "not with --method HEAD",
        ),
        (&["--header-matches", "Content-Type"], "Name: REGEX"),
        (&["--header-matches", "X: ("], "invalid regex"),
    ] {
        let outcome = readygate(["probe"].iter().chain(args).chain(&["http://h/"])).outcome();
        outcome.expect_code(2).expect_stderr(fault);
        assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
    }
}
