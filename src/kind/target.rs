//! TARGET strings become typed [`Target`]s here, once; no other module reads a target string.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::path::PathBuf;

use hyper::Uri;

use crate::redact::quoted;

use super::k8s::target as k8s;
use super::service;

pub use super::service::{AmqpTarget, PostgresTarget, RedisTarget};

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

/// An `http://` or `https://` URL, split into what a request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// `https://`: speak TLS, verify the server name.
    pub tls: bool,
    /// Where to connect (unless `--unix-socket` says otherwise).
    pub endpoint: Endpoint,
    /// `host[:port]` as written in the URL, without credentials: the `Host` header and TLS name.
    pub authority: String,
    /// Path and query, at least `/`.
    pub path: String,
    /// `user:password` from the URL, percent-decoded (`p%40ss` is `p@ss`), sent as basic
    /// authentication and never printed.
    pub credentials: Option<Vec<u8>>,
}

/// A `grpc://` or `grpcs://` health-check target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcTarget {
    /// `grpcs://`: TLS with ALPN h2.
    pub tls: bool,
    pub endpoint: Endpoint,
    /// `host:port` as written: the `:authority` and TLS name.
    pub authority: String,
    /// The service asked about; empty means the whole server.
    pub service: String,
}

/// What kind of condition a target is, with everything needed to check it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Ready when a TCP connection is established.
    Tcp(Endpoint),
    /// Ready when an HTTP(S) response has an accepted status (and body).
    Http(HttpTarget),
    /// Ready when the path exists (and its content matches).
    File(PathBuf),
    /// Ready when a stream connection to the Unix socket succeeds.
    Unix(PathBuf),
    /// Ready when the gRPC health service answers `SERVING`.
    Grpc(GrpcTarget),
    /// Ready when the StartupMessage gets an authentication request (or an error but 57P03).
    Postgres(PostgresTarget),
    /// Ready when `PING` gets `+PONG`.
    Redis(RedisTarget),
    /// Ready when the server greets with a HandshakeV10.
    Mysql(Endpoint),
    /// Ready when the protocol header gets Connection.Start.
    Amqp(AmqpTarget),
    /// Ready when `version` gets `VERSION`.
    Memcached(Endpoint),
    /// Ready when the server's `INFO` is not in lame-duck mode.
    Nats(Endpoint),
    /// Ready when `srvr` gets a `Mode:`.
    Zookeeper(Endpoint),
    /// Ready when the name resolves.
    Dns(String),
    /// Ready when the Kubernetes object is (a Job complete, a pod ready…).
    K8s(k8s::K8sTarget),
}

/// One parsed target: its kind, and how to name it in output (credentials hidden).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: Kind,
    /// The target as the user wrote it, with any URL password replaced by `***`.
    display: String,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display)
    }
}

impl Target {
    /// Parses one TARGET of the contract; the error is the one-line usage message.
    pub fn parse(text: &str) -> Result<Target, String> {
        let kind = parse_kind(text).map_err(|reason| {
            let reason = misreading(text).unwrap_or(reason);
            format!(
                "invalid target {}: {}",
                quoted(&redact_userinfo(text)),
                crate::redact::secret_pieces_hidden(text, &reason)
            )
        })?;
        let display = redact_userinfo(text);
        Ok(Target { kind, display })
    }
}

/// The separator of a text that fails as one target but holds several, each valid: `a:1,b:2`
/// (commas) or `a:1 b:2` (white space).
pub fn list_separator(text: &str) -> Option<&'static str> {
    let commas = text
        .split(',')
        .map(str::trim)
        .filter(|piece| !piece.is_empty());
    if all_targets(commas) {
        return Some("commas");
    }
    all_targets(text.split_whitespace()).then_some("white space")
}

/// Whether there are at least two pieces and each is a valid target.
fn all_targets<'a>(pieces: impl Iterator<Item = &'a str>) -> bool {
    let mut count = 0;
    for piece in pieces {
        if parse_kind(piece).is_err() {
            return false;
        }
        count += 1;
    }
    count >= 2
}

