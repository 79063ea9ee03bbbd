//! The address a network target names: a host (an address literal or a name) and a port,
//! parsed once from what the user wrote, with the usage errors of the contract.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use crate::text::quoted;

/// A host to connect to: an address literal, or a name resolved afresh on every attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// An IPv4 or IPv6 literal; never resolved.
    Ip(IpAddr),
    /// A DNS name (or `/etc/hosts` entry) such as `localhost` or `db.default.svc`.
    Name(String),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Ip(ip) => ip.fmt(f),
            Host::Name(name) => f.write_str(name),
        }
    }
}

/// A host and port: what every network target connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: Host,
    /// Never 0.
    pub port: u16,
}

impl Endpoint {
    /// `HOST:PORT` or `[V6]:PORT`; with a `default` port, also `HOST` and `[V6]`.
    pub fn parse(text: &str, default: Option<u16>) -> Result<Endpoint, String> {
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (host, after) = rest.split_once(']').ok_or("unclosed '[' in IPv6 address")?;
            // Brackets are for IPv6 literals only, never a name to resolve.
            let ip: Ipv6Addr =
                (host.parse()).map_err(|_| format!("invalid IPv6 address {}", quoted(host)))?;
            let port = match (after.strip_prefix(':'), default) {
                (Some(port), _) => parse_port(port)?,
                (None, Some(default)) if after.is_empty() => default,
                (None, Some(_)) => return Err("expected :PORT after ']'".into()),
                (None, None) => return Err("missing port (expected [IPV6]:PORT)".into()),
            };
            (Host::Ip(ip.into()), port)
        } else {
            match (text.rsplit_once(':'), default) {
                (Some((host, _)), _) if host.contains(':') => {
                    let example = if default.is_some() {
                        "[::1]"
                    } else {
                        "[::1]:80"
                    };
                    return Err(format!("IPv6 addresses need brackets, as in {example}"));
                }
                (Some((host, port)), _) => (Host::parse(host)?, parse_port(port)?),
                (None, Some(default)) => (Host::parse(text)?, default),
                (None, None) => return Err("missing port (expected HOST:PORT)".into()),
            }
        };
        Ok(Endpoint { host, port })
    }
}

fn parse_port(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        _ if text.is_empty() => Err("missing port".into()),
        Ok(0) => Err("port 0 is not a port one can connect to".into()),
        Ok(port) if text.bytes().all(|b| b.is_ascii_digit()) => Ok(port),
        _ => Err(format!("invalid port {} (expected 1-65535)", quoted(text))),
    }
}

impl Host {
    /// An address literal, or a host name (lower-cased) of valid labels.
    pub fn parse(text: &str) -> Result<Host, String> {
        if text.is_empty() {
            return Err("missing host".into());
        }
        if let Ok(ip) = text.parse() {
            return Ok(Host::Ip(ip));
        }
        let labels = text.strip_suffix('.').unwrap_or(text).split('.');
        if text.len() > 253 || !labels.into_iter().all(valid_label) {
            return Err(format!("invalid host name {}", quoted(text)));
        }
        Ok(Host::Name(text.to_ascii_lowercase()))
    }

    /// A loopback literal (127.0.0.0/8, `::1`, also IPv4-mapped) or `localhost` / `*.localhost`:
    /// a target there is polled fast (a loopback connect costs microseconds).
    pub fn is_local(&self) -> bool {
        match self {
            Host::Ip(ip) => ip.to_canonical().is_loopback(),
            Host::Name(name) => is_localhost(name),
        }
    }
}

/// Letters, digits, `_` and inner `-`, at most 63.
fn valid_label(label: &str) -> bool {
    (1..=63).contains(&label.len())
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// `localhost` and names under it (RFC 6761, section 6.3).
pub fn is_localhost(name: &str) -> bool {
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
