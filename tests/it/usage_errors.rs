//! A bad command line is one line naming the fault, with status 2: a forgotten `--`, the
//! options of the other command and typos are pointed out with the fix.

use std::net::TcpListener;

use crate::support::http::{Answer, HttpServer};
use crate::support::run::RunExt;
use crate::support::{closed_addr, readygate};

/// A bad command line, the text its one-line error must contain, and an extra variable.
type BadInput<'a> = (Vec<&'a str>, &'a str, Option<(&'a str, &'a str)>);

#[test]
fn usage_errors_are_one_line_naming_the_fault_with_status_2() {
    let long = "x".repeat(100_000);
    let cases: Vec<BadInput> = vec![
        (
            vec!["wait", "tcp://:80"],
            "invalid target \"tcp://:80\": missing host",
            None,
        ),
        (vec!["wait", "db:0"], "port 0", None),
        (vec!["wait", "db:65536"], "invalid port", None),
        (vec!["wait", "ftp://x:1"], "unknown scheme", None),
        (vec!["wait", ""], "invalid target \"\"", None),
        (vec!["wait", "a\u{1b}[31m:1"], "\\u{1b}", None),
        (vec!["wait", "-t", "soon", "db:1"], "--timeout", None),
        (
            vec!["wait", "--attempt-timeout", "2s", "-t", "1s", "db:1"],
            "--attempt-timeout 2s is longer than --timeout 1s",
            None,
        ),
        (
            vec!["wait", "--interval", "2s", "--max-interval", "1s", "db:1"],
            "--interval",
            None,
        ),
        (
            vec!["wait", "--attempt-timeout", "0", "db:1"],
            "--attempt-timeout must be above 0",
            None,
        ),
        (vec!["wait", "--status", "99", "db:1"], "--status", None),
        (
            vec!["wait", "--status", "300-200", "db:1"],
            "300 is above 200",
            None,
        ),
        (vec!["wait", "-H", "no colon", "db:1"], "--header", None),
        (vec!["wait", "--matches", "(", "db:1"], "--matches", None),
        (
            vec!["wait", "--success-threshold", "0", "db:1"],
            "--success-threshold",
            None,
        ),
        (vec!["wait", "--method", "POST", "db:1"], "--method", None),
        (
            vec!["wait", "--log-format", "xml", "db:1"],
            "--log-format",
            None,
        ),
        (vec!["wait", "--bogus", "db:1"], "--bogus", None),
        (
            vec!["wait", "--on-exit", "http://127.0.0.1:1/quit", "db:1"],
            "--on-exit needs a command",
            None,
        ),
        (
            vec!["wait", "--contains", "a", "--matches", "b", "db:1"],
            "--contains",
            None,
        ),
        (vec!["wait"], "no target given", None),
        (vec!["wait", &long], "invalid target", None),
        (
            vec!["wait", "db:1"],
            "READYGATE_TIMEOUT=\"abc\": invalid duration",
            Some(("READYGATE_TIMEOUT", "abc")),
        ),
        (
            vec!["wait", "db:1"],
            "READYGATE_DISABLED",
            Some(("READYGATE_DISABLED", "maybe")),
        ),
        (
            vec!["wait"],
            "invalid target",
            Some(("READYGATE_TARGETS", "http://")),
        ),
        (vec!["frobnicate"], "frobnicate", None),
        (
            vec!["install"],
            "required arguments were not provided: <DIR>",
            None,
        ),
        (
            vec!["sidecar", "legacy", "--state", "/tmp/s"],
            "<COMMAND>",
            None,
        ),
    ];
    for (args, fault, env) in cases {
        let mut command = readygate(&args);
        if let Some((key, value)) = env {
            command.env(key, value);
        }
        let outcome = command.outcome();
        let shown: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
        assert_eq!(outcome.code, Some(2), "{shown:?}: {outcome:#?}");
        assert_eq!(outcome.stdout, "", "{shown:?}");
        let line = outcome.stderr.trim_end();
        assert!(
            !line.contains('\n'),
            "{shown:?}: more than one line: {line}"
        );
        assert!(line.starts_with("readygate: "), "{shown:?}: {line}");
        assert!(
            line.contains(fault),
            "{shown:?}: {line:?} should mention {fault:?}"
        );
        assert!(
            line.len() < 400 || args.iter().any(|a| a.len() > 1000),
            "{shown:?}: too long"
        );
    }
}

#[test]
fn non_utf8_arguments_are_usage_errors() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"tcp://\xff:80");
    let outcome = readygate([std::ffi::OsStr::new("wait"), bad]).outcome();
    outcome.expect_code(2).expect_stderr("readygate: ");
    assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
}

// A forgiving command line: what a user gets wrong is named, with the fix.

