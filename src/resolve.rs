//! Name resolution, afresh on every attempt: every address a name has, IPv6 and IPv4.

use std::net::SocketAddr;

use crate::engine::Reason;
use crate::target::{Endpoint, Host};

/// All socket addresses of an endpoint, in the order to try them. A name that does not resolve
/// is "not ready", with the name in the reason.
pub async fn resolve(endpoint: &Endpoint) -> Result<Vec<SocketAddr>, Reason> {
    match &endpoint.host {
        Host::Ip(ip) => Ok(vec![SocketAddr::new(*ip, endpoint.port)]),
        Host::Name(name) => {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), endpoint.port))
                .await
                .map_err(|_| format!("no such host {name}"))?
                .collect();
            if addrs.is_empty() {
                return Err(format!("no such host {name}"));
            }
            Ok(addrs)
        }
    }
}
