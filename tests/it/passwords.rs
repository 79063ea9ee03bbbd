//! A password given apart from the URL, from a file or a variable (a mounted Secret's key, an
//! env entry from a secretKeyRef), with every character a URL reserves, and never shown.

use crate::support::http::{Answer, HttpServer};
use crate::support::redis::Redis;
use crate::support::run::RunExt;
use crate::support::{readygate, TempDir};

/// A password a URL could not hold without percent-encoding.
const RESERVED: &str = "p/a#s?s@w:o%rd";

#[test]
fn a_redis_password_from_a_file_or_a_variable_needs_no_encoding_and_is_never_shown() {
    let redis = Redis::start_in(TempDir::new(), &["--requirepass", RESERVED]);
    let url = format!("redis://{}", redis.addr);
    let host = redis.addr.to_string();
    let dir = TempDir::new();
    let file = dir.join("password");
    // As `echo` writes it: the final newline is no part of it.
    std::fs::write(&file, format!("{RESERVED}\n")).unwrap();
    let from_file = format!("{host}={}", file.display());
    let outcome = readygate(["probe", "-v", "--password-file", &from_file, &url]).outcome();
    outcome.expect_code(0);
    let outcome = readygate([
        "wait",
        "-v",
        "-t",
        "5s",
        "--password-env",
        "127.0.0.1=REDIS_PW",
        &url,
    ])
    .env("REDIS_PW", RESERVED)
    .outcome();
    outcome.expect_code(0);
    assert!(!outcome.stderr.contains("p/a#s"), "{}", outcome.stderr);
    // A wrong one is the server's refusal, the password hidden still.
    let outcome = readygate([
        "probe",
        "-v",
        "--password-env",
        &format!("{host}=REDIS_PW"),
        &url,
    ])
    .env("REDIS_PW", "wrong/one#")
    .outcome();
    outcome.expect_code(1);
    for shown in [outcome.stdout.as_str(), outcome.stderr.as_str()] {
        assert!(!shown.contains("wrong/one#"), "{shown}");
    }
}

#[test]
fn an_http_password_from_a_variable_is_sent_as_basic_authentication() {
    let server = HttpServer::start(|request, _| {
        // "ops:p/a#s?s@w:o%rd", base64.
        let expected = "Basic b3BzOnAvYSNzP3NAdzpvJXJk";
        match request.header("authorization") == Some(expected) {
            true => Answer::status(200),
            false => Answer::status(401),
        }
    });
    let url = server.url("/ready").replace("http://", "http://ops@");
    let host = server.addr.to_string();
    readygate(["probe", "--password-env", &format!("{host}=API_PW"), &url])
        .env("API_PW", RESERVED)
        .outcome()
        .expect_code(0);
    readygate(["probe", &url]).outcome().expect_code(1);
}

#[test]
fn password_options_that_name_no_target_or_one_that_uses_none_are_refused() {
    for (args, env, said) in [
        (
            vec!["probe", "--password-env", "cache=PW", "redis://db:6379"],
            Some("x"),
            "no target has host \"cache\"",
        ),
        (
            vec!["probe", "--password-env", "db=PW", "postgres://db"],
            Some("x"),
            "postgres://db uses no password",
        ),
        (
            vec!["probe", "--password-env", "db=PW", "redis://db"],
            None,
            "PW is not set",
        ),
        (
            vec!["probe", "--password-env", "db=PW", "redis://:x@db"],
            Some("y"),
            "has a password in its URL already",
        ),
        (
            vec!["probe", "--password-file", "db=/no/such", "redis://db"],
            None,
            "--password-file \"/no/such\": no such file",
        ),
        (
            vec!["probe", "--password-file", "db", "redis://db"],
            None,
            "expected HOST[:PORT]=VALUE",
        ),
    ] {
        let mut command = readygate(&args);
        if let Some(value) = env {
            command.env("PW", value);
        }
        let outcome = command.outcome();
        outcome.expect_code(2).expect_stderr(said);
        assert_eq!(outcome.stderr.lines().count(), 1, "{}", outcome.stderr);
    }
}
