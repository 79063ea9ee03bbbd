//! Name resolution as in a pod: `/etc/hosts` first, then DNS through the nameservers, `search`
//! list and `ndots` of `/etc/resolv.conf`, asking for AAAA and A. Both files are read at every
//! lookup, so a change is seen at the next attempt; DNS answers are kept for their TTL, within
//! caps ([`cache`]), so a waiter asks the cluster's DNS once per TTL, not once per attempt.
//! A small stub resolver of our own (the wire format is `hickory-proto`'s), so a static binary
//! in an empty root needs no libc NSS modules.

mod cache;
mod client;
mod conf;
mod etc;
mod hosts;
mod message;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::time::Instant;

use crate::error::Failure;
use crate::target::locality::is_localhost;
use crate::target::{Endpoint, Host};
use cache::CACHE;
use client::{Exchange, Outcome};
use conf::Conf;
use message::{Answer, A, AAAA};

/// All socket addresses of an endpoint, in the order to try them. An IP literal is used as
/// is; a name that does not resolve is "not ready", with the name in the reason.
pub async fn resolve(endpoint: &Endpoint) -> Result<Vec<SocketAddr>, Failure> {
    let ips = match &endpoint.host {
        Host::Ip(ip) => vec![*ip],
        Host::Name(name) => lookup(name).await?,
    };
    Ok(ips
        .into_iter()
        .map(|ip| SocketAddr::new(ip, endpoint.port))
        .collect())
}

/// Every address of `name`: from the hosts file if it lists the name, else from DNS. DNS
/// trouble ends the lookup at the attempt's end, with the trouble as the reason.
pub async fn lookup(name: &str) -> Result<Vec<IpAddr>, Failure> {
    let mut listed = hosts::lookup(&etc::read(hosts::PATH), name);
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
    let conf = Conf::parse(&etc::read(conf::PATH));
    tracing::debug!("resolving {name} through DNS");
    let mut exchange = Exchange::new(&conf, crate::engine::attempt_end());
    let mut trouble = None;
    for candidate in conf.candidates(name) {
        if exchange.out_of_time() {
            trouble.get_or_insert_with(|| format!("no answer for {candidate} in time"));
            break;
        }
        let outcomes = answers(&mut exchange, &candidate).await;
        let mut found = Vec::new();
        for outcome in &outcomes {
            if let Some(Ok(Answer::Addresses(ips, _))) = outcome {
                found.extend_from_slice(ips);
            }
        }
        if !found.is_empty() {
            return Ok(found);
        }
        // As glibc: a server in trouble does not stop the search, but is the reason at the end.
        if let Some(Err(reason)) = outcomes.into_iter().flatten().find(Result::is_err) {
            trouble.get_or_insert(reason);
        }
    }
    Err(match trouble {
        None => Failure::Dns(format!("no such host {name}")),
        Some(reason) => Failure::Dns(format!("cannot resolve {name} (DNS: {reason})")),
    })
}

/// AAAA and A of one fully qualified name: what the cache keeps, the rest asked together (and
/// then kept, as long as each answer's TTL allows).
async fn answers(exchange: &mut Exchange<'_>, name: &str) -> [Outcome; 2] {
    const TYPES: [message::RecordType; 2] = [AAAA, A];
    let mut outcomes: [Outcome; 2] = {
        let mut cache = CACHE.lock().expect("DNS cache lock");
        let now = Instant::now();
        TYPES.map(|qtype| cache.get(name, qtype, now).map(Ok))
    };
    let missing: Vec<usize> = (0..TYPES.len())
        .filter(|&slot| outcomes[slot].is_none())
        .collect();
    if missing.is_empty() {
        return outcomes;
    }
    let hurry = outcomes
        .iter()
        .any(|outcome| matches!(outcome, Some(Ok(Answer::Addresses(..)))));
    let qtypes: Vec<_> = missing.iter().map(|&slot| TYPES[slot]).collect();
    let asked = exchange.ask(name, &qtypes, hurry).await;
    let mut cache = CACHE.lock().expect("DNS cache lock");
    let now = Instant::now();
    for (slot, outcome) in missing.into_iter().zip(asked) {
        if let Some(Ok(answer)) = &outcome {
            cache.put(name, TYPES[slot], answer, now);
        }
        outcomes[slot] = outcome;
    }
    outcomes
}
