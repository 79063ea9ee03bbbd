//! `memcached://`: the text protocol's `version`, answered by `VERSION …`.

use super::exchange::{server_text, Exchange};
use crate::error::Failure;
use crate::kind::target::Endpoint;

/// One attempt: `version`, then one line.
pub async fn check(endpoint: &Endpoint) -> Result<(), Failure> {
    let mut exchange = Exchange::open(endpoint, None, "a memcached").await?;
    exchange.send(b"version\r\n").await?;
    let line = exchange.line().await?;
    if line.starts_with(b"VERSION ") {
        Ok(())
    } else if line.starts_with(b"SERVER_ERROR ") {
        Err(server_text(&line).into())
    } else {
        Err(exchange.unexpected(&line))
    }
}
