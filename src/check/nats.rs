//! `nats://`: the server speaks first with `INFO {json}`; ready unless that says lame-duck
//! mode (`"ldm":true`: the server is draining its clients to shut down).

use super::answer::{server_text, Exchange};
use crate::error::Failure;
use crate::net::transport::connect_tcp;
use crate::target::Endpoint;

/// `INFO` lists a cluster's client URLs, so it may be longer than most answers.
const MAX_INFO: usize = 16 * 1024;

/// One attempt: read the `INFO` line.
pub async fn check(endpoint: &Endpoint) -> Result<(), Failure> {
    let stream = connect_tcp(endpoint).await?;
    let mut exchange = Exchange::new(Box::new(stream), "NATS").with_limit(MAX_INFO);
    let line = exchange.line().await?;
    if let Some(info) = line.strip_prefix(b"INFO ") {
        if lame_duck(info) {
            return Err("lame-duck mode: the server is shutting down".into());
        }
        Ok(())
    } else if line.starts_with(b"-ERR ") {
        Err(Failure::Protocol(server_text(&line[1..])))
    } else {
        Err(exchange.unexpected(&line))
    }
}

/// Whether the JSON object says `"ldm": true` (a key no nested object of `INFO` has).
fn lame_duck(info: &[u8]) -> bool {
    let mut rest = info;
    while let Some(at) = find(rest, b"\"ldm\"") {
        rest = &rest[at + 5..];
        let value = rest.trim_ascii_start();
        if let Some(value) = value.strip_prefix(b":") {
            return value.trim_ascii_start().starts_with(b"true");
        }
    }
    false
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
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
