//! `/etc/resolv.conf`, read as glibc and musl read it: nameservers, the search list, `ndots`,
//! `timeout` and `attempts`, with their defaults and bounds; lines it does not know are ignored.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

/// At most this many nameservers are used (glibc's `MAXNS`).
const MAX_NAMESERVERS: usize = 3;

/// The DNS settings of one lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conf {
    /// Servers to ask, in order; the local one when the file names none.
    pub nameservers: Vec<IpAddr>,
    /// Suffixes tried for a name with fewer than `ndots` dots (from `search` or `domain`).
    pub search: Vec<String>,
    /// Dots a name needs to be tried as written before the search list.
    pub ndots: usize,
    /// How long to wait for one server's answer.
    pub timeout: Duration,
    /// Rounds over all servers.
    pub attempts: usize,
}

impl Conf {
    /// The settings in `text` (an empty text gives the defaults).
    pub fn parse(text: &str) -> Conf {
        let mut conf = Conf {
            nameservers: Vec::new(),
            search: Vec::new(),
            ndots: 1,
            timeout: Duration::from_secs(5),
            attempts: 2,
        };
        for line in text.lines() {
            let line = line.split(['#', ';']).next().unwrap_or_default();
            let mut words = line.split_whitespace();
            match words.next() {
                Some("nameserver") => {
                    let server = words.next().and_then(|w| w.split('%').next()?.parse().ok());
                    conf.nameservers.extend::<Option<IpAddr>>(server);
                }
                // The last of `search` and `domain` wins.
                Some("search") => conf.search = words.map(suffix).collect(),
                Some("domain") => conf.search = words.take(1).map(suffix).collect(),
                Some("options") => words.for_each(|option| conf.option(option)),
                _ => {}
            }
        }
        conf.search.retain(|domain| !domain.is_empty());
        conf.nameservers.truncate(MAX_NAMESERVERS);
        if conf.nameservers.is_empty() {
            conf.nameservers.push(Ipv4Addr::LOCALHOST.into());
        }
        conf
    }

    /// One `options` word, bounded as glibc bounds it.
    fn option(&mut self, option: &str) {
        let parsed = option
            .split_once(':')
            .map(|(name, value)| (name, value.parse::<u64>()));
        let Some((name, Ok(value))) = parsed else {
            return;
        };
        match name {
            "ndots" => self.ndots = value.min(15) as usize,
            "timeout" => self.timeout = Duration::from_secs(value.clamp(1, 30)),
            "attempts" => self.attempts = value.clamp(1, 5) as usize,
            _ => {}
        }
    }

    /// The fully qualified names to ask for, in order, as glibc's `res_search` does: a name
    /// with a trailing dot only as written; one with at least `ndots` dots as written first,
    /// then with each suffix; any other with each suffix first, then as written.
    pub fn candidates(&self, name: &str) -> Vec<String> {
        if let Some(absolute) = name.strip_suffix('.') {
            return vec![absolute.to_string()];
        }
        let suffixed = self.search.iter().map(|domain| format!("{name}.{domain}"));
        if name.matches('.').count() >= self.ndots {
            std::iter::once(name.to_string()).chain(suffixed).collect()
        } else {
            suffixed.chain(std::iter::once(name.to_string())).collect()
        }
    }
}

/// A search domain without its trailing dot, lower case.
fn suffix(domain: &str) -> String {
    domain.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    const POD: &str = "nameserver 10.96.0.10\n\
                       search default.svc.cluster.local svc.cluster.local cluster.local\n\
                       options ndots:5 timeout:2 attempts:3\n";

    /// The settings of these nameservers and search domains (each separated by spaces), and
    /// `[ndots, timeout in seconds, attempts]`.
    fn settings(servers: &str, search: &str, [ndots, timeout, attempts]: [u64; 3]) -> Conf {
        Conf {
            nameservers: servers.split(' ').map(|ip| ip.parse().unwrap()).collect(),
            search: search.split_whitespace().map(String::from).collect(),
            ndots: ndots as usize,
            timeout: Duration::from_secs(timeout),
            attempts: attempts as usize,
        }
    }

    #[test]
    fn settings_with_their_defaults_and_bounds() {
        let cluster = "default.svc.cluster.local svc.cluster.local cluster.local";
        assert_eq!(Conf::parse(POD), settings("10.96.0.10", cluster, [5, 2, 3]));
        assert_eq!(Conf::parse(""), settings("127.0.0.1", "", [1, 5, 2]));
        let odd = Conf::parse(
            "# comment\nnameserver not-an-ip\nnameserver fe80::1%eth0\n\
             nameserver 1.1.1.1\nnameserver 2.2.2.2\nnameserver 3.3.3.3\n\
             options ndots:99 timeout:0 attempts:9 rotate edns0 ndots:x\nbogus line\n",
        );
        let bounded = settings("fe80::1 1.1.1.1 2.2.2.2", "", [15, 1, 5]);
        assert_eq!(odd, bounded);
        // The last of `search` and `domain` wins.
        let conf = Conf::parse("search a.example b.example\ndomain corp.example.\n");
        assert_eq!(conf.search, ["corp.example"]);
        let conf = Conf::parse("domain corp.example\nsearch A.example. b.example\n");
        assert_eq!(conf.search, ["a.example", "b.example"]);
    }

    #[test]
    fn candidates_follow_ndots_as_glibc() {
        let conf = Conf::parse(POD);
        assert_eq!(
            conf.candidates("web"),
            [
                "web.default.svc.cluster.local",
                "web.svc.cluster.local",
                "web.cluster.local",
                "web"
            ]
        );
        assert_eq!(
            conf.candidates("a.b.c.d.e.f")[0],
            "a.b.c.d.e.f",
            "five dots or more: as written first"
        );
        assert_eq!(conf.candidates("web.default.")[..], ["web.default"]);
        let conf = Conf::parse("search corp.example\n");
        assert_eq!(
            conf.candidates("db.internal"),
            ["db.internal", "db.internal.corp.example"]
        );
        assert_eq!(conf.candidates("db"), ["db.corp.example", "db"]);
    }
}
