//! `redis://` and `rediss://`: `PING` (after `AUTH` when the URL has a password) answered by
//! `+PONG`. A server loading its dataset (`-LOADING`), a replica cut off from its master
//! (`-MASTERDOWN`) or one busy with a script (`-BUSY`) answers with an error instead, and that
//! error is the reason.

use std::sync::atomic::Ordering;

use super::exchange::{server_text, Exchange};
use super::target::Target;
use super::url_parts::{decode, split, Parts, TargetUrl};
use super::Context;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::runtime::Attempt;
use crate::secrets::Secret;

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

/// Parses a `redis://` or `rediss://` URL.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let (scheme, rest) = (url.scheme.as_str(), url.rest);
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
            password: Secret::new(decode(password, "password")?),
        }),
    };
    let database = path.strip_prefix('/').unwrap_or_default();
    if database.len() > 5 || !database.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "the path of a {scheme}:// URL is a database number, as in {scheme}://cache:6379/0"
        ));
    }
    let tls = scheme == "rediss";
    let endpoint = Endpoint::parse(authority, Some(6379))?;
    Ok(Kind::Redis(RedisTarget {
        tls,
        endpoint,
        auth,
    }))
}

/// One attempt: `[AUTH …] PING` in one write, then one line per command.
pub async fn check(
    redis: &RedisTarget,
    target: &Target,
    context: &Context,
    at: &Attempt,
) -> Result<(), Failure> {
    let tls = redis.tls.then_some("redis://");
    let mut exchange = Exchange::open(&redis.endpoint, context, tls, "a Redis", at).await?;
    let mut request = Vec::new();
    if let Some(auth) = &redis.auth {
        let mut words = vec!["AUTH"];
        words.extend(auth.user.as_deref());
        words.push(auth.password.expose());
        command(&mut request, &words);
    }
    command(&mut request, &["PING"]);
    exchange.send(&request).await?;
    if redis.auth.is_some() {
        let line = exchange.line().await?;
        if let Reply::Error(error) = reply(&exchange, &line)? {
            return Err(format!("AUTH: {error}").into());
        }
    }
    let line = exchange.line().await?;
    match reply(&exchange, &line)? {
        Reply::Status(b"PONG") => Ok(()),
        Reply::Status(_) => Err(exchange.unexpected(&line)),
        Reply::Error(error) if redis.auth.is_none() && error.starts_with("NOAUTH") => {
            // At info: `wait` says it, `probe` (whose stderr is the kubelet's event) only
            // with -v.
            if !context.noauth_told.swap(true, Ordering::Relaxed) {
                tracing::info!(
                    "{target}: the server wants a password and none was given: taken as ready, \
                     but whether it is still loading cannot be seen (give it as \
                     redis://:PASSWORD@HOST)"
                );
            }
            Ok(())
        }
        Reply::Error(error) => Err(error.into()),
    }
}

/// One line of a RESP answer.
enum Reply<'a> {
    /// `+TEXT`.
    Status(&'a [u8]),
    /// `-TEXT`, as shown in a reason.
    Error(String),
}

fn reply<'a>(exchange: &Exchange, line: &'a [u8]) -> Result<Reply<'a>, Failure> {
    match line.split_first() {
        Some((b'+', status)) => Ok(Reply::Status(status)),
        Some((b'-', error)) => Ok(Reply::Error(server_text(error))),
        _ => Err(exchange.unexpected(line)),
    }
}

/// Appends `words` as a RESP array of bulk strings.
fn command(request: &mut Vec<u8>, words: &[&str]) {
    request.extend(format!("*{}\r\n", words.len()).bytes());
    for word in words {
        request.extend(format!("${}\r\n{word}\r\n", word.len()).bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::super::target::tests::{at, kind};
    use super::super::target::Target;
    use super::*;

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
    fn commands_are_resp_arrays() {
        let mut request = Vec::new();
        command(&mut request, &["AUTH", "app", "p w\r\n"]);
        assert_eq!(
            request,
            b"*3\r\n$4\r\nAUTH\r\n$3\r\napp\r\n$5\r\np w\r\n\r\n"
        );
        request.clear();
        command(&mut request, &["PING"]);
        assert_eq!(request, b"*1\r\n$4\r\nPING\r\n");
    }
}
