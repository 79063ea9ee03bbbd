//! Passwords in `exec:` commands (`mysqladmin -p…`, `redis-cli -a …`, `PGPASSWORD=…`, a URL's,
//! inside `sh -c '…'`) never reach stdout, stderr, JSON logs, the termination log or `serve`'s
//! answers: the target is shown with them hidden, and commands that print their arguments back
//! (as these scripts do) have them hidden too.

use std::path::Path;

use crate::support::run::RunExt;
use crate::support::served::Served;
use crate::support::{readygate, write_executable, TempDir};

/// Every password the targets below hold.
const SECRETS: &[&str] = &[
    "MysqlS3cret",
    "LongS3cret",
    "RedisS3cret",
    "EnvS3cret",
    "UrlS3cret",
    "PassS3cret",
    "ScriptS3cret",
    "HeaderT0ken",
];

/// Writes, in `dir`, `mysqladmin`, `redis-cli` and `check`: each prints its arguments on
/// stderr and exits `status`.
fn programs(dir: &Path, status: u8) {
    for name in ["mysqladmin", "redis-cli", "check"] {
        let script = format!("#!/bin/sh\necho \"{name} got: $*\" >&2\nexit {status}\n");
        write_executable(&dir.join(name), &script);
    }
}

/// The targets, as written, and as they must be shown.
fn targets(dir: &Path) -> Vec<(String, String)> {
    let d = dir.display();
    let pairs = [
        (
            format!("exec:{d}/mysqladmin ping -h db -pMysqlS3cret --password=LongS3cret"),
            format!("exec:{d}/mysqladmin ping -h db -p*** --password=***"),
        ),
        (
            format!("exec:{d}/redis-cli -h cache -a RedisS3cret ping"),
            format!("exec:{d}/redis-cli -h cache -a *** ping"),
        ),
        (
            format!(
                "exec:{d}/check PGPASSWORD=EnvS3cret postgres://app:UrlS3cret@db/x --password \
                 PassS3cret -H 'Authorization: Bearer HeaderT0ken'"
            ),
            format!(
                "exec:{d}/check PGPASSWORD=*** postgres://app:***@db/x --password *** -H \
                 'Authorization: ***'"
            ),
        ),
        (
            format!("exec:sh -c '{d}/mysqladmin ping -pScriptS3cret'"),
            format!("exec:sh -c '{d}/mysqladmin ping -p***'"),
        ),
    ];
    pairs.into_iter().collect()
}

/// Fails the test if any password shows in `text`.
#[track_caller]
fn expect_hidden(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret} shows in {what}:\n{text}");
    }
}

#[test]
fn failing_commands_show_no_password_in_output_logs_or_the_termination_log() {
    let dir = TempDir::new();
    programs(&dir.0, 1);
    let targets = targets(&dir.0);
    let written: Vec<&str> = targets
        .iter()
        .map(|(written, _)| written.as_str())
        .collect();
    let log = dir.join("termination-log");
    let log_arg = log.display().to_string();
    for format in ["text", "json"] {
        let args = ["wait", "-v", "-t", "1s", "--log-format", format];
        let args = args.into_iter().chain(["--termination-log", &log_arg]);
        let out = readygate(args.chain(written.iter().copied())).outcome();
        out.expect_code(1);
        expect_hidden("stdout", &out.stdout);
        expect_hidden("stderr", &out.stderr);
        let file = std::fs::read_to_string(&log).unwrap();
        expect_hidden("the termination log", &file);
        for (_, shown) in &targets {
            assert!(file.contains(shown.as_str()), "{shown} not in {file}");
        }
        // The reason is what the command printed: its arguments, each password hidden.
        assert!(
            file.contains("got: ping -h db -p*** --password=***"),
            "{file}"
        );
    }
    let out = readygate(["probe"].into_iter().chain(written.iter().copied())).outcome();
    out.expect_code(1);
    expect_hidden("probe's stdout", &out.stdout);
    expect_hidden("probe's stderr", &out.stderr);
    for (_, shown) in &targets {
        out.expect_stdout(&format!("{shown}: exit status 1: "));
    }
    // serve's answers name the targets, and /metrics labels them.
    let served = Served::start(&written);
    let ready = served.get("/ready");
    expect_hidden("/ready", &ready.body);
    assert!(ready.body.contains(&targets[0].1), "{ready:?}");
    expect_hidden("/metrics", &served.get("/metrics").body);
}

#[test]
fn ready_commands_show_no_password_in_verbose_or_json_logs() {
    let dir = TempDir::new();
    programs(&dir.0, 0);
    let targets = targets(&dir.0);
    let written: Vec<&str> = targets
        .iter()
        .map(|(written, _)| written.as_str())
        .collect();
    for format in ["text", "json"] {
        let args = ["wait", "-v", "-t", "10s", "--log-format", format];
        let out = readygate(args.into_iter().chain(written.iter().copied())).outcome();
        out.expect_code(0);
        expect_hidden("stdout", &out.stdout);
        expect_hidden("stderr", &out.stderr);
        out.expect_stderr("-p***");
    }
}

#[test]
fn a_command_that_does_not_parse_or_run_shows_no_password_in_its_usage_error() {
    let dir = TempDir::new();
    let cases = [
        "exec:mysqladmin ping -pMysqlS3cret -e 'unclosed".to_string(),
        format!(
            "exec:{}/mysqladmin -pMysqlS3cret --password PassS3cret",
            dir.0.display()
        ),
        format!(
            "exec:{}/redis-cli -a RedisS3cret --token=UrlS3cret",
            dir.0.display()
        ),
    ];
    for target in &cases {
        let out = readygate(["wait", "-t", "5s", target]).outcome();
        out.expect_code(2);
        expect_hidden("stderr", &out.stderr);
        assert!(out.stderr.contains("***"), "{}", out.stderr);
    }
    // Its words given apart: the fix quoted shows none either.
    let out = readygate(["wait", "exec:env", "PGPASSWORD=EnvS3cret", "pg_isready"]).outcome();
    out.expect_code(2)
        .expect_stderr("quote it whole, as in \"exec:env PGPASSWORD=***\"");
    expect_hidden("stderr", &out.stderr);
}
