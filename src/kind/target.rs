//! TARGET strings become typed [`Target`]s here, once; no other module reads a target string.
//! A URL's scheme picks its kind from [`SCHEMES`](super::SCHEMES), and the kind's own module
//! parses the rest.

use std::fmt;
use std::path::PathBuf;

use super::url_parts::TargetUrl;
use super::{Kind, Reach, SCHEMES};
use crate::text::quoted;

pub use crate::secrets::redact_userinfo;

/// One parsed target: its kind, and how to name it in output (credentials hidden).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: Kind,
    /// The target as the user wrote it, with any URL password (and a command's passwords)
    /// replaced by `***`.
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
            let shown = super::command::shown(text).unwrap_or_else(|| redact_userinfo(text));
            format!(
                "invalid target {}: {}",
                quoted(&shown),
                crate::secrets::secret_pieces_hidden(text, &reason)
            )
        })?;
        let display = match &kind {
            Kind::Command(command) => {
                format!("{}{}", &text[..super::command::PREFIX.len()], command.shown)
            }
            _ => redact_userinfo(text),
        };
        Ok(Target { kind, display })
    }

    /// How its attempts reach it. Local: a file, a Unix socket, anything sent through
    /// `--unix-socket` (`unix_socket`), or a local host; it is polled fast (a loopback connect
    /// costs microseconds), any other gently (it is someone else's server, and DNS is the
    /// cluster's), and `k8s://` and `exec:` more gently still at first.
    pub fn reach(&self, unix_socket: bool) -> Reach {
        self.kind.reach(unix_socket)
    }

    /// Whether the target is on this machine (see [`Target::reach`]).
    pub fn is_local(&self, unix_socket: bool) -> bool {
        self.reach(unix_socket) == Reach::Local
    }
}

/// The separator of a text that fails as one target but holds several, each valid: `a:1,b:2`
/// (commas) or `a:1 b:2` (white space).
pub fn list_separator(text: &str) -> Option<&'static str> {
    // A command's words are separated by white space, and are one target.
    if super::command::written(text).is_some() {
        return None;
    }
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
    let known = SCHEMES
        .iter()
        .any(|(name, ..)| name.eq_ignore_ascii_case(scheme));
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

fn parse_kind(text: &str) -> Result<Kind, String> {
    if text.is_empty() {
        return Err("empty".into());
    }
    if text.chars().any(char::is_control) {
        return Err("contains control characters".into());
    }
    if let Some(command) = super::command::written(text) {
        return super::command::parse(command);
    }
    let Some((written, rest)) = text.split_once("://") else {
        return Ok(match text.starts_with('/') || text.starts_with("./") {
            true => Kind::File(PathBuf::from(text)),
            false => Kind::Tcp(super::tcp::endpoint(text)?),
        });
    };
    let scheme = written.to_ascii_lowercase();
    let Some(&(_, parse, _)) = SCHEMES.iter().find(|(name, ..)| *name == scheme) else {
        let listed = SCHEMES.iter().filter(|(.., listed)| *listed);
        let names: Vec<&str> = listed.map(|(name, ..)| *name).collect();
        let expected = names.join(", ");
        // The port alone is what any server can be checked for: say how.
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let authority = authority.rsplit('@').next().unwrap_or_default();
        let tcp = match crate::net::endpoint::Endpoint::parse(authority, None) {
            Ok(_) => format!("; to check that its port accepts connections: tcp://{authority}"),
            Err(_) => "; to check that its port accepts connections: tcp://HOST:PORT".into(),
        };
        return Err(format!(
            "unknown scheme {} (expected {expected}){tcp}",
            quoted(written)
        ));
    };
    let kind = scheme.clone();
    parse(&TargetUrl { text, scheme, rest }).map_err(|reason| {
        match (bad_character(text), userinfo_character(rest)) {
            (_, Some(hint)) => hint_sends(&kind, hint),
            (Some(named), _) if reason.contains("invalid uri character") => named,
            _ => reason,
        }
    })
}