const FORGOT: &str = "(did you forget \"--\" before the command?)";

#[test]
fn a_command_without_its_dashes_is_pointed_out() {
    let closed = closed_addr().to_string();
    // A path that is not there: the final line asks.
    let outcome = readygate(["wait", "-t", "2s", &closed, "/no/such/app/server"]).outcome();
    outcome.expect_code(1);
    assert!(
        outcome
            .stderr
            .contains(&format!("/no/such/app/server: no such file {FORGOT}")),
        "{}",
        outcome.stderr
    );
    assert!(!outcome
        .stderr
        .contains(&format!("{closed}: connection refused {FORGOT}")));

    // A word that is no target: the usage error asks.
    let outcome = readygate(["wait", &closed, "echo", "hi"]).outcome();
    outcome.expect_code(2);
    assert!(
        outcome
            .stderr
            .starts_with("readygate: invalid target \"echo\"")
            && outcome.stderr.trim_end().ends_with(FORGOT),
        "{}",
        outcome.stderr
    );

    // An executable file is a usage error at once (usage_names.rs), unless COMMAND is given.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = listener.local_addr().unwrap().to_string();

    // No hint when the target is clearly meant: the first one, file://, or a COMMAND given.
    for args in [
        vec!["wait", "-t", "300ms", "/no/such/file"],
        vec!["wait", "-t", "300ms", &closed, "file:///no/such/file"],
        vec![
            "wait",
            "-t",
            "300ms",
            &closed,
            "/no/such/file",
            "--",
            "true",
        ],
    ] {
        let outcome = readygate(&args).outcome();
        outcome.expect_code(1);
        assert!(
            !outcome.stderr.contains(FORGOT),
            "{args:?}: {}",
            outcome.stderr
        );
    }
    let outcome = readygate(["wait", &open, "/bin/sh", "--", "true"]).outcome();
    outcome.expect_code(0);
    assert!(!outcome.stderr.contains(FORGOT), "{}", outcome.stderr);
}

#[test]
fn probe_says_it_takes_no_command() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let outcome = readygate(["probe", &server.url("/"), "--", "echo", "hi"]).outcome();
    outcome.expect_code(2);
    assert_eq!(outcome.stdout, "");
    assert!(
        outcome
            .stderr
            .starts_with("readygate: probe takes no command (\"echo\" after --)"),
        "{}",
        outcome.stderr
    );
    assert_eq!(outcome.stderr.lines().count(), 1);
    assert_eq!(
        server.hits(),
        0,
        "a usage error must come before any attempt"
    );
}

#[test]
fn probe_rejects_the_options_of_wait_and_lists_only_its_own() {
    let server = HttpServer::start(|_, _| Answer::body("ok"));
    let url = server.url("/");
    for (option, value) in [
        ("--interval", "1s"),
        ("--max-interval", "1s"),
        ("--success-threshold", "3"),
        ("--stable-for", "1s"),
        ("--on-exit", "http://127.0.0.1:1/done"),
    ] {
        let outcome = readygate(["probe", option, value, &url]).outcome();
        outcome
            .expect_code(2)
            .expect_stderr(&format!("readygate: {option} is an option of wait"));
        assert!(
            !outcome.stderr.contains("similar"),
            "no look-alike: {}",
            outcome.stderr
        );
        let probe_help = readygate(["probe", "--help"]).outcome().stdout;
        assert!(!probe_help.contains(option), "probe --help lists {option}");
        let wait_help = readygate(["wait", "--help"]).outcome().stdout;
        assert!(wait_help.contains(option), "wait --help lacks {option}");
    }
    assert_eq!(server.hits(), 0);
    // The same settings in the environment (shared by a pod's wait and probe) are not read.
    readygate(["probe", &url])
        .env("READYGATE_SUCCESS_THRESHOLD", "3")
        .env("READYGATE_INTERVAL", "1s")
        .env("READYGATE_STABLE_FOR", "1h")
        .env("READYGATE_ON_EXIT", "http://127.0.0.1:1/done")
        .outcome()
        .expect_code(0);
    assert_eq!(server.hits(), 1);
}

#[test]
fn typos_get_a_suggestion() {
    for (args, suggestion) in [
        (vec!["wiat", "db:1"], "a similar subcommand exists: 'wait'"),
        (
            vec!["wait", "--tiemout", "1s", "db:1"],
            "a similar argument exists: '--timeout'",
        ),
        (vec!["probe", "--insecur", "db:1"], "'--insecure'"),
    ] {
        let outcome = readygate(&args).outcome();
        outcome.expect_code(2).expect_stderr(suggestion);
        assert_eq!(outcome.stderr.lines().count(), 1, "{}", outcome.stderr);
    }
}

