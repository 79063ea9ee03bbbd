//! `memcached://` against a real memcached.

use super::probe;
use crate::support::small_servers::{memcached, nats};

#[test]
fn memcached_answers_version() {
    let server = memcached();
    probe(&[], &[&format!("memcached://{}", server.addr)]).expect_code(0);
    probe(
        &[],
        &[&format!("memcached://localhost:{}", server.addr.port())],
    )
    .expect_code(0);
    // NATS speaks first: its INFO is no VERSION.
    let nats = nats();
    probe(&[], &[&format!("memcached://{}", nats.addr)])
        .expect_code(1)
        .expect_stdout("not a memcached answer: \"INFO {");
}
