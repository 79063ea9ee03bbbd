//! `amqp://` and `amqps://`: the AMQP 0-9-1 protocol header, answered by a Connection.Start
//! method frame on channel 0 when the broker takes connections.

use super::answer::Exchange;
use super::Context;
use crate::error::Failure;
use crate::net::tls::{self, Alpn};
use crate::net::transport;
use crate::target::AmqpTarget;

/// The protocol header of AMQP 0-9-1.
const HEADER: &[u8] = b"AMQP\x00\x00\x09\x01";

/// A method frame on channel 0 (type 1, channel 0): its 7-byte header's first three bytes.
const METHOD_ON_CHANNEL_0: &[u8] = &[1, 0, 0];

/// Connection.Start: class 10, method 10.
const CONNECTION_START: &[u8] = &[0, 10, 0, 10];

/// One attempt: send the header, read the first frame's header and method.
pub async fn check(amqp: &AmqpTarget, context: &Context) -> Result<(), Failure> {
    let stream = transport::open(&amqp.endpoint, None).await?;
    let stream = match amqp.tls {
        true => tls::connect(stream, &amqp.endpoint.host, Alpn::None, context.tls()?).await?,
        false => stream,
    };
    let mut exchange = Exchange::new(stream, "AMQP 0-9-1");
    exchange.send(HEADER).await?;
    // A broker that does not speak this version answers with the header of one it does.
    let answer = exchange.exact(11).await?;
    if answer.starts_with(METHOD_ON_CHANNEL_0) && answer[7..] == *CONNECTION_START {
        Ok(())
    } else {
        Err(exchange.unexpected(&answer))
    }
}
