//! `mysql://` and `mariadb://` against a real MariaDB: its greeting is ready; an ERR packet in
//! its place (all connections taken) is not, with the server's code and words.

use std::io::Read;
use std::net::TcpStream;

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

    // Connections that never log in, up to the limit and the one kept for an administrator.
    let held: Vec<TcpStream> = (0..=MAX_CONNECTIONS)
        .map(|_| {
            let mut stream = TcpStream::connect(server.addr).expect("connect");
            let mut greeting = [0u8; 4];
            stream.read_exact(&mut greeting).expect("greeting");
            stream
        })
        .collect();
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
