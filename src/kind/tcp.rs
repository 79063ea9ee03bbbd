//! `tcp://HOST:PORT`, or a bare `HOST:PORT`: ready when a TCP connection is established.

use super::url_parts::TargetUrl;
use super::Kind;
use crate::engine::Attempt;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::net::resolve::Resolver;
use crate::net::transport::connect_tcp;

/// Parses a `tcp://` URL (a trailing `/` is allowed).
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let rest = url.rest.strip_suffix('/').unwrap_or(url.rest);
    Endpoint::parse(rest, None).map(Kind::Tcp)
}

/// One attempt: connect (to every address the host resolves to, by `resolver` within `at`),
/// then close.
pub async fn check(endpoint: &Endpoint, resolver: &Resolver, at: &Attempt) -> Result<(), Failure> {
    connect_tcp(endpoint, resolver, at).await.map(drop)
}
