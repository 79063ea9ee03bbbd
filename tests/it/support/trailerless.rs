//! A broken gRPC server over cleartext HTTP/2 (h2c, as `grpc://` speaks): it answers the health
//! check with headers and a `SERVING` message, then never sends the trailers that carry
//! `grpc-status`, so the call never completes. A client that trusts the message without the
//! status, or waits for trailers without a bound, is caught by it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::body::{Body, Bytes, Frame, Incoming};
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};

/// `HealthCheckResponse { status: SERVING }`, framed: no compression, 2-byte length, field 1 = 1.
const SERVING: [u8; 7] = [0, 0, 0, 0, 2, 0x08, 0x01];

/// A response body that yields one message and then neither ends nor sends trailers.
struct NoTrailers {
    sent: bool,
}

impl Body for NoTrailers {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.sent {
            // Never woken again: the stream stays open until the client gives up.
            return Poll::Pending;
        }
        self.sent = true;
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(&SERVING)))))
    }
}

/// A running h2c server that never finishes a call.
pub struct TrailerlessGrpc {
    /// Where it listens.
    pub addr: SocketAddr,
    calls: Arc<AtomicUsize>,
}

impl TrailerlessGrpc {
    /// Starts the server on a free loopback port.
    pub fn start() -> TrailerlessGrpc {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        super::serve_on_thread(listener, move |stream| {
            let counter = counter.clone();
            async move {
                let service = service_fn(move |_: Request<Incoming>| {
                    counter.fetch_add(1, Ordering::SeqCst);
                    async {
                        let response = Response::builder()
                            .status(200)
                            .header("content-type", "application/grpc")
                            .body(NoTrailers { sent: false })
                            .expect("response");
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            }
        });
        TrailerlessGrpc { addr, calls }
    }

    /// How many health-check calls it has received.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}
