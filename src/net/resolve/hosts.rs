//! `/etc/hosts`, read the way glibc's and musl's "files" source reads it: consulted before DNS,
//! every address listed for the name, in file order.

use std::net::IpAddr;

/// Every address `text` (a hosts file) gives `name`; names compare without case and without a
/// trailing dot.
pub fn lookup(text: &str, name: &str) -> Vec<IpAddr> {
    let name = name.strip_suffix('.').unwrap_or(name);
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default();
        let mut fields = line.split_whitespace();
        let Some(Ok(ip)) = fields.next().map(parse_ip) else {
            continue;
        };
        let listed = fields.any(|alias| {
            alias
                .strip_suffix('.')
                .unwrap_or(alias)
                .eq_ignore_ascii_case(name)
        });
        if listed && !found.contains(&ip) {
            found.push(ip);
        }
    }
    found
}

/// An address field; an IPv6 zone (`fe80::1%eth0`) is dropped, as it cannot be kept in an
/// `IpAddr` and link-local hosts entries are rare.
fn parse_ip(field: &str) -> Result<IpAddr, std::net::AddrParseError> {
    field.split('%').next().unwrap_or(field).parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTS: &str = "\
# a comment line
127.0.0.1\tlocalhost
::1     localhost ip6-localhost ip6-loopback
10.1.2.3 web-0.web.default.svc.cluster.local web-0   # the pod itself
not-an-ip somename
10.9.9.9 Other.Example.
10.1.2.3 web-0
";

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|ip| ip.parse().unwrap()).collect()
    }

    #[test]
    fn every_address_in_file_order_without_duplicates() {
        assert_eq!(lookup(HOSTS, "localhost"), ips(&["127.0.0.1", "::1"]));
        assert_eq!(lookup(HOSTS, "web-0"), ips(&["10.1.2.3"]));
        assert_eq!(
            lookup(HOSTS, "web-0.web.default.svc.cluster.local"),
            ips(&["10.1.2.3"])
        );
    }

    #[test]
    fn case_and_trailing_dots_do_not_matter() {
        assert_eq!(lookup(HOSTS, "other.example"), ips(&["10.9.9.9"]));
        assert_eq!(lookup(HOSTS, "LOCALHOST."), ips(&["127.0.0.1", "::1"]));
    }

    #[test]
    fn comments_and_bad_lines_are_skipped() {
        assert!(lookup(HOSTS, "the").is_empty());
        assert!(lookup(HOSTS, "somename").is_empty());
        assert!(lookup(HOSTS, "comment").is_empty());
        assert!(lookup("", "localhost").is_empty());
    }
}
