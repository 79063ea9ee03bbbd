//! The URLs of servers asked by their own protocol whether they serve (PostgreSQL, Redis,
//! MySQL, AMQP, memcached, NATS, ZooKeeper) and `dns://NAME`. Readiness needs no login: where
//! a kind does not use them, a URL's password (and a database URL's path and query) are
//! accepted so that an application's own URL can be given as it is, and never sent.

use std::fmt;

use super::target::{endpoint, parse_host, Endpoint, Host, Kind};

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
    pub endpoint: Endpoint,
    /// The user named in the StartupMessage (the server wants one before it says its state).
    pub user: String,
    /// The database named in the StartupMessage, if the URL has one.
    pub database: Option<String>,
}

/// `redis://[[USER]:PASSWORD@]HOST[:6379][/DB]` or `rediss://`: `PING`, after `AUTH` if given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisTarget {
    /// `rediss://`: TLS.
    pub tls: bool,
    pub endpoint: Endpoint,
    /// `AUTH`'s arguments, when the URL has a password.
    pub auth: Option<RedisAuth>,
}

/// The credentials of a Redis URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisAuth {
    /// An ACL user (Redis 6 and later); none means the default user.
    pub user: Option<String>,
    pub password: Secret,
}

/// `amqp://HOST[:5672]` or `amqps://HOST[:5671]`: the protocol header, answered by
/// Connection.Start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmqpTarget {
    /// `amqps://`: TLS.
    pub tls: bool,
    pub endpoint: Endpoint,
}

/// The parts of what follows `scheme://`: userinfo (if any), `host[:port]`, and the path (empty
/// or from `/`) with its query, if the kind takes a query.
struct Parts<'a> {
    userinfo: Option<&'a str>,
    authority: &'a str,
    path: &'a str,
}

/// Splits what follows `scheme://`; a fragment is refused, and so is a query unless the kind
/// takes (and ignores) one, as a database URL carries (`?sslmode=require`).
fn split<'a>(scheme: &str, rest: &'a str, query: bool) -> Result<Parts<'a>, String> {
    let (authority, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    if path.contains('#') || (!query && path.contains('?')) {
        return Err(format!(
            "{scheme}:// takes no query or fragment (readiness needs no options)"
        ));
    }
    let path = path.split_once('?').map_or(path, |(path, _)| path);
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

/// What a kind whose check needs nothing but the address accepts besides it and ignores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ignored {
    /// A user and password only (`nats://user:password@host`).
    Userinfo,
    /// Also a database (or virtual host) path and a query: a database URL as it is
    /// (`mysql://user:password@db/app?ssl-mode=REQUIRED`).
    DatabaseUrl,
}

/// A kind whose check needs nothing but the address; the rest of what `ignored` allows is
/// dropped here, so it can never be sent.
pub(super) fn plain(
    scheme: &str,
    rest: &str,
    default_port: u16,
    ignored: Ignored,
) -> Result<Endpoint, String> {
    let database = ignored == Ignored::DatabaseUrl;
    let parts = split(scheme, rest, database)?;
    if !database && !matches!(parts.path, "" | "/") {
        return Err(format!(
            "{scheme}:// takes no path (readiness is asked of the server, not a database)"
        ));
    }
    endpoint(parts.authority, Some(default_port))
}

pub(super) fn postgres(rest: &str) -> Result<Kind, String> {
    let Parts {
        userinfo,
        authority,
        path,
    } = split("postgres", rest, true)?;
    // The StartupMessage names the user; a password is dropped here, never to be sent.
    let user = match userinfo.map(|userinfo| userinfo.split_once(':').map_or(userinfo, |u| u.0)) {
        // Every cluster has this user.
        None => "postgres".to_string(),
        Some(user) => decode(user, "user")?,
    };
    if user.is_empty() {
        return Err("empty user name before '@'".into());
    }
    let database = match path {
        "" | "/" => None,
        path => Some(decode(&path[1..], "database name")?),
    };
    let endpoint = endpoint(authority, Some(5432))?;
    Ok(Kind::Postgres(PostgresTarget {
        endpoint,
        user,
        database,
    }))
}

