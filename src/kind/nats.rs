//! `nats://`: the server speaks first with `INFO {json}`; ready unless that says lame-duck
//! mode (`"ldm":true`: the server is draining its clients to shut down).

use super::exchange::{find, server_text, Exchange};
use super::url_parts::{plain, Ignored, TargetUrl};
use super::Context;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::runtime::Attempt;

/// Parses a `nats://` URL.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    plain(url, 4222, Ignored::Userinfo).map(Kind::Nats)
}

/// One attempt: read the `INFO` line.
pub async fn check(endpoint: &Endpoint, context: &Context, at: &Attempt) -> Result<(), Failure> {
    let mut exchange = Exchange::open(endpoint, context, None, "a NATS", at).await?;
    // `INFO` lists a cluster's client URLs, so it may be longer than most answers.
    exchange.limit = 16 * 1024;
    let line = exchange.line().await?;
    match line.strip_prefix(b"INFO ") {
        Some(info) if lame_duck(info) => Err("lame-duck mode: the server is shutting down".into()),
        Some(_) => Ok(()),
        None if line.starts_with(b"-ERR ") => Err(server_text(&line[1..]).into()),
        None => Err(exchange.unexpected(&line)),
    }
}

/// Whether the JSON object says `"ldm": true` (a key no nested object of `INFO` has).
fn lame_duck(info: &[u8]) -> bool {
    let mut rest = info;
    while let Some(at) = find(rest, b"\"ldm\"") {
        rest = &rest[at + 5..];
        if let Some(value) = rest.trim_ascii_start().strip_prefix(b":") {
            return value.trim_ascii_start().starts_with(b"true");
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lame_duck_is_read_from_info() {
        assert!(lame_duck(br#"{"server_id":"x","ldm":true}"#));
        assert!(lame_duck(br#"{"ldm" :  true, "x":1}"#));
        assert!(!lame_duck(br#"{"server_id":"x","ldm":false}"#));
        assert!(!lame_duck(br#"{"server_id":"x","max_payload":1048576}"#));
        assert!(!lame_duck(br#"{"name":"\"ldm\"","x":1}"#));
    }
}
