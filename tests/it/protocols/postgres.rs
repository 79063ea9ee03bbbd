//! `postgres://` against a real primary (SCRAM passwords) and a standby with
//! `hot_standby=off`.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use super::probe;
use crate::support::postgres::shared;
use crate::support::redis::Redis;
use crate::support::run::RunExt;
use crate::support::{closed_addr, readygate};

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

#[test]
fn a_database_url_with_a_password_is_ready_and_the_password_is_never_shown() {
    let port = shared().primary.port();
    // As an application has it: user, password, database and libpq options.
    let url = format!("postgres://postgres:s3cret@127.0.0.1:{port}/postgres?sslmode=require");
    let outcome = readygate(["wait", "-v", "--timeout", "10s", &url]).outcome();
    outcome.expect_code(0).expect_stderr("ready");
    super::expect_hidden(&outcome, "s3cret");
    let down = format!(
        "postgresql://app:s3cret@127.0.0.1:{}/app",
        closed_addr().port()
    );
    let outcome = probe(&["-v"], &[&down]);
    outcome.expect_code(1).expect_stdout("app:***@");
    super::expect_hidden(&outcome, "s3cret");
}

#[test]
fn the_password_of_a_database_url_is_never_sent() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut length = [0u8; 4];
        stream.read_exact(&mut length).unwrap();
        let mut startup = vec![0u8; u32::from_be_bytes(length) as usize - 4];
        stream.read_exact(&mut startup).unwrap();
        // AuthenticationMD5Password: the server is up and would take a password.
        stream.write_all(b"R\0\0\0\x0c\0\0\0\x05salt").unwrap();
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        startup.extend(rest);
        startup
    });
    let url = format!("postgres://app:s3cret@127.0.0.1:{port}/orders?sslmode=verify-full");
    probe(&[], &[&url]).expect_code(0);
    let sent = String::from_utf8_lossy(&server.join().unwrap()).into_owned();
    assert!(sent.contains("user\0app\0database\0orders\0"), "{sent:?}");
    assert!(
        !sent.contains("s3cret") && !sent.contains("sslmode"),
        "{sent:?}"
    );
}
