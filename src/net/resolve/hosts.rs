//! `/etc/hosts`, read the way glibc's and musl's "files" source reads it: consulted before DNS,
//! every address listed for the name, in file order.

use std::net::IpAddr;

/// Every address `text` (a hosts file) gives `name`; names compare without case and without a
/// trailing dot.
pub fn lookup(text: &str, name: &str) -> Vec<IpAddr> {
    fn bare(name: &str) -> &str {
        name.strip_suffix('.').unwrap_or(name)
    }
    let name = bare(name);
    let mut found = Vec::new();
    for line in text.lines() {
        let mut fields = line
            .split('#')
            .next()
            .unwrap_or_default()
            .split_whitespace();
        // An IPv6 zone (`fe80::1%eth0`) is dropped: an `IpAddr` cannot keep it.
        let ip = fields
            .next()
            .and_then(|f| f.split('%').next()?.parse().ok());
        if let Some(ip) = ip.filter(|ip| !found.contains(ip)) {
            if fields.any(|alias| bare(alias).eq_ignore_ascii_case(name)) {
                found.push(ip);
            }
        }
    }
    found
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

    #[test]
    fn every_address_in_file_order_without_duplicates() {
        let cases: [(&str, &[&str]); 8] = [
            ("localhost", &["127.0.0.1", "::1"]),
            ("web-0", &["10.1.2.3"]),
            ("web-0.web.default.svc.cluster.local", &["10.1.2.3"]),
            // Case and trailing dots do not matter.
            ("other.example", &["10.9.9.9"]),
            ("LOCALHOST.", &["127.0.0.1", "::1"]),
            // Comments and bad lines are skipped.
            ("the", &[]),
            ("somename", &[]),
            ("comment", &[]),
        ];
        for (name, ips) in cases {
            let ips: Vec<IpAddr> = ips.iter().map(|ip| ip.parse().unwrap()).collect();
            assert_eq!(lookup(HOSTS, name), ips, "{name}");
        }
        assert!(lookup("", "localhost").is_empty());
    }
}
