//! `amqp://` and `amqps://`: the AMQP 0-9-1 protocol header, answered by a Connection.Start
//! method frame on channel 0 when the broker takes connections.

use super::exchange::Exchange;
use super::url_parts::{plain, Ignored, TargetUrl};
use super::Context;
use super::Kind;
use crate::error::Failure;
use crate::net::endpoint::Endpoint;
use crate::runtime::Attempt;

/// `amqp://HOST[:5672]` or `amqps://HOST[:5671]`: the protocol header, answered by
/// Connection.Start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmqpTarget {
    /// `amqps://`: TLS.
    pub tls: bool,
    pub endpoint: Endpoint,
}

/// Parses an `amqp://` or `amqps://` URL: all but the host and port is ignored.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let tls = url.scheme == "amqps";
    let port = if tls { 5671 } else { 5672 };
    let endpoint = plain(url, port, Ignored::DatabaseUrl)?;
    Ok(Kind::Amqp(AmqpTarget { tls, endpoint }))
}

/// The protocol header of AMQP 0-9-1.
const HEADER: &[u8] = b"AMQP\x00\x00\x09\x01";

/// One attempt: send the header, read the first frame's header and method.
pub async fn check(amqp: &AmqpTarget, context: &Context, at: &Attempt) -> Result<(), Failure> {
    let tls = amqp.tls.then_some("amqp://");
    let mut exchange = Exchange::open(&amqp.endpoint, context, tls, "an AMQP 0-9-1", at).await?;
    exchange.send(HEADER).await?;
    at.if_cut_suspect("an AMQP broker answers at once: does this port speak another protocol?");
    // A broker that does not speak this version answers with the header of one it does.
    let answer = exchange.exact(11).await?;
    // A method frame (type 1) on channel 0, then Connection.Start (class 10, method 10).
    if answer.starts_with(&[1, 0, 0]) && answer[7..] == [0, 10, 0, 10] {
        Ok(())
    } else {
        Err(exchange.unexpected(&answer))
    }
}
