//! A short exchange with a server for the protocol checks: a constant request, then an answer
//! read with a cap on its bytes (the engine's attempt timeout bounds the time). Server text is
//! shown with control characters escaped.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::error::describe_io;
use crate::error::Failure;
use crate::net::transport::BoxedIo;
use crate::redact::{one_line, quoted};

/// The most bytes read from a server in one attempt, unless a check says otherwise: every
/// readiness answer fits with room to spare.
pub const MAX_ANSWER: usize = 4096;

/// How many bytes of an unexpected answer a reason quotes.
const QUOTED: usize = 40;

/// A connection to a server speaking `protocol` (named in reasons), with what was read so far.
pub struct Exchange {
    /// The connection.
    stream: BoxedIo,
    /// Bytes read and not yet consumed.
    buffer: Vec<u8>,
    /// "PostgreSQL", "Redis", …: what the server should have spoken.
    protocol: &'static str,
    /// The cap on the bytes read.
    limit: usize,
}

impl Exchange {
    /// An exchange over `stream` reading at most [`MAX_ANSWER`] bytes.
    pub fn new(stream: BoxedIo, protocol: &'static str) -> Exchange {
        Exchange {
            stream,
            buffer: Vec::new(),
            protocol,
            limit: MAX_ANSWER,
        }
    }

    /// The same with a cap of `limit` bytes.
    pub fn with_limit(mut self, limit: usize) -> Exchange {
        self.limit = limit;
        self
    }

    /// Sends the request.
    pub async fn send(&mut self, request: &[u8]) -> Result<(), Failure> {
        self.stream.write_all(request).await.map_err(|err| {
            Failure::Protocol(format!(
                "{} while sending (not {} server?)",
                describe_io(&err),
                article(self.protocol)
            ))
        })
    }

    /// Reads more, up to the cap; `Ok(false)` at the end of the stream.
    async fn fill(&mut self) -> Result<bool, Failure> {
        if self.buffer.len() >= self.limit {
            return Err(Failure::Protocol(format!(
                "not {} answer: more than {} bytes",
                article(self.protocol),
                self.limit
            )));
        }
        let mut chunk = [0; 1024];
        let room = chunk.len().min(self.limit - self.buffer.len());
        match self.stream.read(&mut chunk[..room]).await {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.buffer.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(err) => Err(Failure::Protocol(describe_io(&err))),
        }
    }

    /// The next `n` bytes.
    pub async fn exact(&mut self, n: usize) -> Result<Vec<u8>, Failure> {
        while self.buffer.len() < n {
            if !self.fill().await? {
                return Err(self.closed());
            }
        }
        Ok(self.buffer.drain(..n).collect())
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

    /// Everything until the server closes the connection (at most the cap).
    pub async fn until_closed(&mut self) -> Result<Vec<u8>, Failure> {
        while self.fill().await? {}
        Ok(std::mem::take(&mut self.buffer))
    }

    /// The reason for a connection closed before the answer was whole.
    fn closed(&self) -> Failure {
        if self.buffer.is_empty() {
            Failure::Protocol(format!(
                "connection closed without an answer (not {} server?)",
                article(self.protocol)
            ))
        } else {
            self.unexpected(&self.buffer)
        }
    }

    /// The reason for an answer this protocol does not give, quoting its start.
    pub fn unexpected(&self, answer: &[u8]) -> Failure {
        unexpected(self.protocol, answer)
    }
}

/// `not a Redis answer: "HTTP/1.1 400 Bad Request"`: the start of what came instead.
pub fn unexpected(protocol: &str, answer: &[u8]) -> Failure {
    let start = &answer[..answer.len().min(QUOTED)];
    Failure::Protocol(format!(
        "not {} answer: {}",
        article(protocol),
        quoted(&String::from_utf8_lossy(start))
    ))
}

/// `a Redis`, `an AMQP 0-9-1`.
fn article(protocol: &str) -> String {
    match protocol.as_bytes().first() {
        Some(b'A' | b'E' | b'I' | b'O' | b'U') => format!("an {protocol}"),
        _ => format!("a {protocol}"),
    }
}

/// A server's own words, fit for one line of output.
pub fn server_text(bytes: &[u8]) -> String {
    one_line(String::from_utf8_lossy(bytes).trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{duplex, AsyncWriteExt};

    /// An exchange whose server has sent `answer`, then closed.
    async fn answered(answer: &[u8], limit: usize) -> Exchange {
        let (client, mut server) = duplex(64 * 1024);
        server.write_all(answer).await.unwrap();
        drop(server);
        Exchange::new(Box::new(client), "Redis").with_limit(limit)
    }

    #[tokio::test]
    async fn lines_are_split_and_pipelined_answers_kept() {
        let mut exchange = answered(b"+OK\r\n+PONG\nrest", MAX_ANSWER).await;
        assert_eq!(exchange.line().await.unwrap(), b"+OK");
        assert_eq!(exchange.line().await.unwrap(), b"+PONG");
        assert_eq!(
            exchange.line().await.unwrap_err(),
            Failure::from("not a Redis answer: \"rest\"")
        );
    }

    #[tokio::test]
    async fn an_answer_past_the_cap_is_not_read() {
        let mut exchange = answered(&[b'x'; 100], 10).await;
        assert_eq!(
            exchange.line().await.unwrap_err(),
            Failure::from("not a Redis answer: more than 10 bytes")
        );
        let mut exchange = answered(&[b'x'; 100], 10).await;
        assert!(exchange.until_closed().await.is_err());
    }

    #[tokio::test]
    async fn a_close_before_the_answer_is_named() {
        let mut exchange = answered(b"", MAX_ANSWER).await;
        assert_eq!(
            exchange.exact(4).await.unwrap_err(),
            Failure::from("connection closed without an answer (not a Redis server?)")
        );
        let mut exchange = answered(b"ab", MAX_ANSWER).await;
        assert_eq!(
            exchange.exact(4).await.unwrap_err(),
            Failure::from("not a Redis answer: \"ab\"")
        );
        assert_eq!(
            unexpected("AMQP 0-9-1", b"\x01\x00"),
            Failure::from("not an AMQP 0-9-1 answer: \"\\u{1}\\0\"")
        );
    }
}
