//! `dns://NAME`: ready when NAME resolves as readygate resolves every host (`/etc/hosts`, then
//! DNS with the `search` list and `ndots` of `/etc/resolv.conf`, as in a pod).

use super::url_parts::TargetUrl;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Host;
use crate::net::resolve::Resolver;
use crate::runtime::Attempt;

/// `dns://NAME`: a name, nothing else.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let name = url.rest.strip_suffix('/').unwrap_or(url.rest);
    if name.contains(['@', ':', '/', '?', '#', '[']) {
        return Err("dns:// takes a host name only, as in dns://db.default.svc".into());
    }
    match Host::parse(name)? {
        Host::Name(name) => Ok(Kind::Dns(name)),
        Host::Ip(_) => Err("dns:// takes a host name, not an address".into()),
    }
}

/// A localhost name is answered without asking any server.
pub fn is_local(name: &str) -> bool {
    crate::net::endpoint::is_localhost(name)
}

/// One attempt: a lookup as for any host (DNS answers are kept for their TTL, within caps).
pub async fn check(name: &str, resolver: &Resolver, at: &Attempt) -> Result<(), Failure> {
    resolver.lookup(name, at).await.map(drop)
}
