//! The URLs of servers asked by their own protocol whether they serve (PostgreSQL, Redis,
//! MySQL, AMQP, memcached, NATS, ZooKeeper) and `dns://NAME`. Anything a check would not use
//! is a usage error, so a password never sits in a manifest believing it is checked.

use std::fmt;

use super::{endpoint, parse_host, Endpoint, Host, Kind};

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

/// Splits what follows `scheme://` into userinfo (if any), `host[:port]` and path (empty or
/// from `/`); a query or fragment is refused.
fn split<'a>(scheme: &str, rest: &'a str) -> Result<(Option<&'a str>, &'a str, &'a str), String> {
    let (authority, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    if path.contains(['?', '#']) {
        return Err(format!(
            "{scheme}:// takes no query or fragment (readiness needs no options)"
        ));
    }
    Ok(match authority.rsplit_once('@') {
        Some((userinfo, authority)) => (Some(userinfo), authority, path),
        None => (None, authority, path),
    })
}

/// A kind whose check needs nothing but the address: no userinfo, no path.
pub(super) fn plain(scheme: &str, rest: &str, default_port: u16) -> Result<Endpoint, String> {
    let (userinfo, authority, path) = split(scheme, rest)?;
    if userinfo.is_some() {
        return Err(format!(
            "{scheme}:// takes no user or password (readiness is asked without logging in)"
        ));
    }
    if !matches!(path, "" | "/") {
        return Err(format!(
            "{scheme}:// takes no path (readiness is asked of the server, not a database)"
        ));
    }
    endpoint(authority, Some(default_port))
}

pub(super) fn postgres(rest: &str) -> Result<Kind, String> {
    let (userinfo, authority, path) = split("postgres", rest)?;
    let user =
        match userinfo {
            // Every cluster has this user.
            None => "postgres".to_string(),
            Some(userinfo) if userinfo.contains(':') => return Err(
                "postgres:// takes a user but no password (readiness is asked without logging in)"
                    .into(),
            ),
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
    let (userinfo, authority, path) = split(scheme, rest)?;
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
    use super::super::tests::{at, kind};
    use super::super::Target;
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
