//! Usage errors name what the user typed: the `READYGATE_*` variable a bad value came from,
//! several targets given as one, a URL short of its `//`, and a command given without `--`.
//! Each is one line on stderr and exit status 2, found before anything is waited for.

use std::time::Duration;

use crate::support::run::{Outcome, RunExt};
use crate::support::{closed_addr, readygate, write_executable, TempDir};

/// The hint of a forgotten `--`.
const FORGOT: &str = "(did you forget \"--\" before the command?)";

/// Asserts a usage error: status 2, and stderr the one line `readygate: <line>`.
#[track_caller]
fn usage_error(outcome: &Outcome, line: &str) {
    outcome.expect_code(2);
    assert_eq!(
        outcome.stderr,
        format!("readygate: {line}\n"),
        "{outcome:#?}"
    );
}

/// The words after `readygate` (a TARGET goes after the first), the variables, and the line.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn a_bad_value_from_the_environment_names_its_variable() {
    // An https:// target uses every option below: each fault is the value's own.
    let target = format!("https://{}/", closed_addr());
    let cases: [(&str, &str, &str, &str); 17] = [
        (
            "wait",
            "READYGATE_TIMEOUT",
            "abc",
            "READYGATE_TIMEOUT=\"abc\": invalid duration \"abc\"",
        ),
        (
            "wait",
            "READYGATE_ATTEMPT_TIMEOUT",
            "1x",
            "READYGATE_ATTEMPT_TIMEOUT=\"1x\": invalid duration",
        ),
        (
            "wait",
            "READYGATE_INTERVAL",
            "soon",
            "READYGATE_INTERVAL=\"soon\": invalid duration",
        ),
        (
            "wait",
            "READYGATE_MAX_INTERVAL",
            "-1",
            "READYGATE_MAX_INTERVAL=\"-1\": invalid duration",
        ),
        (
            "wait",
            "READYGATE_STABLE_FOR",
            "x",
            "READYGATE_STABLE_FOR=\"x\": invalid duration",
        ),
        (
            "wait",
            "READYGATE_SUCCESS_THRESHOLD",
            "0",
            "READYGATE_SUCCESS_THRESHOLD=\"0\": 0 is not in 1..",
        ),
        (
            "probe",
            "READYGATE_STATUS",
            "9",
            "READYGATE_STATUS=\"9\": invalid status range \"9\"",
        ),
        (
            "probe",
            "READYGATE_METHOD",
            "PUT",
            "READYGATE_METHOD=\"PUT\": expected one of get, head",
        ),
        (
            "probe",
            "READYGATE_LOG_FORMAT",
            "yaml",
            "READYGATE_LOG_FORMAT=\"yaml\": expected one of text, json",
        ),
        (
            "probe",
            "READYGATE_MATCHES",
            "(",
            "READYGATE_MATCHES=\"(\": invalid READYGATE_MATCHES regex",
        ),
        (
            "probe",
            "READYGATE_JSON_FIELD",
            "=",
            "READYGATE_JSON_FIELD=\"=\": expected PATH or PATH=VALUE",
        ),
        (
            "probe",
            "READYGATE_HEADER_MATCHES",
            "x",
            "READYGATE_HEADER_MATCHES=\"x\": expected \"Name: REGEX\"",
        ),
        (
            "probe",
            "READYGATE_HEADER",
            "x",
            "READYGATE_HEADER: invalid header \"x\"",
        ),
        (
            "probe",
            "READYGATE_CACERT",
            "/no/such.pem",
            "READYGATE_CACERT=\"/no/such.pem\": no such file",
        ),
        (
            "probe",
            "READYGATE_CERT",
            "/no/such.pem",
            "READYGATE_CERT=\"/no/such.pem\": no such file",
        ),
        (
            "probe",
            "READYGATE_TLS_SERVER_NAME",
            "a b",
            "READYGATE_TLS_SERVER_NAME=\"a b\": not a DNS name",
        ),
        (
            "probe",
            "READYGATE_UNIX_SOCKET",
            "",
            "READYGATE_UNIX_SOCKET is set but empty",
        ),
    ];
    for (command, variable, value, said) in cases {
        let outcome = readygate([command, &target]).env(variable, value).outcome();
        outcome
            .expect_code(2)
            .expect_stderr(&format!("readygate: {said}"));
        assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
        assert!(!outcome.stderr.contains(" --"), "{outcome:#?}");
    }
    let more: [Case; 6] = [
        (
            &["serve"],
            &[("READYGATE_LISTEN", "x")],
            "READYGATE_LISTEN=\"x\": expected IP:PORT, :PORT or PORT",
        ),
        (
            &["serve"],
            &[("READYGATE_FRESH_FOR", "x")],
            "READYGATE_FRESH_FOR=\"x\": invalid duration",
        ),
        (
            &["wait"],
            &[("READYGATE_TOUCH", "x/")],
            "READYGATE_TOUCH=\"x/\" names a folder",
        ),
        (
            &["wait", "--", "true"],
            &[("READYGATE_ON_EXIT", "ftp://x")],
            "READYGATE_ON_EXIT: invalid target \"ftp://x\"",
        ),
        (
            &["probe"],
            &[("READYGATE_KEY", "/k.pem")],
            "READYGATE_KEY needs --cert",
        ),
        (
            &["wait"],
            &[("READYGATE_CONTAINS", "a"), ("READYGATE_MATCHES", "b")],
            "the argument READYGATE_CONTAINS cannot be used with READYGATE_MATCHES",
        ),
    ];
    for (args, variables, said) in more {
        let mut command = readygate(args.iter().take(1).chain([&&*target]).chain(&args[1..]));
        let outcome = command.envs(variables.iter().copied()).outcome();
        outcome
            .expect_code(2)
            .expect_stderr(&format!("readygate: {said}"));
        assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
    }
    // Both sources in one message, each named as it was given.
    let outcome = readygate(["wait", "-t", "1s", &target])
        .env("READYGATE_ATTEMPT_TIMEOUT", "5s")
        .outcome();
    usage_error(
        &outcome,
        "READYGATE_ATTEMPT_TIMEOUT=\"5s\" is longer than --timeout 1s",
    );
    // The command line wins over the variable, and is what the error names.
    for args in [["wait", "--timeout", "abc"], ["wait", "-t", "abc"]] {
        let outcome = readygate(args.iter().chain([&&*target]))
            .env("READYGATE_TIMEOUT", "abc")
            .outcome();
        outcome
            .expect_code(2)
            .expect_stderr("invalid value 'abc' for '--timeout <DURATION>'");
        assert!(
            !outcome.stderr.contains("READYGATE_TIMEOUT"),
            "{outcome:#?}"
        );
    }
}

