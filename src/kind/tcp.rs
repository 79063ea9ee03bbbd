//! `tcp://HOST:PORT`, or a bare `HOST:PORT`: ready when a TCP connection is established.

use super::url_parts::TargetUrl;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::net::transport::connect_tcp;

/// Parses a `tcp://` URL (a trailing `/` is allowed).
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let rest = url.rest.strip_suffix('/').unwrap_or(url.rest);
    Endpoint::parse(rest, None).map(Kind::Tcp)
}

/// One attempt: connect (to every address the host resolves to), then close.
pub async fn check(endpoint: &Endpoint) -> Result<(), Failure> {
    connect_tcp(endpoint).await.map(drop)
}
