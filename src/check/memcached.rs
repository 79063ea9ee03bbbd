//! `memcached://`: the text protocol's `version`, answered by `VERSION …`.

use super::answer::{server_text, Exchange};
use crate::error::Failure;
use crate::net::transport::connect_tcp;
use crate::target::Endpoint;

/// One attempt: `version`, then one line.
pub async fn check(endpoint: &Endpoint) -> Result<(), Failure> {
    let stream = connect_tcp(endpoint).await?;
    let mut exchange = Exchange::new(Box::new(stream), "memcached");
    exchange.send(b"version\r\n").await?;
    let line = exchange.line().await?;
    if line.starts_with(b"VERSION ") {
        Ok(())
    } else if line.starts_with(b"SERVER_ERROR ") {
        Err(Failure::Protocol(server_text(&line)))
    } else {
        Err(exchange.unexpected(&line))
    }
}