/// What is wrong with a target that does not parse, when its error would mislead (an IPv6 hint
/// for `https:/host`): several targets in one argument, or a URL whose scheme lacks `//`.
fn misreading(text: &str) -> Option<String> {
    if let Some(separator) = list_separator(text) {
        return Some(format!(
            "several targets separated by {separator}: give each as an argument of its own"
        ));
    }
    let (scheme, rest) = text.split_once(':')?;
    let known = SCHEMES.contains(&scheme.to_ascii_lowercase().as_str());
    // `redis:6379` is the host `redis`, port 6379: only a rest that is not a port misleads.
    let port = !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    (known && !port && !rest.starts_with("//")).then(|| {
        let fixed = format!("{scheme}://{}", rest.trim_start_matches('/'));
        format!(
            "a URL needs \"//\" after {}: {}",
            quoted(&format!("{scheme}:")),
            quoted(&redact_userinfo(&fixed))
        )
    })
}

/// Every scheme a target may have.
const SCHEMES: &[&str] = &[
    "tcp",
    "http",
    "https",
    "file",
    "unix",
    "grpc",
    "grpcs",
    "k8s",
    "postgres",
    "postgresql",
    "redis",
    "rediss",
    "mysql",
    "mariadb",
    "amqp",
    "amqps",
    "memcached",
    "nats",
    "zk",
    "dns",
];

fn parse_kind(text: &str) -> Result<Kind, String> {
    if text.is_empty() {
        return Err("empty".into());
    }
    if text.chars().any(char::is_control) {
        return Err("contains control characters".into());
    }
    let Some((written, rest)) = text.split_once("://") else {
        return Ok(match text.starts_with('/') || text.starts_with("./") {
            true => Kind::File(PathBuf::from(text)),
            false => Kind::Tcp(endpoint(text, None)?),
        });
    };
    let scheme = written.to_ascii_lowercase();
    use service::Ignored::{DatabaseUrl, Userinfo};
    Ok(match scheme.as_str() {
        "tcp" => Kind::Tcp(endpoint(rest.strip_suffix('/').unwrap_or(rest), None)?),
        "http" | "https" => Kind::Http(parse_http(text, scheme == "https")?),
        "file" => Kind::File(parse_file_url(rest)?),
        "unix" => Kind::Unix(parse_file_url(rest)?),
        "grpc" | "grpcs" => Kind::Grpc(parse_grpc(rest, scheme == "grpcs")?),
        "k8s" => Kind::K8s(k8s::parse(rest)?),
        "postgres" | "postgresql" => service::postgres(rest)?,
        "redis" | "rediss" => service::redis(&scheme, rest)?,
        "mysql" | "mariadb" => Kind::Mysql(service::plain(&scheme, rest, 3306, DatabaseUrl)?),
        "amqp" | "amqps" => {
            let tls = scheme == "amqps";
            let port = if tls { 5671 } else { 5672 };
            let endpoint = service::plain(&scheme, rest, port, DatabaseUrl)?;
            Kind::Amqp(AmqpTarget { tls, endpoint })
        }
        "memcached" => Kind::Memcached(service::plain(&scheme, rest, 11211, Userinfo)?),
        "nats" => Kind::Nats(service::plain(&scheme, rest, 4222, Userinfo)?),
        "zk" => Kind::Zookeeper(service::plain(&scheme, rest, 2181, Userinfo)?),
        "dns" => service::dns(rest)?,
        _ => {
            return Err(format!(
                "unknown scheme {} (expected tcp, http, https, file, unix, grpc, grpcs, k8s, \
                 postgres, redis, rediss, mysql, amqp, amqps, memcached, nats, zk, dns)",
                quoted(written)
            ))
        }
    })
}

/// `HOST:PORT` or `[V6]:PORT`; with a `default` port, also `HOST` and `[V6]`.
pub(super) fn endpoint(text: &str, default: Option<u16>) -> Result<Endpoint, String> {
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
            (Some((host, port)), _) => (parse_host(host)?, parse_port(port)?),
            (None, Some(default)) => (parse_host(text)?, default),
            (None, None) => return Err("missing port (expected HOST:PORT)".into()),
        }
    };
    Ok(Endpoint { host, port })
}

fn parse_port(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        _ if text.is_empty() => Err("missing port".into()),
        Ok(0) => Err("port 0 is not a port one can connect to".into()),
        Ok(port) if text.bytes().all(|b| b.is_ascii_digit()) => Ok(port),
        _ => Err(format!("invalid port {} (expected 1-65535)", quoted(text))),
    }
}

