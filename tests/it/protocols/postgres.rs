//! `postgres://` against a real primary (SCRAM passwords) and a standby with
//! `hot_standby=off`.

use std::time::Duration;

use super::probe;
use crate::support::postgres::shared;
use crate::support::readygate;
use crate::support::redis::Redis;
use crate::support::run::RunExt;

#[test]
fn a_primary_asking_for_a_password_is_ready_without_one() {
    let port = shared().primary.port();
    let targets = [
        format!("postgres://127.0.0.1:{port}"),
        format!("postgresql://localhost:{port}/postgres"),
        // No such role or database: the server is up and says so, as pg_isready counts it.
        format!("postgres://nobody@127.0.0.1:{port}/nowhere"),
    ];
    for target in &targets {
        let outcome = probe(&[], &[target]);
        outcome.expect_code(0);
        assert_eq!(outcome.stdout, "", "{target}");
    }
}

#[test]
fn a_standby_without_hot_standby_is_not_ready_in_the_servers_words() {
    let standby = format!("postgres://127.0.0.1:{}", shared().standby.port());
    let outcome = probe(&[], &[&standby]);
    outcome.expect_code(1);
    assert_eq!(
        outcome.stdout,
        format!(
            "{standby}: the database system is not accepting connections: Hot standby mode is \
             disabled. (57P03)\n"
        )
    );
    readygate(["wait", "--timeout", "1s", &standby])
        .outcome()
        .expect_code(1)
        .expect_slower_than(Duration::from_secs(1))
        .expect_faster_than(Duration::from_secs(5))
        .expect_stderr("(57P03)");
    probe(&["--invert"], &[&standby]).expect_code(0);
}

#[test]
fn any_invert_and_threshold_combine_with_postgres() {
    let primary = format!("postgres://127.0.0.1:{}", shared().primary.port());
    let standby = format!("postgres://127.0.0.1:{}", shared().standby.port());
    probe(&[], &[&primary, &standby])
        .expect_code(1)
        .expect_stdout("57P03");
    probe(&["--any"], &[&primary, &standby]).expect_code(0);
    probe(&["--invert"], &[&primary]).expect_code(1);
    readygate([
        "wait",
        "--timeout",
        "10s",
        "--success-threshold",
        "3",
        "--interval",
        "20ms",
        &primary,
    ])
    .outcome()
    .expect_code(0)
    .expect_stderr("ready");
}

#[test]
fn postgres_and_redis_at_each_others_port_are_not_ready() {
    let redis = Redis::start();
    let outcome = probe(
        &["--timeout", "10s", "--attempt-timeout", "500ms"],
        &[&format!("postgres://{}", redis.addr)],
    );
    // Redis waits for the end of a line that never comes: the attempt timeout ends it, well
    // before the deadline.
    outcome
        .expect_code(1)
        .expect_faster_than(Duration::from_secs(5))
        .expect_stdout("no answer within 500ms");
    let postgres = format!("redis://127.0.0.1:{}", shared().primary.port());
    probe(&[], &[&postgres])
        .expect_code(1)
        .expect_stdout("connection closed without an answer (not a Redis server?)");
}
