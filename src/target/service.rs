//! The URLs of servers asked by their own protocol whether they serve (PostgreSQL, Redis,
//! MySQL, AMQP, memcached, NATS, ZooKeeper) and `dns://NAME`: default ports, and what each
//! may carry in its userinfo and path. Anything a check would not use is a usage error, so a
//! password never sits in a manifest believing it is checked.

use std::fmt;

use super::{parse_host, parse_port, Endpoint, Host, Kind};
use crate::redact::quoted;

/// A value never shown: its `Debug` is `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value, for the bytes sent to the server only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// `postgres://[USER@]HOST[:5432][/DB]`: asked with a StartupMessage, never logged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresTarget {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// The user named in the StartupMessage (the server wants one before it says its state).
    pub user: String,
    /// The database named in the StartupMessage, if the URL has one.
    pub database: Option<String>,
}

/// The user a PostgreSQL URL without one asks as: every cluster has it.
const POSTGRES_USER: &str = "postgres";

/// `redis://[[USER]:PASSWORD@]HOST[:6379][/DB]` or `rediss://`: `PING`, after `AUTH` if given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisTarget {
    /// `rediss://`: TLS.
    pub tls: bool,
    /// Where to connect.
    pub endpoint: Endpoint,
    /// `AUTH`'s arguments, when the URL has a password.
    pub auth: Option<RedisAuth>,
}

/// The credentials of a Redis URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisAuth {
    /// An ACL user (Redis 6 and later); none means the default user.
    pub user: Option<String>,
    /// The password.
    pub password: Secret,
}

/// `amqp://HOST[:5672]` or `amqps://HOST[:5671]`: the protocol header, answered by
/// Connection.Start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmqpTarget {
    /// `amqps://`: TLS.
    pub tls: bool,
    /// Where to connect.
    pub endpoint: Endpoint,
}

/// The target kind of `scheme` (lower case) with `rest` after `://`; `None` for a scheme
/// that is not one of these.
pub(super) fn parse(scheme: &str, rest: &str) -> Option<Result<Kind, String>> {
    let kind = match scheme {
        "postgres" | "postgresql" => postgres(rest),
        "redis" => redis(rest, false),
        "rediss" => redis(rest, true),
        "mysql" | "mariadb" => plain(scheme, rest, 3306).map(Kind::Mysql),
        "amqp" => plain(scheme, rest, 5672).map(|endpoint| Kind::Amqp(amqp(endpoint, false))),
        "amqps" => plain(scheme, rest, 5671).map(|endpoint| Kind::Amqp(amqp(endpoint, true))),
        "memcached" => plain(scheme, rest, 11211).map(Kind::Memcached),
        "nats" => plain(scheme, rest, 4222).map(Kind::Nats),
        "zk" => plain(scheme, rest, 2181).map(Kind::Zookeeper),
        "dns" => dns(rest),
        _ => return None,
    };
    Some(kind)
}

/// The schemes [`parse`] knows, for the unknown-scheme message.
pub(super) const SCHEMES: &str =
    "postgres, redis, rediss, mysql, amqp, amqps, memcached, nats, zk, dns";

fn amqp(endpoint: Endpoint, tls: bool) -> AmqpTarget {
    AmqpTarget { tls, endpoint }
}

/// A URL split at its parts: userinfo (if any), `host[:port]`, path (empty or from `/`).
struct Parts<'a> {
    userinfo: Option<&'a str>,
    authority: &'a str,
    path: &'a str,
}

fn split<'a>(scheme: &str, rest: &'a str) -> Result<Parts<'a>, String> {
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if path.contains(['?', '#']) {
        return Err(format!(
            "{scheme}:// takes no query or fragment (readiness needs no options)"
        ));
    }
    let (userinfo, authority) = match authority.rsplit_once('@') {
        Some((userinfo, authority)) => (Some(userinfo), authority),
        None => (None, authority),
    };
    Ok(Parts {
        userinfo,
        authority,
        path,
    })
}

