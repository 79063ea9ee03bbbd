//! `mysql://` and `mariadb://` against a real MariaDB: its greeting is ready; an ERR packet in
//! its place (all connections taken) is not, with the server's code and words.

use std::io::Read;
use std::net::TcpStream;
use std::time::Duration;

use super::probe;
use crate::support::mariadb::{MariaDb, MAX_CONNECTIONS};
use crate::support::readygate;
use crate::support::run::RunExt;

#[test]
fn mariadb_greets_until_its_connections_run_out() {
    let server = MariaDb::start();
    let port = server.addr.port();
    let target = format!("mysql://127.0.0.1:{port}");
    probe(&[], &[&target, &format!("mariadb://localhost:{port}/")]).expect_code(0);
    // An application's DATABASE_URL as it is: its password is neither sent nor shown.
    let url = format!("mysql://app:s3cret@127.0.0.1:{port}/app?ssl-mode=REQUIRED");
    let outcome = readygate(["wait", "-v", "--timeout", "10s", &url]).outcome();
    outcome.expect_code(0).expect_stderr("app:***@");
    super::expect_hidden(&outcome, "s3cret");

    // Connections that never log in, up to the limit and the one kept for an administrator,
    // each held only once the server greeted it.
    let held: Vec<TcpStream> = (0..=MAX_CONNECTIONS).map(|_| greeted(&server)).collect();
    let outcome = probe(&[], &[&target]);
    outcome.expect_code(1);
    assert_eq!(
        outcome.stdout,
        format!("{target}: Too many connections (error 1040)\n")
    );
    probe(&["--invert"], &[&target]).expect_code(0);
    drop(held);
    readygate(["wait", "--timeout", "20s", &target])
        .outcome()
        .expect_code(0);
}

/// A connection the server greeted, and so counts against its limit. Connections closed a
/// moment ago (the probes', the start-up's port check) may still be counted: the server then
/// answers with an ERR packet (1040) instead, and the connection is made again.
fn greeted(server: &MariaDb) -> TcpStream {
    let mut greeted = None;
    // A pause between polls of the server's count, not a wait for a race to pass.
    let every = Duration::from_millis(10);
    crate::support::events::poll_until(Duration::from_secs(20), every, || {
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        let mut header = [0u8; 4];
        stream.read_exact(&mut header).expect("packet header");
        let length = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        let mut payload = vec![0u8; length];
        stream.read_exact(&mut payload).expect("packet payload");
        match payload.first() {
            // Protocol version 10: a greeting.
            Some(10) => greeted = Some(stream),
            Some(0xff) => {}
            _ => panic!("no greeting from MariaDB: {payload:?}"),
        }
        greeted.is_some()
    });
    greeted.expect("a greeting from MariaDB within 20 s (it kept refusing with ERR 1040)")
}

#[test]
fn mysql_at_a_postgres_port_is_not_ready() {
    let postgres = crate::support::postgres::shared().primary;
    // PostgreSQL waits for a StartupMessage and MySQL for a greeting: nobody speaks.
    probe(
        &["--attempt-timeout", "300ms"],
        &[&format!("mysql://{postgres}")],
    )
    .expect_code(1)
    .expect_stdout("no answer within 300ms");
}
