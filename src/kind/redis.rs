//! `redis://` and `rediss://`: `PING` (after `AUTH` when the URL has a password) answered by
//! `+PONG`. A server loading its dataset (`-LOADING`), a replica cut off from its master
//! (`-MASTERDOWN`) or one busy with a script (`-BUSY`) answers with an error instead, and that
//! error is the reason.

use std::sync::atomic::{AtomicBool, Ordering};

use super::exchange::{server_text, Exchange};
use super::Context;
use crate::error::Failure;
use crate::kind::target::{RedisTarget, Target};

/// Whether the warning about `-NOAUTH` was given (once per run).
static NOAUTH_TOLD: AtomicBool = AtomicBool::new(false);

/// One attempt: `[AUTH …] PING` in one write, then one line per command.
pub async fn check(redis: &RedisTarget, target: &Target, context: &Context) -> Result<(), Failure> {
    let tls = redis.tls.then_some((context, "redis://"));
    let mut exchange = Exchange::open(&redis.endpoint, tls, "a Redis").await?;
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
            if !NOAUTH_TOLD.swap(true, Ordering::Relaxed) {
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
    use super::*;

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