/// `HOST`, `HOST:PORT`, `[V6]` or `[V6]:PORT`.
fn endpoint(authority: &str, default_port: u16) -> Result<Endpoint, String> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("unclosed '[' in IPv6 address")?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or("expected :PORT after ']'")?),
        };
        match host.parse::<std::net::Ipv6Addr>() {
            Ok(ip) => (Host::Ip(ip.into()), port),
            Err(_) => return Err(format!("invalid IPv6 address {}", quoted(host))),
        }
    } else {
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, _)) if host.contains(':') => {
                return Err("IPv6 addresses need brackets, as in [::1]".into())
            }
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        (parse_host(host)?, port)
    };
    let port = match port {
        Some(port) => parse_port(port)?,
        None => default_port,
    };
    Ok(Endpoint { host, port })
}

/// A kind whose check needs nothing but the address: no userinfo, no path.
fn plain(scheme: &str, rest: &str, default_port: u16) -> Result<Endpoint, String> {
    let parts = split(scheme, rest)?;
    if parts.userinfo.is_some() {
        return Err(format!(
            "{scheme}:// takes no user or password (readiness is asked without logging in)"
        ));
    }
    if !matches!(parts.path, "" | "/") {
        return Err(format!(
            "{scheme}:// takes no path (readiness is asked of the server, not a database)"
        ));
    }
    endpoint(parts.authority, default_port)
}

fn postgres(rest: &str) -> Result<Kind, String> {
    let parts = split("postgres", rest)?;
    let user = match parts.userinfo {
        None => POSTGRES_USER.to_string(),
        Some(userinfo) if userinfo.contains(':') => {
            return Err(
                "postgres:// takes a user but no password (readiness is asked \
                        without logging in)"
                    .into(),
            )
        }
        Some(user) => decode(user, "user")?,
    };
    if user.is_empty() {
        return Err("empty user name before '@'".into());
    }
    let database = match parts.path {
        "" | "/" => None,
        path => Some(decode(&path[1..], "database name")?),
    };
    Ok(Kind::Postgres(PostgresTarget {
        endpoint: endpoint(parts.authority, 5432)?,
        user,
        database,
    }))
}

fn redis(rest: &str, tls: bool) -> Result<Kind, String> {
    let scheme = if tls { "rediss" } else { "redis" };
    let parts = split(scheme, rest)?;
    let auth = match parts.userinfo {
        None => None,
        Some(userinfo) => {
            let Some((user, password)) = userinfo.split_once(':') else {
                return Err(format!(
                    "a {scheme}:// userinfo is :PASSWORD or USER:PASSWORD (no ':' found)"
                ));
            };
            if password.is_empty() {
                return Err("empty password after ':'".into());
            }
            Some(RedisAuth {
                user: match user {
                    "" => None,
                    user => Some(decode(user, "user")?),
                },
                password: Secret(decode(password, "password")?),
            })
        }
    };
    let database = parts.path.strip_prefix('/').unwrap_or_default();
    if !database.is_empty() && (database.len() > 5 || !database.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!(
            "the path of a {scheme}:// URL is a database number, as in {scheme}://cache:6379/0"
        ));
    }
    Ok(Kind::Redis(RedisTarget {
        tls,
        endpoint: endpoint(parts.authority, 6379)?,
        auth,
    }))
}

/// `dns://NAME`: a name, nothing else.
fn dns(rest: &str) -> Result<Kind, String> {
    let name = rest.strip_suffix('/').unwrap_or(rest);
    if name.contains(['@', ':', '/', '?', '#', '[']) {
        return Err("dns:// takes a host name only, as in dns://db.default.svc".into());
    }
    match parse_host(name)? {
        Host::Name(name) => Ok(Kind::Dns(name)),
        Host::Ip(_) => Err("dns:// takes a host name, not an address".into()),
    }
}

