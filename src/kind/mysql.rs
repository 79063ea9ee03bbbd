//! `mysql://` and `mariadb://`: the server speaks first. A HandshakeV10 greeting means it takes
//! connections; an ERR packet instead (too many connections, host blocked) is the reason.

use super::exchange::{server_text, Exchange, MAX_ANSWER};
use super::url_parts::{plain, Ignored, TargetUrl};
use super::Context;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::runtime::Attempt;

/// Parses a `mysql://` or `mariadb://` URL: all but the host and port is ignored.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    plain(url, 3306, Ignored::DatabaseUrl).map(Kind::Mysql)
}

/// One attempt: read the greeting packet.
pub async fn check(endpoint: &Endpoint, context: &Context, at: &Attempt) -> Result<(), Failure> {
    let mut exchange = Exchange::open(endpoint, context, None, "a MySQL", at).await?;
    // A packet: a 3-byte little-endian length and a sequence number, then the payload.
    let header = exchange.exact(4).await?;
    let length = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
    if header[3] != 0 || !(1..=MAX_ANSWER - 4).contains(&length) {
        return Err(exchange.unexpected(&header));
    }
    let payload = exchange.exact(length).await?;
    match payload[0] {
        // HandshakeV10 (protocol version 10), or an ERR packet.
        0x0a => Ok(()),
        0xff if payload.len() >= 3 => Err(describe_err(&payload)),
        _ => Err(exchange.unexpected(&[&header[..], &payload[..]].concat())),
    }
}

/// `Too many connections (error 1040)` from an ERR payload: code, optional SQL state, message.
fn describe_err(payload: &[u8]) -> Failure {
    let code = u16::from_le_bytes([payload[1], payload[2]]);
    let mut message = &payload[3..];
    if message.first() == Some(&b'#') && message.len() >= 6 {
        message = &message[6..];
    }
    Failure::Text(format!("{} (error {code})", server_text(message)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn err_packets_say_code_and_message() {
        assert_eq!(
            describe_err(b"\xff\x10\x04Too many connections"),
            Failure::from("Too many connections (error 1040)")
        );
        assert_eq!(
            describe_err(b"\xff\x69\x04#HY000Host 'x' is blocked\n"),
            Failure::from("Host 'x' is blocked (error 1129)")
        );
    }
}
