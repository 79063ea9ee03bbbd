//! `dns://NAME`: ready when NAME resolves as readygate resolves every host (`/etc/hosts`, then
//! DNS with the `search` list and `ndots` of `/etc/resolv.conf`, as in a pod).

use crate::error::Failure;

/// One attempt: a lookup as for any host (DNS answers are kept for their TTL, within caps).
pub async fn check(name: &str) -> Result<(), Failure> {
    crate::net::resolve::lookup(name).await.map(drop)
}
