//! The first bytes a peer sent, kept while a client library owns the stream, so that a failure
//! the library words in its own terms ("frame with invalid size") can say what the peer spoke.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::transport::BoxedIo;

/// How many of the first bytes are kept: enough for `HTTP/1.1` or a TLS record header.
const KEPT: usize = 8;

/// The first bytes read from a [`Recorded`] stream, readable after it is handed away.
#[derive(Debug, Clone, Default)]
pub struct FirstBytes(Arc<Mutex<Vec<u8>>>);

impl FirstBytes {
    /// The first bytes, when they are printable text (`-ERR unk`, a Redis's answer): the
    /// peer speaks a text protocol, which a binary one reads as garbage.
    pub fn text(&self) -> Option<String> {
        let first = self.0.lock().map(|bytes| bytes.clone()).unwrap_or_default();
        let printable = |b: &u8| b.is_ascii_graphic() || *b == b' ' || *b == b'\r' || *b == b'\n';
        (!first.is_empty() && first.iter().all(printable))
            .then(|| String::from_utf8_lossy(&first).into_owned())
    }

    /// What the peer was speaking, if its first bytes say: `"HTTP/1"` or `"TLS"`.
    pub fn spoken(&self) -> Option<&'static str> {
        let first = self.0.lock().map(|bytes| bytes.clone()).unwrap_or_default();
        if first.starts_with(b"HTTP/1") {
            Some("HTTP/1")
        } else if first.len() >= 2 && (0x14..=0x17).contains(&first[0]) && first[1] == 3 {
            // A TLS record: its content type, then major version 3.
            Some("TLS")
        } else {
            None
        }
    }
}

/// A stream that keeps its first bytes in a [`FirstBytes`].
pub struct Recorded {
    inner: BoxedIo,
    first: FirstBytes,
}

/// Wraps `stream`, returning it and where its first bytes will be.
pub fn record(stream: BoxedIo) -> (Recorded, FirstBytes) {
    let first = FirstBytes::default();
    let inner = stream;
    (
        Recorded {
            inner,
            first: first.clone(),
        },
        first,
    )
}

impl AsyncRead for Recorded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Ok(mut first) = self.first.0.lock() {
            let room = KEPT.saturating_sub(first.len());
            let read = &buf.filled()[before..];
            first.extend_from_slice(&read[..read.len().min(room)]);
        }
        polled
    }
}

impl AsyncWrite for Recorded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
