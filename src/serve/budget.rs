//! A connection's budget of bytes read: a probe sends a few hundred, a gRPC client that keeps
//! its connection a few KiB, so a client that sends more is flooding (HTTP/2 SETTINGS, PING or
//! CONTINUATION frames, each of which costs readygate's one thread some work) and is cut off
//! once its budget is spent, whatever its frames say.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A stream that reads at most `left` more bytes, then fails every read.
pub struct Budgeted<S> {
    inner: S,
    left: usize,
    spent: Spent,
}

/// Whether a connection's budget ran out (a read was refused): kept by whoever counts why the
/// connection closed, since the stream itself is the HTTP library's by then.
#[derive(Clone, Default)]
pub struct Spent(Arc<AtomicBool>);

impl Spent {
    /// Whether a read was refused for want of budget.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl<S> Budgeted<S> {
    /// `inner`, allowed `budget` bytes read in all; `spent` is told when they run out.
    pub fn new(inner: S, budget: usize, spent: Spent) -> Budgeted<S> {
        Budgeted {
            inner,
            left: budget,
            spent,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Budgeted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.left == 0 {
            self.spent.0.store(true, Ordering::Relaxed);
            let spent = io::Error::new(io::ErrorKind::ConnectionAborted, "read budget spent");
            return Poll::Ready(Err(spent));
        }
        // Read into a window no larger than what is left, so the count is exact.
        let room = buf.remaining().min(self.left);
        let mut window = ReadBuf::new(buf.initialize_unfilled_to(room));
        let polled = Pin::new(&mut self.inner).poll_read(cx, &mut window);
        let read = window.filled().len();
        if let Poll::Ready(Ok(())) = polled {
            buf.advance(read);
            self.left -= read;
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Budgeted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn reads_stop_at_the_budget() {
        let (mut client, server) = tokio::io::duplex(1 << 16);
        client.write_all(&[7u8; 1000]).await.unwrap();
        let spent = Spent::default();
        let mut budgeted = Budgeted::new(server, 600, spent.clone());
        let mut read = vec![0u8; 4096];
        let mut total = 0;
        loop {
            match budgeted.read(&mut read).await {
                Ok(n) => total += n,
                Err(e) => {
                    assert_eq!(e.kind(), io::ErrorKind::ConnectionAborted);
                    break;
                }
            }
        }
        assert_eq!(total, 600);
        assert!(spent.get());
    }
}
