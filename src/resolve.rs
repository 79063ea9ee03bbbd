//! Name resolution as in a pod, afresh on every attempt: `/etc/hosts` first, then DNS through
//! the nameservers, `search` list and `ndots` of `/etc/resolv.conf`, asking for AAAA and A.
//! Pure Rust (hickory), so a static binary in an empty root needs no libc NSS modules.

mod hosts;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use hickory_resolver::config::{
    LookupIpStrategy, NameServerConfigGroup, ResolveHosts, ResolverConfig, ResolverOpts,
};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::ProtoErrorKind;
use hickory_resolver::{Name, ResolveError, TokioResolver};

use crate::engine::Reason;
use crate::target::{Endpoint, Host};

/// Where the DNS settings are.
const RESOLV_CONF: &str = "/etc/resolv.conf";

/// The process's resolver: made on the first name lookup, so IP literals never set one up.
static RESOLVER: OnceLock<Resolver> = OnceLock::new();

/// All socket addresses of an endpoint, in the order to try them. An IP literal is used as
/// is; a name that does not resolve is "not ready", with the name in the reason.
pub async fn resolve(endpoint: &Endpoint) -> Result<Vec<SocketAddr>, Reason> {
    let ips = match &endpoint.host {
        Host::Ip(ip) => vec![*ip],
        Host::Name(name) => RESOLVER.get_or_init(Resolver::default).lookup(name).await?,
    };
    Ok(ips
        .into_iter()
        .map(|ip| SocketAddr::new(ip, endpoint.port))
        .collect())
}

/// The name resolver. It re-reads `/etc/hosts` and
/// `/etc/resolv.conf` on every lookup and caches no answer, so a Service created while we wait
/// is seen on the next attempt.
#[derive(Debug, Default)]
pub struct Resolver {
    /// The DNS client, with the `resolv.conf` text it was built from.
    dns: Mutex<Option<(String, TokioResolver)>>,
}

impl Resolver {
    /// Every address of `name`: from the hosts file if it lists the name, else from DNS.
    pub async fn lookup(&self, name: &str) -> Result<Vec<IpAddr>, Reason> {
        let hosts_text = std::fs::read_to_string(hosts::PATH).unwrap_or_default();
        let mut listed = hosts::lookup(&hosts_text, name);
        if is_localhost(name) {
            // RFC 6761: both loopbacks, even where the hosts file names one or none, so a
            // server on either `::1` or `127.0.0.1` is found.
            for loopback in [Ipv6Addr::LOCALHOST.into(), Ipv4Addr::LOCALHOST.into()] {
                if !listed.contains(&loopback) {
                    listed.push(loopback);
                }
            }
        }
        if !listed.is_empty() {
            return Ok(listed);
        }
        tracing::debug!("resolving {name} through DNS");
        let mut ips: Vec<IpAddr> = self
            .dns()
            .lookup_ip(name)
            .await
            .map_err(|err| describe(name, &err))?
            .iter()
            .collect();
        if ips.is_empty() {
            return Err(format!("no such host {name}"));
        }
        // A and AAAA answers arrive in either order; IPv6 first, as RFC 6724 prefers, with
        // the staggered connect in `transport` covering an IPv6 path that goes nowhere.
        ips.sort_by_key(IpAddr::is_ipv4);
        Ok(ips)
    }

    /// The DNS client for the current `resolv.conf`, rebuilt only when its text changed.
    fn dns(&self) -> TokioResolver {
        let text = std::fs::read_to_string(RESOLV_CONF).unwrap_or_default();
        let mut dns = self
            .dns
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match &*dns {
            Some((built_from, resolver)) if *built_from == text => resolver.clone(),
            _ => {
                let (config, options) = settings(&text);
                let mut builder =
                    TokioResolver::builder_with_config(config, TokioConnectionProvider::default());
                *builder.options_mut() = options;
                let resolver = builder.build();
                *dns = Some((text, resolver.clone()));
                resolver
            }
        }
    }
}

