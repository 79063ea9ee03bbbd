//! `tcp://HOST:PORT`, or a bare `HOST:PORT`: ready when a TCP connection is established.

use super::url_parts::TargetUrl;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::net::resolve::Resolver;
use crate::net::transport::connect_tcp;
use crate::runtime::Attempt;

/// Parses a `tcp://` URL (a trailing `/` is allowed).
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let rest = url.rest.strip_suffix('/').unwrap_or(url.rest);
    endpoint(rest).map(Kind::Tcp)
}

/// `HOST:PORT` of a TCP target, with or without its scheme. A user or password is refused by
/// name: a TCP check only connects, and nothing else would say why `user:pass@` is wrong.
pub fn endpoint(text: &str) -> Result<Endpoint, String> {
    if text.contains('@') {
        return Err("TCP targets take no USER:PASSWORD@ (a TCP check only connects)".into());
    }
    Endpoint::parse(text, None)
}

/// One attempt: connect (to every address the host resolves to, by `resolver` within `at`),
/// then close.
pub async fn check(endpoint: &Endpoint, resolver: &Resolver, at: &Attempt) -> Result<(), Failure> {
    connect_tcp(endpoint, resolver, at).await.map(drop)
}
