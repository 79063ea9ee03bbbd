//! What follows a target URL's `scheme://`, split once for the kinds: userinfo, `host[:port]`,
//! path and query. Readiness needs no login: where a kind does not use them, a URL's password
//! (and a database URL's path and query) are accepted so that an application's own URL can be
//! given as it is, and never sent.

use crate::net::endpoint::Endpoint;

/// A target URL as written: what each kind's `parse` reads.
pub struct TargetUrl<'a> {
    /// The whole target (an `http(s)://` URL is parsed whole).
    pub text: &'a str,
    /// The scheme, lower-cased.
    pub scheme: String,
    /// What follows `://`.
    pub rest: &'a str,
}

/// The parts of what follows `scheme://`: userinfo (if any), `host[:port]`, and the path (empty
/// or from `/`) with its query, if the kind takes a query.
pub struct Parts<'a> {
    pub userinfo: Option<&'a str>,
    pub authority: &'a str,
    pub path: &'a str,
}

/// Splits what follows `scheme://`; a fragment is refused, and so is a query unless the kind
/// takes (and ignores) one, as a database URL carries (`?sslmode=require`).
pub fn split<'a>(scheme: &str, rest: &'a str, query: bool) -> Result<Parts<'a>, String> {
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
pub enum Ignored {
    /// A user and password only (`nats://user:password@host`).
    Userinfo,
    /// Also a database (or virtual host) path and a query: a database URL as it is
    /// (`mysql://user:password@db/app?ssl-mode=REQUIRED`).
    DatabaseUrl,
}

/// A kind whose check needs nothing but the address; the rest of what `ignored` allows is
/// dropped here, so it can never be sent.
pub fn plain(url: &TargetUrl, default_port: u16, ignored: Ignored) -> Result<Endpoint, String> {
    let (scheme, database) = (&url.scheme, ignored == Ignored::DatabaseUrl);
    let parts = split(scheme, url.rest, database)?;
    if !database && !matches!(parts.path, "" | "/") {
        return Err(format!(
            "{scheme}:// takes no path (readiness is asked of the server, not a database)"
        ));
    }
    Endpoint::parse(parts.authority, Some(default_port))
}

/// Percent-decodes a URL part; `what` names it in the error.
pub fn decode(text: &str, what: &str) -> Result<String, String> {
    let bytes = crate::text::percent::decode_strict(text.as_bytes())
        .ok_or_else(|| format!("invalid percent-encoding in the {what}"))?;
    String::from_utf8(bytes).map_err(|_| format!("the {what} is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::super::amqp::AmqpTarget;
    use super::super::postgres::PostgresTarget;
    use super::super::target::tests::{at, kind};
    use super::super::target::Target;
    use super::super::Kind;

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
}
