//! `zk://`: the `srvr` four-letter word (the one ZooKeeper allows by default), answered with
//! the member's `Mode:` when it serves; a member without a quorum says it is not serving.

use super::exchange::{find, server_text, Exchange};
use super::url_parts::{plain, Ignored, TargetUrl};
use super::Context;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::runtime::Attempt;

/// Parses a `zk://` URL.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    plain(url, 2181, Ignored::Userinfo).map(Kind::Zookeeper)
}

/// How the answers of a ZooKeeper server to `srvr` start: serving, not serving, not allowed.
const STARTS: [&[u8]; 3] = [
    b"Zookeeper version:",
    b"This ZooKeeper instance is not currently serving requests",
    b"srvr is not executed because",
];

/// One attempt: `srvr`, then the answer up to the server's close, or as soon as its first bytes
/// are none of a ZooKeeper's (a server of another kind may hold the connection open).
pub async fn check(endpoint: &Endpoint, context: &Context, at: &Attempt) -> Result<(), Failure> {
    let mut exchange = Exchange::open(endpoint, context, None, "a ZooKeeper", at).await?;
    exchange.send(b"srvr").await?;
    let answer = exchange.until_closed_if(zookeeper_so_far).await?;
    let has = |words: &[u8]| find(&answer, words).is_some();
    if answer.starts_with(b"Zookeeper version:") && has(b"\nMode: ") {
        Ok(())
    } else if has(b"not currently serving requests") || has(b"is not executed because") {
        Err(server_text(&answer).into())
    } else {
        Err(exchange.unexpected(&answer))
    }
}

/// Whether `seen`, the start of an answer, may still be a ZooKeeper's.
fn zookeeper_so_far(seen: &[u8]) -> bool {
    STARTS.iter().any(|start| {
        let n = seen.len().min(start.len());
        seen[..n] == start[..n]
    })
}