#[test]
fn several_targets_in_one_argument_are_named_as_such() {
    let cases = [
        (
            "a:1,b:2",
            "several targets separated by commas: give each as an argument of its own",
        ),
        (
            "http://a:1,http://b:2",
            "several targets separated by commas: give each as an argument of its own",
        ),
        (
            "a:1 b:2",
            "several targets separated by white space: give each as an argument of its own",
        ),
    ];
    for (typed, said) in cases {
        let outcome = readygate(["wait", "-t", "2s", typed]).outcome();
        usage_error(&outcome, &format!("invalid target \"{typed}\": {said}"));
        assert!(!outcome.stderr.contains("IPv6"), "{outcome:#?}");
    }
    // READYGATE_TARGETS separates with commas, and says so when spaces were used.
    let outcome = readygate(["wait"])
        .env("READYGATE_TARGETS", "a:1 b:2")
        .outcome();
    usage_error(
        &outcome,
        "READYGATE_TARGETS: invalid target \"a:1 b:2\": targets in it are separated by commas, not \
         white space",
    );
}

#[test]
fn a_url_short_of_its_slashes_is_named_with_the_fix() {
    let cases = [
        ("https:/host", "https://host"),
        ("https:/host:8443/ready", "https://host:8443/ready"),
        ("http:host:80", "http://host:80"),
        ("grpc:/db:50051", "grpc://db:50051"),
        ("postgres:/u:pw@db/app", "postgres://u:***@db/app"),
    ];
    for (typed, fixed) in cases {
        let outcome = readygate(["wait", typed]).outcome();
        let scheme = typed.split(':').next().unwrap();
        outcome.expect_code(2).expect_stderr(&format!(
            "a URL needs \"//\" after \"{scheme}:\": \"{fixed}\""
        ));
        assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
        assert!(!outcome.stderr.contains("IPv6"), "{outcome:#?}");
        assert!(!outcome.stderr.contains(":pw@"), "{outcome:#?}");
    }
    // A host named like a scheme, with a port, is a host: `redis:6379` in a pod.
    let outcome = readygate(["probe", "redis:6379"]).outcome();
    outcome.expect_code(1);
}

#[test]
fn options_of_a_command_given_without_dashes_are_pointed_out() {
    let target = closed_addr().to_string();
    for args in [
        vec!["wait", &target, "/app/server", "--port", "80"],
        vec!["wait", "-t", "5s", &target, "/app/server", "-p", "80"],
        vec!["wait", &target, "nginx", "-g", "daemon off;"],
        vec![
            "-v",
            "wait",
            &target,
            "--attempt-timeout",
            "1s",
            "java",
            "-jar",
            "app.jar",
        ],
    ] {
        let outcome = readygate(&args).outcome();
        outcome
            .expect_code(2)
            .expect_faster_than(Duration::from_secs(2));
        assert!(
            outcome
                .stderr
                .starts_with("readygate: unexpected argument '-")
                && outcome.stderr.ends_with(&format!("{FORGOT}\n"))
                && outcome.stderr.lines().count() == 1,
            "{args:?}: {outcome:#?}"
        );
    }
    // An option mistyped after a target is no command: clap's own words.
    let outcome = readygate(["wait", &target, "--port", "80"]).outcome();
    outcome.expect_code(2);
    assert!(!outcome.stderr.contains(FORGOT), "{outcome:#?}");
}

#[test]
fn an_executable_given_as_a_target_is_a_usage_error_at_once() {
    let dir = TempDir::new();
    write_executable(&dir.join("app"), "#!/bin/sh\nexit 0\n");
    let target = closed_addr().to_string();
    // Without --, the wait would run its whole 60 s for a file it finds at once, then not run it.
    for app in ["./app", &*dir.join("app").to_string_lossy(), "/bin/sh"] {
        let outcome = readygate(["wait", &target, app])
            .current_dir(&dir.0)
            .outcome();
        usage_error(
            &outcome,
            &format!(
                "\"{app}\" is an executable file: wait would wait for it, not run it {FORGOT}; \
                 to wait for the file itself, write it as a file:// URL"
            ),
        );
        outcome.expect_faster_than(Duration::from_secs(2));
    }
    // As file:// it is the file to wait for.
    let url = format!("file://{}", dir.join("app").display());
    readygate(["wait", "-t", "5s", &url])
        .outcome()
        .expect_code(0);
    // With the command after --, nothing is asked.
    let app = dir.join("app");
    readygate(["wait", "-t", "5s", &url, "--"])
        .arg(&app)
        .outcome()
        .expect_code(0);
}
