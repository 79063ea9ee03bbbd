//! Name resolution as in a pod, afresh on every attempt: `/etc/hosts` first, then DNS through
//! the nameservers, `search` list and `ndots` of `/etc/resolv.conf`, asking for AAAA and A.
//! A small stub resolver of our own (the wire format is `hickory-proto`'s), so a static
//! binary in an empty root needs no libc NSS modules, and nothing is cached between attempts.

mod client;
mod conf;
mod hosts;
mod message;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use tokio::time::timeout;

use crate::engine::Reason;
use crate::target::{Endpoint, Host};
use conf::Conf;
use message::Answer;

/// How long the other family's answer is awaited once one family has addresses (RFC 8305's
/// "resolution delay"), so a server that drops AAAA queries does not hold up an IPv4 answer.
const RESOLUTION_DELAY: Duration = Duration::from_millis(50);

/// All socket addresses of an endpoint, in the order to try them. An IP literal is used as
/// is; a name that does not resolve is "not ready", with the name in the reason.
pub async fn resolve(endpoint: &Endpoint) -> Result<Vec<SocketAddr>, Reason> {
    let ips = match &endpoint.host {
        Host::Ip(ip) => vec![*ip],
        Host::Name(name) => lookup(name).await?,
    };
    Ok(ips
        .into_iter()
        .map(|ip| SocketAddr::new(ip, endpoint.port))
        .collect())
}

/// Every address of `name`: from the hosts file if it lists the name, else from DNS. Both
/// files are read on every call, so a change is seen at the next attempt.
pub async fn lookup(name: &str) -> Result<Vec<IpAddr>, Reason> {
    let hosts_text = std::fs::read_to_string(hosts::PATH).unwrap_or_default();
    let mut listed = hosts::lookup(&hosts_text, name);
    if is_localhost(name) {
        // RFC 6761: both loopbacks, even where the hosts file names one or none, so a server
        // on either `::1` or `127.0.0.1` is found.
        for loopback in [Ipv6Addr::LOCALHOST.into(), Ipv4Addr::LOCALHOST.into()] {
            if !listed.contains(&loopback) {
                listed.push(loopback);
            }
        }
    }
    if !listed.is_empty() {
        return Ok(listed);
    }
    let conf = Conf::parse(&std::fs::read_to_string(conf::PATH).unwrap_or_default());
    tracing::debug!("resolving {name} through DNS");
    let mut trouble = None;
    for candidate in conf.candidates(name) {
        let (v6, v4) = ask_both(&conf, &candidate).await;
        let mut found = Vec::new();
        for answer in [&v6, &v4] {
            if let Some(Ok(Answer::Addresses(ips))) = answer {
                found.extend_from_slice(ips);
            }
        }
        if !found.is_empty() {
            return Ok(found);
        }
        // As glibc: a server in trouble does not stop the search, but is the reason at the end.
        if let Some(Err(reason)) = [v6, v4].into_iter().flatten().find(Result::is_err) {
            trouble.get_or_insert(reason);
        }
    }
    Err(match trouble {
        None => format!("no such host {name}"),
        Some(reason) => format!("no such host {name} (DNS: {reason})"),
    })
}

/// AAAA and A for one name, asked at once: both answers, except that once one family has
/// addresses the other gets only [`RESOLUTION_DELAY`] more (`None` if it took longer).
async fn ask_both(
    conf: &Conf,
    name: &str,
) -> (
    Option<Result<Answer, String>>,
    Option<Result<Answer, String>>,
) {
    let v6 = client::ask(conf, name, message::AAAA);
    let v4 = client::ask(conf, name, message::A);
    tokio::pin!(v6, v4);
    // Cancellation: both arms are plain futures owned here; the loser is awaited below.
    let (v6_first, first) = tokio::select! {
        answer = &mut v6 => (true, answer),
        answer = &mut v4 => (false, answer),
    };
    let other = if v6_first { v4 } else { v6 };
    let second = if matches!(first, Ok(Answer::Addresses(_))) {
        timeout(RESOLUTION_DELAY, other).await.ok()
    } else {
        Some(other.await)
    };
    if v6_first {
        (Some(first), second)
    } else {
        (second, Some(first))
    }
}

/// `localhost` and names under it (RFC 6761, section 6.3).
fn is_localhost(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    name.eq_ignore_ascii_case("localhost") || name.to_ascii_lowercase().ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_names() {
        assert!(is_localhost("localhost"));
        assert!(is_localhost("LocalHost."));
        assert!(is_localhost("app.localhost"));
        assert!(!is_localhost("localhost.example"));
        assert!(!is_localhost("notlocalhost"));
    }
}
