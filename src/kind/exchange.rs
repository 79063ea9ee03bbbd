//! A short exchange with a server for the protocol checks: a constant request, then an answer
//! read with a cap on its bytes (the engine's attempt timeout bounds the time). Server text is
//! shown with control characters escaped.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::Context;
use crate::error::{describe_io, Failure};
use crate::net::endpoint::Endpoint;
use crate::net::tls::{self, Alpn};
use crate::net::transport::{connect_tcp, BoxedIo};
use crate::runtime::{Attempt, NOTHING_YET, TLS_HANDSHAKE};
use crate::text::{peer_text, quoted};

/// The most bytes read from a server in one attempt, unless a check says otherwise: every
/// readiness answer fits with room to spare.
pub const MAX_ANSWER: usize = 4096;

/// A connection to a server of some kind (named in reasons), with what was read so far.
pub struct Exchange {
    stream: BoxedIo,
    /// Bytes read and not yet consumed.
    buffer: Vec<u8>,
    /// "a PostgreSQL", "an AMQP 0-9-1", …: what the server should have spoken.
    server: &'static str,
    /// The cap on the bytes read.
    pub limit: usize,
    /// The address connected to, for a check that compares it with what the server says.
    pub peer: Option<SocketAddr>,
}

impl Exchange {
    /// Connects to `endpoint` within `at`, over TLS with the run's settings when `tls` names
    /// the scheme without TLS (`redis://`, to suggest to a server that does not speak it).
    pub async fn open(
        endpoint: &Endpoint,
        context: &Context,
        tls: Option<&str>,
        server: &'static str,
        at: &Attempt,
    ) -> Result<Exchange, Failure> {
        let resolver = &context.resolver;
        let tcp = connect_tcp(endpoint, resolver, at).await?;
        let peer = tcp.peer_addr().ok();
        let mut stream: BoxedIo = Box::new(tcp);
        if let Some(plain) = tls {
            at.waiting_for(TLS_HANDSHAKE);
            let clients = context.tls()?;
            stream = tls::connect(stream, &endpoint.host, Alpn::None, plain, clients, at).await?;
            at.waiting_for(NOTHING_YET);
        }
        Ok(Exchange {
            stream,
            buffer: Vec::new(),
            server,
            limit: MAX_ANSWER,
            peer,
        })
    }

    pub async fn send(&mut self, request: &[u8]) -> Result<(), Failure> {
        let (sent, server) = (self.stream.write_all(request).await, self.server);
        sent.map_err(|e| format!("{} while sending (not {server} server?)", describe_io(&e)).into())
    }

    /// Reads more, up to the cap; `Ok(false)` at the end of the stream.
    async fn fill(&mut self) -> Result<bool, Failure> {
        let room = self.limit.saturating_sub(self.buffer.len()).min(1024);
        if room == 0 {
            let (server, limit) = (self.server, self.limit);
            return Err(format!("not {server} answer: more than {limit} bytes").into());
        }
        let mut chunk = [0; 1024];
        match self.stream.read(&mut chunk[..room]).await {
            Ok(n) => {
                self.buffer.extend_from_slice(&chunk[..n]);
                Ok(n > 0)
            }
            Err(err) => Err(Failure::Text(describe_io(&err))),
        }
    }

    /// The next `n` bytes.
    pub async fn exact(&mut self, n: usize) -> Result<Vec<u8>, Failure> {
        match self.exact_or_closed(n).await? {
            Some(bytes) => Ok(bytes),
            None => Err(self.closed()),
        }
    }

    /// The next `n` bytes, or `None` when the server closed the connection before sending any.
    pub async fn exact_or_closed(&mut self, n: usize) -> Result<Option<Vec<u8>>, Failure> {
        while self.buffer.len() < n {
            if !self.fill().await? {
                return match self.buffer.is_empty() {
                    true => Ok(None),
                    false => Err(self.closed()),
                };
            }
        }
        Ok(Some(self.buffer.drain(..n).collect()))
    }

    /// The next line, without its `\r\n` (or `\n`).
    pub async fn line(&mut self) -> Result<Vec<u8>, Failure> {
        let mut searched = 0;
        loop {
            if let Some(at) = self.buffer[searched..].iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.buffer.drain(..=searched + at).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            searched = self.buffer.len();
            if !self.fill().await? {
                return Err(self.closed());
            }
        }
    }