/// Percent-decodes a URL part; `what` names it in the error.
fn decode(text: &str, what: &str) -> Result<String, String> {
    let bytes = crate::percent::decode_strict(text.as_bytes())
        .ok_or_else(|| format!("invalid percent-encoding in the {what}"))?;
    String::from_utf8(bytes).map_err(|_| format!("the {what} is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::super::tests::kind;
    use super::super::Target;
    use super::*;

    fn at(host: &str, port: u16) -> Endpoint {
        Endpoint {
            host: parse_host(host).unwrap(),
            port,
        }
    }

    #[test]
    fn default_ports() {
        let cases = [
            ("mysql://db", Kind::Mysql(at("db", 3306))),
            ("mariadb://db:3307", Kind::Mysql(at("db", 3307))),
            ("amqp://mq", Kind::Amqp(amqp(at("mq", 5672), false))),
            ("amqps://mq/", Kind::Amqp(amqp(at("mq", 5671), true))),
            ("memcached://[::1]", Kind::Memcached(at("::1", 11211))),
            ("nats://127.0.0.1", Kind::Nats(at("127.0.0.1", 4222))),
            ("zk://[::1]:2182", Kind::Zookeeper(at("::1", 2182))),
            ("DNS://Db.Default.Svc", Kind::Dns("db.default.svc".into())),
        ];
        for (text, expected) in cases {
            assert_eq!(kind(text), expected, "{text}");
        }
    }

    #[test]
    fn postgres_user_and_database() {
        let Kind::Postgres(pg) = kind("postgresql://db") else {
            panic!()
        };
        assert_eq!(
            (pg.endpoint, pg.user, pg.database),
            (at("db", 5432), "postgres".into(), None)
        );
        let Kind::Postgres(pg) = kind("postgres://app%40x@db:6432/orders%2Fv2") else {
            panic!()
        };
        assert_eq!(pg.user, "app@x");
        assert_eq!(pg.database.as_deref(), Some("orders/v2"));
        assert_eq!(pg.endpoint.port, 6432);
    }

    #[test]
    fn redis_credentials_are_kept_and_never_shown() {
        let target = Target::parse("rediss://:s%3Acret@cache/0").unwrap();
        assert_eq!(target.to_string(), "rediss://:***@cache/0");
        let Kind::Redis(redis) = &target.kind else {
            panic!()
        };
        assert!(redis.tls);
        assert_eq!(redis.endpoint, at("cache", 6379));
        let auth = redis.auth.as_ref().unwrap();
        assert_eq!(
            (auth.user.as_deref(), auth.password.expose()),
            (None, "s:cret")
        );
        assert!(!format!("{target:?}").contains("cret"));
        let Kind::Redis(redis) = kind("redis://app:pw@cache:6380") else {
            panic!()
        };
        assert_eq!(redis.auth.unwrap().user.as_deref(), Some("app"));
        assert_eq!(kind("redis://cache/"), kind("redis://cache:6379"));
    }

    #[test]
    fn usage_errors_name_the_fault() {
        let cases = [
            ("postgres://u:secret@db", "no password"),
            ("postgres://@db", "empty user"),
            ("postgres://db?sslmode=require", "no query"),
            ("postgres://db:0", "port 0"),
            ("postgres://:5432", "missing host"),
            ("postgres://%zz@db", "percent-encoding in the user"),
            ("redis://secret@cache", ":PASSWORD"),
            ("redis://user:@cache", "empty password"),
            ("redis://cache/x", "database number"),
            ("redis://cache:99999", "invalid port"),
            ("mysql://root:secret@db", "no user or password"),
            ("mysql://db/app", "no path"),
            ("amqp://guest@mq", "no user or password"),
            ("nats://::1", "brackets"),
            ("zk://[::1", "unclosed"),
            ("zk://[::1]x", ":PORT"),
            ("memcached://", "missing host"),
            ("dns://db:53", "host name only"),
            ("dns://10.0.0.1", "not an address"),
            ("dns://", "missing host"),
            ("mongodb://db", "unknown scheme"),
        ];
        for (text, fault) in cases {
            let err = Target::parse(text).unwrap_err();
            assert!(err.contains(fault), "{text}: {err} should mention {fault}");
            assert!(!err.contains("secret"), "{text}: {err}");
        }
    }
}