#[test]
fn each_error_names_its_fix() {
    for (args, fix) in [
        (
            vec!["wait", "--timeout", "5", "m", "db:1"],
            "invalid target \"m\": a duration is one word: write \"--timeout 5m\"",
        ),
        (
            vec!["wait", "--timeout", "-1", "db:1"],
            "invalid duration \"-1\": a duration is not negative (0 means none",
        ),
        (vec!["wait", "-t", "1h30", "db:1"], "write \"1h30m\""),
        (
            vec!["-t", "3s", "wait", "db:1"],
            "(-t is an option of wait, probe, serve: put it after the command, as in \
             \"readygate wait -t …\")",
        ),
        (
            vec!["--timeout=3s", "probe", "db:1"],
            "(--timeout is an option of wait, probe, serve: put it after the command",
        ),
        (
            vec!["serve", "--listen", "localhost:9090", "db:1"],
            "expected IP:PORT, :PORT or PORT",
        ),
    ] {
        let outcome = readygate(&args).outcome();
        outcome.expect_code(2).expect_stderr(fix);
        assert_eq!(outcome.stderr.lines().count(), 1, "{}", outcome.stderr);
    }
}

#[test]
fn the_last_of_a_repeated_option_wins() {
    let closed = closed_addr().to_string();
    // The first --timeout alone would wait 60 s; the last one ends the wait within a second.
    let outcome = readygate([
        "wait",
        "-t",
        "60s",
        "--timeout",
        "300ms",
        "-q",
        "-q",
        &closed,
    ])
    .outcome();
    outcome
        .expect_code(1)
        .expect_faster_than(std::time::Duration::from_secs(20));
    assert!(
        outcome.stderr.contains("not ready after 3"),
        "{}",
        outcome.stderr
    );
}

#[test]
fn tcp_targets_with_a_user_or_password_are_told_they_take_none() {
    for target in [
        "tcp://user:hunter2@db:5432",
        "tcp://user@db:5432",
        "user:hunter2@db:5432",
    ] {
        let outcome = readygate(["wait", target]).outcome();
        outcome
            .expect_code(2)
            .expect_stderr("TCP targets take no USER:PASSWORD@ (a TCP check only connects)");
        let line = outcome.stderr.trim_end();
        assert!(!line.contains('\n'), "{target}: {line}");
        for misleading in ["hunter2", "brackets", "invalid host name"] {
            assert!(!line.contains(misleading), "{target}: {line}");
        }
    }
}

#[test]
fn a_folder_among_the_targets_is_a_target_not_a_forgotten_command() {
    use std::os::unix::fs::PermissionsExt;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let open = listener.local_addr().unwrap().to_string();
    // `wait db:5432 /srv/data`: a folder has its x bits set, as an executable file has.
    let folder = crate::support::TempDir::new();
    let mode = std::fs::metadata(&folder.0).unwrap().permissions().mode();
    assert_ne!(mode & 0o111, 0, "{mode:o}");
    let path = folder.0.display().to_string();
    let outcome = readygate(["wait", "-t", "5s", &open, &path]).outcome();
    outcome.expect_code(0);
    assert!(!outcome.stderr.contains(FORGOT), "{}", outcome.stderr);
    assert!(!outcome.stderr.contains("executable"), "{}", outcome.stderr);
}

#[test]
fn a_target_that_cannot_be_a_url_names_the_fix() {
    for (target, fix) in [
        (
            "mongodb://db:27017",
            "unknown scheme \"mongodb\" (expected tcp, http, https, file, unix, grpc, grpcs, \
             k8s, postgres, redis, rediss, mysql, amqp, amqps, memcached, nats, zk, kafka, kafkas, dns); to \
             check that its port accepts connections: tcp://db:27017",
        ),
        (
            "http://127.0.0.1:8080/ready ",
            "invalid URL: the character \" \" (U+0020) at the end is not allowed in it",
        ),
        (
            "redis://:pa/ss@db:6379",
            "the password seems to hold \"/\", which ends a URL's host part: percent-encode it \
             as %2F, or give the password with --password-env or --password-file",
        ),
        ("redis://:pa#ss@db:6379", "percent-encode it as %23"),
        ("https://ops:pa?ss@db/", "percent-encode it as %3F"),
        (
            "postgres://app:p/w@db/orders",
            "or leave it out: a postgres:// check needs no login",
        ),
    ] {
        let outcome = readygate(["probe", target]).outcome();
        outcome.expect_code(2).expect_stderr(fix);
        assert_eq!(outcome.stderr.lines().count(), 1, "{}", outcome.stderr);
        for secret in ["pa/ss", "pa#ss", "pa?ss", "p/w"] {
            assert!(!outcome.stderr.contains(secret), "{}", outcome.stderr);
        }
    }
}
