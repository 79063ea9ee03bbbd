//! `memcached://`: the text protocol's `version`, answered by `VERSION …`.

use super::exchange::{server_text, Exchange};
use super::url_parts::{plain, Ignored, TargetUrl};
use super::Context;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::runtime::Attempt;

/// Parses a `memcached://` URL.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    plain(url, 11211, Ignored::Userinfo).map(Kind::Memcached)
}

/// One attempt: `version`, then one line.
pub async fn check(endpoint: &Endpoint, context: &Context, at: &Attempt) -> Result<(), Failure> {
    let mut exchange = Exchange::open(endpoint, context, None, "a memcached", at).await?;
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
