//! `postgres://`: pg_isready's rule. A StartupMessage (protocol 3.0) needs no password: a
//! server that can take connections asks for authentication, or refuses for another reason
//! (no such role, too many clients) — it is up. SQLSTATE 57P03 ("cannot connect now": starting
//! up, in recovery without hot standby, shutting down) is the one answer that is not ready.

use super::exchange::{server_text, Exchange, MAX_ANSWER};
use super::url_parts::{decode, split, Parts, TargetUrl};
use super::Context;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::runtime::Attempt;

/// `postgres://[USER@]HOST[:5432][/DB]`: asked with a StartupMessage, never logged in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresTarget {
    pub endpoint: Endpoint,
    /// The user named in the StartupMessage (the server wants one before it says its state).
    pub user: String,
    /// The database named in the StartupMessage, if the URL has one.
    pub database: Option<String>,
}

/// Parses a `postgres://` or `postgresql://` URL.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let Parts {
        userinfo,
        authority,
        path,
    } = split("postgres", url.rest, true)?;
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
    let endpoint = Endpoint::parse(authority, Some(5432))?;
    Ok(Kind::Postgres(PostgresTarget {
        endpoint,
        user,
        database,
    }))
}

/// One attempt: send the StartupMessage and read the first message back.
pub async fn check(
    target: &PostgresTarget,
    context: &Context,
    at: &Attempt,
) -> Result<(), Failure> {
    let mut exchange = Exchange::open(&target.endpoint, context, None, "a PostgreSQL", at).await?;
    exchange.send(&startup_message(target)).await?;
    at.if_cut_suspect(
        "a PostgreSQL server answers at once: does this port speak another protocol?",
    );
    let header = exchange.exact(5).await?;
    let length = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
    match header[0] {
        // AuthenticationRequest: Ok, or the method (password, SASL…) it wants next.
        b'R' if (8..=64).contains(&length) => {
            let method = exchange.exact(4).await?;
            match u32::from_be_bytes([method[0], method[1], method[2], method[3]]) {
                0 | 2 | 3 | 5 | 7 | 9 | 10 => Ok(()),
                _ => Err(exchange.unexpected(&header)),
            }
        }
        b'E' if (5..=MAX_ANSWER).contains(&length) => {
            judge_error(&exchange.exact(length - 4).await?)
        }
        _ => Err(exchange.unexpected(&header)),
    }
}

/// The StartupMessage: length, version, then `user`, `database` and `application_name`.
fn startup_message(target: &PostgresTarget) -> Vec<u8> {
    let database = target.database.as_deref().map(|name| ["database", name]);
    let pairs = [
        Some(["user", &target.user]),
        database,
        Some(["application_name", "readygate"]),
    ];
    // The length, set below, then protocol version 3.0.
    let mut message = [[0; 4], (3u32 << 16).to_be_bytes()].concat();
    for text in pairs.iter().flatten().flatten() {
        message.extend_from_slice(text.as_bytes());
        message.push(0);
    }
    message.push(0);
    let length = u32::try_from(message.len()).unwrap_or(u32::MAX);
    message[..4].copy_from_slice(&length.to_be_bytes());
    message
}

/// An ErrorResponse's fields: 57P03 is not ready (its message and detail the reason), any
/// other error comes from a server that is up.
fn judge_error(body: &[u8]) -> Result<(), Failure> {
    let fields = body.split(|&b| b == 0);
    let field = |tag| fields.clone().rev().find_map(|f| f.strip_prefix(&[tag]));
    let code = server_text(field(b'C').unwrap_or_default());
    if code != "57P03" {
        tracing::debug!("the server is up and answered with error {code}");
        return Ok(());
    }
    let mut reason = server_text(field(b'M').unwrap_or(b"cannot connect now"));
    if let Some(detail) = field(b'D') {
        reason = format!("{reason}: {}", server_text(detail));
    }
    Err(format!("{reason} ({code})").into())
}

#[cfg(test)]
mod tests {
    use super::super::target::tests::{at, kind};
    use super::super::target::Target;
    use super::*;

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
    fn the_startup_message_names_user_and_database() {
        let Kind::Postgres(target) = Target::parse("postgres://app@db/orders").unwrap().kind else {
            unreachable!("a postgres:// target");
        };
        let message = startup_message(&target);
        assert_eq!(&message[..4], &(message.len() as u32).to_be_bytes());
        assert_eq!(&message[4..8], &[0, 3, 0, 0]);
        assert_eq!(
            &message[8..],
            b"user\0app\0database\0orders\0application_name\0readygate\0\0"
        );
    }

    #[test]
    fn only_57p03_is_not_ready() {
        let starting = b"SFATAL\0VFATAL\0C57P03\0Mthe database system is starting up\0\0";
        assert_eq!(
            judge_error(starting).unwrap_err(),
            Failure::from("the database system is starting up (57P03)")
        );
        let standby = b"C57P03\0Mthe database system is not accepting connections\0DHot standby mode is disabled.\0\0";
        assert_eq!(
            judge_error(standby).unwrap_err(),
            Failure::from("the database system is not accepting connections: Hot standby mode is disabled. (57P03)")
        );
        assert!(judge_error(b"C28000\0Mrole \"x\" does not exist\0\0").is_ok());
        let hostile = b"C57P03\0Mline\nbreak\x1b[31m\0\0";
        assert_eq!(
            judge_error(hostile).unwrap_err(),
            Failure::from("line\\nbreak\\u{1b}[31m (57P03)")
        );
    }
}
