//! An in-process HTTP/1 server on 127.0.0.1 with scripted answers, on its own thread, counting
//! the requests it gets so a test can fail if the server was never called. It can take HTTPS
//! and plain HTTP on one port, to see what a client sends in clear text after a redirect.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsAcceptor;

use super::certs::Certs;

/// What the test's handler sees of a request.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Method, e.g. `GET`.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Headers, names lower case.
    pub headers: Vec<(String, String)>,
    /// It came over TLS.
    pub tls: bool,
}

impl Seen {
    /// The value of header `name`, if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A scripted answer: status, headers, body.
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(&'static str, String)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Answer {
    /// A status with an empty body.
    pub fn status(status: u16) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A 200 with this body.
    pub fn body(body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Answer {
        self.headers.push((name, value.into()));
        self
    }
}

type Handler = dyn Fn(&Seen, usize) -> Answer + Send + Sync;

/// A running server; it stops with the test process.
pub struct HttpServer {
    /// Where it listens.
    pub addr: SocketAddr,
    hits: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl HttpServer {
    /// Starts a server whose handler gets each request and its 0-based number.
    pub fn start(handler: impl Fn(&Seen, usize) -> Answer + Send + Sync + 'static) -> HttpServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        Self::serve(listener, Arc::new(handler), None)
    }

    /// Starts a server on 127.0.0.1:`port` (a port a test chose before the server was due).
    pub fn start_on(
        port: u16,
        handler: impl Fn(&Seen, usize) -> Answer + Send + Sync + 'static,
    ) -> HttpServer {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind");
        Self::serve(listener, Arc::new(handler), None)
    }

    /// As [`HttpServer::start`], taking HTTPS with `certs`' server certificate and plain HTTP
    /// on the same port: a connection whose first byte starts a TLS handshake (0x16) is TLS.
    pub fn start_tls_and_plain(
        certs: &Certs,
        handler: impl Fn(&Seen, usize) -> Answer + Send + Sync + 'static,
    ) -> HttpServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let acceptor = TlsAcceptor::from(Arc::new(certs.server_config()));
        Self::serve(listener, Arc::new(handler), Some(acceptor))
    }

    fn serve(
        listener: std::net::TcpListener,
        handler: Arc<Handler>,
        tls: Option<TlsAcceptor>,
    ) -> HttpServer {
        let addr = listener.local_addr().expect("local addr");
        let counters = Counters {
            hits: Arc::new(AtomicUsize::new(0)),
            seen: Arc::new(Mutex::new(Vec::new())),
        };
        let server = HttpServer {
            addr,
            hits: counters.hits.clone(),
            seen: counters.seen.clone(),
        };
        super::serve_on_thread(listener, move |stream| {
            let (handler, counters, tls) = (handler.clone(), counters.clone(), tls.clone());
            async move {
                let Some(acceptor) = tls else {
                    return connection(stream, false, handler, counters).await;
                };
                let mut first = [0u8; 1];
                if !matches!(stream.peek(&mut first).await, Ok(1)) {
                    return;
                }
                if first[0] != 0x16 {
                    return connection(stream, false, handler, counters).await;
                }
                if let Ok(stream) = acceptor.accept(stream).await {
                    connection(stream, true, handler, counters).await;
                }
            }
        });
        server
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How many requests it has answered.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// The requests it has seen.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// What the server has seen, shared with its connections.
#[derive(Clone)]
struct Counters {
    hits: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// Serves one connection (`tls`: it came over TLS) with `handler`.
async fn connection<Io>(stream: Io, tls: bool, handler: Arc<Handler>, counters: Counters)
where
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request: Request<Incoming>| {
        let request_seen = Seen {
            method: request.method().to_string(),
            path: request
                .uri()
                .path_and_query()
                .map(|p| p.to_string())
                .unwrap_or_default(),
            headers: request
                .headers()
                .iter()
                .map(|(n, v)| {
                    (
                        n.to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            tls,
        };
        let number = counters.hits.fetch_add(1, Ordering::SeqCst);
        counters.seen.lock().unwrap().push(request_seen.clone());
        let answer = handler(&request_seen, number);
        async move {
            let mut response = Response::builder().status(answer.status);
            for (name, value) in answer.headers {
                response = response.header(name, value);
            }
            Ok::<_, Infallible>(response.body(Full::new(Bytes::from(answer.body))).unwrap())
        }
    });
    let _ = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}