/// The password hint with its second fix where the kind sends a password, and the third
/// where it does not.
fn hint_sends(scheme: &str, hint: String) -> String {
    match matches!(scheme, "redis" | "rediss" | "http" | "https") {
        true => format!("{hint}, or give the password with --password-env or --password-file"),
        false => format!("{hint}, or leave it out: a {scheme}:// check needs no login"),
    }
}

/// The first character a URL may not hold, named with where it is: a trailing space copied
/// with the URL reads "invalid uri character" otherwise.
fn bad_character(text: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(c);
    let (at, c) = text.char_indices().find(|&(_, c)| !allowed(c))?;
    let place = match text[at..].trim_end().is_empty() {
        true => "at the end".to_string(),
        false => format!("at byte {at}"),
    };
    Some(format!(
        "invalid URL: the character {} (U+{:04X}) {place} is not allowed in it: remove it, or \
         percent-encode it",
        quoted(&c.to_string()),
        c as u32
    ))
}

/// A password holding `/`, `?` or `#`, which ends a URL's authority: what follows the `:` of
/// the userinfo then reads as a path, a query or a fragment. The fix is to percent-encode it,
/// or to give it apart.
fn userinfo_character(rest: &str) -> Option<String> {
    let (before, _) = rest.rsplit_once('@')?;
    let (cut, c) = before
        .char_indices()
        .find(|&(_, c)| matches!(c, '/' | '?' | '#'))?;
    if !before[..cut].contains(':') {
        return None;
    }
    let encoded = format!("%{:02X}", c as u32);
    Some(format!(
        "the password seems to hold {}, which ends a URL's host part: percent-encode it as \
         {encoded}",
        quoted(&c.to_string())
    ))
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::grpc::GrpcTarget;
    use super::super::http::HttpTarget;
    use super::*;
    use crate::net::endpoint::{Endpoint, Host};

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
    fn local_and_remote_targets() {
        let local = [
            "tcp://127.0.0.1:80",
            "127.9.9.9:80",
            "[::1]:80",
            "[::ffff:127.0.0.1]:80",
            "localhost:80",
            "http://app.localhost:8080/",
            "https://LOCALHOST./healthz",
            "grpc://127.0.0.1:50051",
            "/shared/ready",
            "file:///shared/ready",
            "unix:///run/app.sock",
            "redis://localhost",
            "postgres://127.0.0.1/app",
            "dns://localhost",
        ];
        for text in local {
            assert!(Target::parse(text).unwrap().is_local(false), "{text}");
        }
        let remote = [
            "tcp://10.0.0.1:80",
            "db:5432",
            "http://web.default.svc/",
            "https://localhost.example/",
            "grpc://[fe80::1]:50051",
            "tcp://0.0.0.0:80",
            "redis://cache",
            "dns://db.default.svc",
        ];
        for text in remote {
            assert!(!Target::parse(text).unwrap().is_local(false), "{text}");
        }
        // Through --unix-socket, a URL names no host to reach.
        assert!(Target::parse("http://web.default.svc/")
            .unwrap()
            .is_local(true));
        assert!(!Target::parse("tcp://web.default.svc:80")
            .unwrap()
            .is_local(true));
    }

    #[test]
    fn the_api_server_and_commands_are_reached_apart_from_network_peers() {
        for (text, reach) in [
            ("tcp://db:5432", Reach::Network),
            ("https://web.default.svc/ready", Reach::Network),
            ("grpcs://api:443", Reach::Network),
            ("postgres://db/app", Reach::Network),
            ("kafka://broker:9092", Reach::Network),
            ("dns://db.default.svc", Reach::Network),
            ("k8s://job/migrate", Reach::ApiServer),
            ("k8s://pods?selector=app=web", Reach::ApiServer),
            ("exec:pg_isready -h db", Reach::Command),
            ("localhost:5432", Reach::Local),
        ] {
            let target = Target::parse(text).unwrap();
            // Through --unix-socket too: only HTTP(S) and gRPC requests take it.
            assert_eq!(target.reach(false), reach, "{text}");
            if !matches!(target.kind, Kind::Http(_) | Kind::Grpc(_)) {
                assert_eq!(target.reach(true), reach, "{text} through a socket");
            }
        }
    }
}
