//! `zk://`: the `srvr` four-letter word (the one ZooKeeper allows by default), answered with
//! the member's `Mode:` when it serves; a member without a quorum says it is not serving.

use super::answer::{server_text, Exchange};
use crate::error::Failure;
use crate::net::transport::connect_tcp;
use crate::target::Endpoint;

/// One attempt: `srvr`, then the answer up to the server's close.
pub async fn check(endpoint: &Endpoint) -> Result<(), Failure> {
    let stream = connect_tcp(endpoint).await?;
    let mut exchange = Exchange::new(Box::new(stream), "ZooKeeper");
    exchange.send(b"srvr").await?;
    let answer = exchange.until_closed().await?;
    if answer.starts_with(b"Zookeeper version:") && contains(&answer, b"\nMode: ") {
        Ok(())
    } else if contains(&answer, b"not currently serving requests")
        || contains(&answer, b"is not executed because")
    {
        Err(Failure::Protocol(server_text(&answer)))
    } else if answer.is_empty() {
        Err("connection closed without an answer (not a ZooKeeper server?)".into())
    } else {
        Err(exchange.unexpected(&answer))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