pub(super) fn parse_host(text: &str) -> Result<Host, String> {
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

/// Letters, digits, `_` and inner `-`, at most 63.
fn valid_label(label: &str) -> bool {
    (1..=63).contains(&label.len())
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

fn parse_http(text: &str, tls: bool) -> Result<HttpTarget, String> {
    let uri: Uri = text.parse().map_err(|e| format!("invalid URL: {e}"))?;
    let authority = uri.authority().ok_or("missing host")?.as_str();
    let (credentials, written) = match authority.rsplit_once('@') {
        Some((userinfo, written)) => (Some(crate::percent::decode(userinfo.as_bytes())), written),
        None => (None, authority),
    };
    let path = match uri.path_and_query().map_or("", |p| p.as_str()) {
        "" => "/".to_string(),
        path if path.starts_with('/') => path.to_string(),
        path => format!("/{path}"),
    };
    Ok(HttpTarget {
        tls,
        endpoint: endpoint(written, Some(if tls { 443 } else { 80 }))?,
        authority: written.to_string(),
        path,
        credentials,
    })
}

fn parse_grpc(rest: &str, tls: bool) -> Result<GrpcTarget, String> {
    let (authority, service) = rest.split_once('/').unwrap_or((rest, ""));
    if service.contains('/') {
        return Err("a gRPC service name has no '/'".into());
    }
    Ok(GrpcTarget {
        tls,
        endpoint: endpoint(authority, None)?,
        authority: authority.to_string(),
        service: service.to_string(),
    })
}

/// The path of a `file:///ABS` or `unix:///ABS` URL (`rest` is what follows `://`).
fn parse_file_url(rest: &str) -> Result<PathBuf, String> {
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return Err("expected an absolute path after ://, as in file:///tmp/ready".into());
    }
    if path.len() == 1 {
        return Err("missing path".into());
    }
    Ok(PathBuf::from(path))
}

/// Replaces a URL password (`user:secret@`) by `***` so the text can be shown.
pub fn redact_userinfo(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let Some(at) = authority.rfind('@') else {
        return text.to_string();
    };
    let shown = match authority[..at].split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => "***".to_string(),
    };
    format!("{scheme}://{shown}{}", &rest[at..])
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The kind of target `text` is, as parsed; for the tests of `kind/` too.
    pub(in crate::kind) fn kind(text: &str) -> Kind {
        Target::parse(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .kind
    }

    /// `host` (an address literal or a name) at `port`; for the tests of `kind/` too.
    pub(in crate::kind) fn at(host: &str, port: u16) -> Endpoint {
        let host = host
            .parse()
            .map_or_else(|_| Host::Name(host.into()), Host::Ip);
        Endpoint { host, port }
    }

    #[test]
    fn tcp_http_file_unix_and_grpc_forms() {
        let http = |tls, endpoint, authority: &str, path: &str| {
            let (authority, path) = (authority.into(), path.into());
            let credentials = None;
            Kind::Http(HttpTarget {
                tls,
                endpoint,
                authority,
                path,
                credentials,
            })
        };
        let grpc = |tls, endpoint, authority: &str, service: &str| {
            let (authority, service) = (authority.into(), service.into());
            Kind::Grpc(GrpcTarget {
                tls,
                endpoint,
                authority,
                service,
            })
        };
        let cases = [
            ("tcp://db:5432", Kind::Tcp(at("db", 5432))),
            ("db.default.svc:5432", Kind::Tcp(at("db.default.svc", 5432))),
            ("127.0.0.1:80", Kind::Tcp(at("127.0.0.1", 80))),
            ("[::1]:80", Kind::Tcp(at("::1", 80))),
            ("tcp://[::1]:80", Kind::Tcp(at("::1", 80))),
            ("LOCALHOST:1", Kind::Tcp(at("localhost", 1))),
            (
                "http://127.0.0.1:8080/ready?full=1",
                http(
                    false,
                    at("127.0.0.1", 8080),
                    "127.0.0.1:8080",
                    "/ready?full=1",
                ),
            ),
            (
                "https://example.test",
                http(true, at("example.test", 443), "example.test", "/"),
            ),
            ("http://[::1]/", http(false, at("::1", 80), "[::1]", "/")),
            ("file:///tmp/ready", Kind::File("/tmp/ready".into())),
            ("/tmp/ready", Kind::File("/tmp/ready".into())),
            ("./ready", Kind::File("./ready".into())),
            ("unix:///run/app.sock", Kind::Unix("/run/app.sock".into())),
            (
                "grpc://127.0.0.1:2379/etcd",
                grpc(false, at("127.0.0.1", 2379), "127.0.0.1:2379", "etcd"),
            ),
            ("grpcs://svc:443", grpc(true, at("svc", 443), "svc:443", "")),
        ];
        for (text, expected) in cases {
            assert_eq!(kind(text), expected, "{text}");
        }
    }

    #[test]
    fn credentials_are_kept_but_never_shown() {
        let target = Target::parse("http://admin:hunter2@127.0.0.1:81/x").unwrap();
        let Kind::Http(http) = &target.kind else {
            panic!()
        };
        assert_eq!(http.credentials.as_deref(), Some(&b"admin:hunter2"[..]));
        assert_eq!(http.authority, "127.0.0.1:81");
        assert_eq!(target.to_string(), "http://admin:***@127.0.0.1:81/x");
        let Kind::Http(http) = kind("http://user:p%40ss%3Aw@h/") else {
            panic!()
        };
        assert_eq!(http.credentials.as_deref(), Some(&b"user:p@ss:w"[..]));
        let err = Target::parse("http://admin:hunter2@127.0.0.1:0/x").unwrap_err();
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn usage_errors_name_the_fault() {
        let cases = [
            ("tcp://:80", "missing host"),
            ("localhost", "missing port"),
            ("localhost:0", "port 0"),
            ("localhost:65536", "invalid port"),
            ("localhost:http", "invalid port"),
            ("::1:80", "brackets"),
            ("[::1:80", "unclosed"),
            ("[zz]:80", "invalid IPv6 address \"zz\""),
            ("ftp://x:1", "unknown scheme"),
            ("file://relative", "absolute path"),
            ("http://", "invalid URL"),
            ("http://host:99999/", "invalid port"),
            ("http://[127.0.0.1]/", "invalid IPv6 address"),
            ("bad host:80", "invalid host name"),
            ("a..b.:80", "invalid host name \"a..b.\""),
            ("", "empty"),
            ("a\nb:1", "control characters"),
            ("grpc://h:1/a/b", "no '/'"),
            ("postgres://db#frag", "no query or fragment"),
            ("postgres://@db", "empty user"),
            ("postgres://:5432", "missing host"),
            ("postgres://%zz@db", "percent-encoding in the user"),
            ("redis://secret@cache", ":PASSWORD"),
            ("redis://user:@cache", "empty password"),
            ("redis://cache/x", "database number"),
            ("redis://cache:99999", "invalid port"),
            ("mysql://root:x@db/app#frag", "no query or fragment"),
            ("memcached://u:secret@cache/x", "no path"),
            ("nats://u:secret@nats?x=1", "no query"),
            ("nats://::1", "brackets"),
            ("zk://[::1", "unclosed"),
            ("zk://[::1]x", ":PORT"),
            ("memcached://", "missing host"),
            ("dns://10.0.0.1", "not an address"),
            ("dns://", "missing host"),
            ("mongodb://db", "unknown scheme"),
            ("k8s://job", "missing job name"),
            ("k8s:///x", "missing kind"),
            ("k8s://pods/x?selector=a", "takes no name"),
            ("k8s://job/x?selector=a", "for k8s://pods only"),
            ("k8s://job/X", "invalid object name"),
            ("k8s://job/a/b", "invalid object name"),
            ("k8s://job/x?namespace=", "invalid namespace"),
            ("k8s://job/x?namespace=a.b", "invalid namespace"),
            ("k8s://job/x?ns=a", "unknown parameter \"ns\""),
            ("k8s://job/x?namespace=a&namespace=b", "given twice"),
            ("k8s://job/x?namespace=%zz", "invalid %-escape"),
            ("k8s://job/x#frag", "fragment"),
            ("k8s://pods?selector=a b", "invalid label selector"),
        ];
        for (text, fault) in cases {
            let err = Target::parse(text).unwrap_err();
            assert!(err.starts_with("invalid target \""), "{text}: {err}");
            assert!(err.contains(fault), "{text}: {err} should mention {fault}");
            assert!(!err.contains('\n'), "{text}: {err}");
            assert!(!err.contains("secret"), "{text}: {err}");
        }
    }

    #[test]
    fn redaction_of_userinfo() {
        assert_eq!(redact_userinfo("http://u:p@h/x@y"), "http://u:***@h/x@y");
        assert_eq!(redact_userinfo("http://token@h/"), "http://***@h/");
        assert_eq!(redact_userinfo("http://h/a@b"), "http://h/a@b");
        assert_eq!(redact_userinfo("h:1"), "h:1");
    }
}