/// `localhost` and names under it (RFC 6761, section 6.3).
fn is_localhost(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    name.eq_ignore_ascii_case("localhost") || name.to_ascii_lowercase().ends_with(".localhost")
}

/// What `resolv.conf` says, read leniently and bounded as glibc does: no nameserver means the
/// local one; `ndots` at most 15, `timeout` 1-30 s, `attempts` 1-5.
fn settings(text: &str) -> (ResolverConfig, ResolverOpts) {
    let (conf, _ignored_lines) = resolv_conf::Config::parse_with_errors(text.as_bytes());
    let mut servers: Vec<IpAddr> = conf.nameservers.iter().map(IpAddr::from).collect();
    if servers.is_empty() {
        servers.push(Ipv4Addr::LOCALHOST.into());
    }
    let search = conf
        .get_last_search_or_domain()
        .filter(|domain| *domain != "--")
        .filter_map(|domain| Name::from_str_relaxed(domain).ok())
        .collect();
    let config = ResolverConfig::from_parts(
        None,
        search,
        NameServerConfigGroup::from_ips_clear(&servers, 53, false),
    );
    let mut options = ResolverOpts::default();
    options.ndots = conf.ndots.min(15) as usize;
    options.timeout = Duration::from_secs(conf.timeout.clamp(1, 30).into());
    options.attempts = conf.attempts.clamp(1, 5) as usize;
    options.edns0 = conf.edns0;
    options.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
    // The hosts file is read by `Resolver::lookup` itself, before DNS, as glibc does.
    options.use_hosts_file = ResolveHosts::Never;
    // No answer is kept: every attempt asks again.
    options.cache_size = 0;
    options.positive_max_ttl = Some(Duration::ZERO);
    options.negative_max_ttl = Some(Duration::ZERO);
    (config, options)
}

/// A failed lookup in words: always "no such host NAME", with the cause unless it is simply
/// that the name (with every search suffix) does not exist.
fn describe(name: &str, err: &ResolveError) -> Reason {
    if err.is_no_records_found() {
        return format!("no such host {name}");
    }
    match err.proto().map(|proto| proto.kind()) {
        Some(ProtoErrorKind::Timeout) => format!("no such host {name}: DNS server timed out"),
        Some(ProtoErrorKind::Io(io)) => format!(
            "no such host {name}: DNS server: {}",
            crate::transport::describe_io(io)
        ),
        _ => format!("no such host {name}: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_resolv_conf_is_read_as_glibc_does() {
        let (config, options) = settings(
            "nameserver 10.96.0.10\n\
             search default.svc.cluster.local svc.cluster.local cluster.local\n\
             options ndots:5 timeout:2 attempts:3\n",
        );
        let search: Vec<String> = config.search().iter().map(|n| n.to_string()).collect();
        assert_eq!(
            search,
            [
                "default.svc.cluster.local",
                "svc.cluster.local",
                "cluster.local"
            ]
        );
        assert_eq!(options.ndots, 5);
        assert_eq!(options.timeout, Duration::from_secs(2));
        assert_eq!(options.attempts, 3);
        let servers: Vec<SocketAddr> = config
            .name_servers()
            .iter()
            .map(|s| s.socket_addr)
            .collect();
        assert!(servers.contains(&"10.96.0.10:53".parse().unwrap()));
        assert_eq!(options.cache_size, 0);
    }

    #[test]
    fn empty_or_odd_resolv_conf_falls_back_to_the_local_server() {
        let (config, options) = settings("options ndots:99 timeout:0 bogus\nnonsense line\n");
        assert_eq!(
            config.name_servers()[0].socket_addr,
            "127.0.0.1:53".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(options.ndots, 15);
        assert_eq!(options.timeout, Duration::from_secs(1));
        assert!(config.search().is_empty());
    }

    #[test]
    fn localhost_names() {
        assert!(is_localhost("localhost"));
        assert!(is_localhost("LocalHost."));
        assert!(is_localhost("app.localhost"));
        assert!(!is_localhost("localhost.example"));
        assert!(!is_localhost("notlocalhost"));
    }
}
