//! Name resolution as in a pod: `/etc/hosts` first, then DNS through the nameservers, `search`
//! list and `ndots` of `/etc/resolv.conf`, asking for AAAA and A. Both files are read at every
//! lookup, so a change is seen at the next attempt; DNS answers are kept for their TTL
//! ([`cache`]) by the run's [`Resolver`]. A stub resolver of our own (on `hickory-proto`'s wire format), so a static
//! binary in an empty root needs no libc NSS modules.

mod cache;
mod client;
mod conf;
mod hosts;
mod message;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::sync::Mutex;

use tokio::time::Instant;

use super::endpoint::is_localhost;
use crate::error::{describe_io, Failure};
use crate::runtime::Attempt;
use cache::Cache;
use client::{Lookup, Rotation};
use conf::Conf;
use message::Answer;

/// The most of `/etc/hosts` or `/etc/resolv.conf` that is read; real ones are a few kilobytes.
const MAX_SIZE: u64 = 4 << 20;

/// What one run's lookups remember between them: DNS answers for their TTL, and the nameserver
/// to ask first once one has failed to answer. Owned by the run, handed to every connect.
#[derive(Debug, Default)]
pub struct Resolver {
    cache: Mutex<Cache>,
    rotation: Rotation,
}

impl Resolver {
    /// Every address of `name`, in the order to try them: from the hosts file if it lists the
    /// name, else from DNS. A name that does not resolve is "not ready", named in the reason;
    /// DNS trouble ends the lookup at the end of `at`, with the trouble as the reason.
    pub async fn lookup(&self, name: &str, at: &Attempt) -> Result<Vec<IpAddr>, Failure> {
        let mut listed = hosts::lookup(&read("/etc/hosts"), name);
        if is_localhost(name) {
            // RFC 6761: both loopbacks, even where the hosts file names one or none.
            for loopback in [Ipv6Addr::LOCALHOST.into(), Ipv4Addr::LOCALHOST.into()] {
                if !listed.contains(&loopback) {
                    listed.push(loopback);
                }
            }
        }
        if !listed.is_empty() {
            return Ok(listed);
        }
        let conf = Conf::parse(&read("/etc/resolv.conf"));
        tracing::debug!("resolving {name} through DNS");
        let (end, sockets) = (at.end(), Vec::new());
        let (cache, rotation) = (&self.cache, &self.rotation);
        let mut lookup = Lookup {
            conf,
            end,
            sockets,
            cache,
            rotation,
        };
        let mut trouble = None;
        for candidate in lookup.conf.candidates(name) {
            if end.is_some_and(|end| end <= Instant::now()) {
                trouble.get_or_insert_with(|| format!("no answer for {candidate} in time"));
                break;
            }
            let mut found = Vec::new();
            // As glibc: a server in trouble does not stop the search, but is the reason at the end.
            for outcome in lookup.ask(&candidate).await.into_iter().flatten() {
                match outcome {
                    Ok(Answer::Addresses(ips, _)) => found.extend(ips),
                    Err(reason) => trouble = trouble.or(Some(reason)),
                    Ok(_) => {}
                }
            }
            if !found.is_empty() {
                return Ok(found);
            }
        }
        Err(Failure::Text(match trouble {
            None => format!("no such host {name}"),
            Some(reason) => format!("cannot resolve {name} (DNS: {reason})"),
        }))
    }
}

/// The text of a file such as `/etc/hosts`, empty when it is missing, not a regular file or
/// unreadable (as a C library treats a missing one), and cut at [`MAX_SIZE`].
fn read(path: &str) -> String {
    match crate::regular_file::read_head(Path::new(path), MAX_SIZE) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            tracing::debug!("not reading {path}: {}", describe_io(&e));
            String::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_empty_and_a_big_one_cut() {
        let dir = std::env::temp_dir().join(format!("readygate-etc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
        std::fs::write(path("hosts"), "127.0.0.1 localhost\n").unwrap();
        assert_eq!(read(&path("hosts")), "127.0.0.1 localhost\n");
        assert_eq!(read(&path("missing")), "");
        let line = "10.0.0.1 name\n";
        let copies = (MAX_SIZE as usize) / line.len() + 100;
        std::fs::write(path("big"), line.repeat(copies)).unwrap();
        assert_eq!(read(&path("big")).len() as u64, MAX_SIZE);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