    /// Everything until the server closes the connection (at most the cap, and not nothing),
    /// unless what came so far already shows another protocol (`plausible` says no): then its
    /// first bytes are the reason at once, rather than a timeout waiting for a close that a
    /// server of another kind may never make.
    pub async fn until_closed_if(
        &mut self,
        plausible: impl Fn(&[u8]) -> bool,
    ) -> Result<Vec<u8>, Failure> {
        while self.fill().await? {
            if !plausible(&self.buffer) {
                return Err(self.unexpected(&self.buffer));
            }
        }
        match self.buffer.is_empty() {
            true => Err(self.closed()),
            false => Ok(std::mem::take(&mut self.buffer)),
        }
    }

    /// The reason for a connection closed before the answer was whole.
    fn closed(&self) -> Failure {
        let server = self.server;
        match self.buffer.is_empty() {
            true => format!("connection closed without an answer (not {server} server?)").into(),
            false => self.unexpected(&self.buffer),
        }
    }

    /// `not a Redis answer: "HTTP/1.1 400 Bad Request"`: the start of what came instead.
    pub fn unexpected(&self, answer: &[u8]) -> Failure {
        let start = String::from_utf8_lossy(&answer[..answer.len().min(40)]);
        format!("not {} answer: {}", self.server, quoted(&start)).into()
    }
}

/// A server's own words, fit for one line of output and cut short.
pub fn server_text(bytes: &[u8]) -> String {
    peer_text(String::from_utf8_lossy(bytes).trim())
}

/// Where `needle` first occurs in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{duplex, AsyncWriteExt};

    /// An exchange whose `server` (`a Redis`) has sent `answer`, then closed; it reads at most
    /// `limit` bytes.
    async fn answered(answer: &[u8], server: &'static str, limit: usize) -> Exchange {
        let (client, mut peer) = duplex(64 * 1024);
        peer.write_all(answer).await.unwrap();
        let (stream, buffer) = (Box::new(client), Vec::new());
        Exchange {
            stream,
            buffer,
            server,
            limit,
            peer: None,
        }
    }

    /// The reason a read failed with.
    fn reason(read: Result<Vec<u8>, Failure>) -> String {
        read.unwrap_err().to_string()
    }

    #[tokio::test]
    async fn lines_are_split_and_pipelined_answers_kept() {
        let mut exchange = answered(b"+OK\r\n+PONG\nrest", "a Redis", MAX_ANSWER).await;
        assert_eq!(exchange.line().await.unwrap(), b"+OK");
        assert_eq!(exchange.line().await.unwrap(), b"+PONG");
        let rest = exchange.line().await.unwrap_err();
        assert_eq!(rest, Failure::from("not a Redis answer: \"rest\""));
    }

    #[tokio::test]
    async fn past_the_cap_or_closed_early_the_reason_says_so() {
        let capped = "not a Redis answer: more than 10 bytes";
        let mut x100 = answered(&[b'x'; 100], "a Redis", 10).await;
        assert_eq!(reason(x100.line().await), capped);
        let mut x100 = answered(&[b'x'; 100], "a Redis", 10).await;
        assert_eq!(reason(x100.until_closed_if(|_| true).await), capped);
        let closed = "connection closed without an answer (not a Redis server?)";
        let mut nothing = answered(b"", "a Redis", MAX_ANSWER).await;
        assert_eq!(reason(nothing.exact(4).await), closed);
        let closed = "connection closed without an answer (not a ZooKeeper server?)";
        let mut nothing = answered(b"", "a ZooKeeper", MAX_ANSWER).await;
        assert_eq!(reason(nothing.until_closed_if(|_| true).await), closed);
        let short = "not a Redis answer: \"ab\"";
        let mut ab = answered(b"ab", "a Redis", MAX_ANSWER).await;
        assert_eq!(reason(ab.exact(4).await), short);
        let amqp = "not an AMQP 0-9-1 answer: \"\\u{1}\\0\"";
        let mut two = answered(b"\x01\x00", "an AMQP 0-9-1", MAX_ANSWER).await;
        assert_eq!(reason(two.exact(4).await), amqp);
    }
}