/// `redis://` or `rediss://` (`scheme`).
pub(super) fn redis(scheme: &str, rest: &str) -> Result<Kind, String> {
    let Parts {
        userinfo,
        authority,
        path,
    } = split(scheme, rest, false)?;
    let auth = match userinfo.map(|userinfo| userinfo.split_once(':')) {
        None => None,
        Some(None) => {
            return Err(format!(
                "a {scheme}:// userinfo is :PASSWORD or USER:PASSWORD (no ':' found)"
            ))
        }
        Some(Some((_, ""))) => return Err("empty password after ':'".into()),
        Some(Some((user, password))) => Some(RedisAuth {
            user: match user {
                "" => None,
                user => Some(decode(user, "user")?),
            },
            password: Secret(decode(password, "password")?),
        }),
    };
    let database = path.strip_prefix('/').unwrap_or_default();
    if database.len() > 5 || !database.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "the path of a {scheme}:// URL is a database number, as in {scheme}://cache:6379/0"
        ));
    }
    let tls = scheme == "rediss";
    let endpoint = endpoint(authority, Some(6379))?;
    Ok(Kind::Redis(RedisTarget {
        tls,
        endpoint,
        auth,
    }))
}

/// `dns://NAME`: a name, nothing else.
pub(super) fn dns(rest: &str) -> Result<Kind, String> {
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
    use super::super::target::tests::{at, kind};
    use super::super::target::Target;
    use super::*;

    #[test]
    fn default_ports() {
        let amqp = |endpoint, tls| Kind::Amqp(AmqpTarget { tls, endpoint });
        let cases = [
            ("mysql://db", Kind::Mysql(at("db", 3306))),
            ("mariadb://db:3307", Kind::Mysql(at("db", 3307))),
            ("amqp://mq", amqp(at("mq", 5672), false)),
            ("amqps://mq/", amqp(at("mq", 5671), true)),
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
        let postgres = |endpoint, user: &str, database: Option<&str>| {
            let (user, database) = (user.into(), database.map(Into::into));
            Kind::Postgres(PostgresTarget {
                endpoint,
                user,
                database,
            })
        };
        assert_eq!(
            kind("postgresql://db"),
            postgres(at("db", 5432), "postgres", None)
        );
        assert_eq!(
            kind("postgres://app%40x@db:6432/orders%2Fv2"),
            postgres(at("db", 6432), "app@x", Some("orders/v2"))
        );
    }

    #[test]
    fn database_urls_are_taken_as_they_are_and_their_passwords_dropped() {
        let postgres = Target::parse("postgres://app%40x:s3cret@db:6432/orders?sslmode=require");
        let postgres = postgres.unwrap();
        assert_eq!(
            postgres.kind,
            Kind::Postgres(PostgresTarget {
                endpoint: at("db", 6432),
                user: "app@x".into(),
                database: Some("orders".into()),
            })
        );
        assert_eq!(
            postgres.to_string(),
            "postgres://app%40x:***@db:6432/orders?sslmode=require"
        );
        for (text, expected) in [
            (
                "mysql://root:s3cret@db/app?ssl-mode=REQUIRED",
                kind("mysql://db"),
            ),
            ("mariadb://root:%zz@db:3307/", kind("mariadb://db:3307")),
            (
                "amqps://guest:s3cret@mq/vhost?heartbeat=5",
                kind("amqps://mq"),
            ),
            ("nats://user:s3cret@nats", kind("nats://nats")),
            ("nats://s3cret@nats", kind("nats://nats")),
            ("memcached://u:s3cret@cache", kind("memcached://cache")),
            ("zk://u:s3cret@zk:2182", kind("zk://zk:2182")),
        ] {
            let target = Target::parse(text).unwrap();
            assert_eq!(target.kind, expected, "{text}");
            let shown = format!("{target} {target:?}");
            assert!(!shown.contains("s3cret"), "{text}: {shown}");
        }
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
}
