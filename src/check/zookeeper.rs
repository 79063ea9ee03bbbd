//! `zk://`: the `srvr` four-letter word (the one ZooKeeper allows by default), answered with
//! the member's `Mode:` when it serves; a member without a quorum says it is not serving.

use super::answer::{find, server_text, Exchange};
use crate::error::Failure;
use crate::target::Endpoint;

/// One attempt: `srvr`, then the answer up to the server's close.
pub async fn check(endpoint: &Endpoint) -> Result<(), Failure> {
    let mut exchange = Exchange::open(endpoint, None, "a ZooKeeper").await?;
    exchange.send(b"srvr").await?;
    let answer = exchange.until_closed().await?;
    let has = |words: &[u8]| find(&answer, words).is_some();
    if answer.starts_with(b"Zookeeper version:") && has(b"\nMode: ") {
        Ok(())
    } else if has(b"not currently serving requests") || has(b"is not executed because") {
        Err(server_text(&answer).into())
    } else {
        Err(exchange.unexpected(&answer))
    }
}
