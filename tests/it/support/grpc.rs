//! An in-process gRPC health server (HTTP/2, prior knowledge) with scripted answers, for the
//! answers a real server cannot be made to give on demand: `NOT_SERVING`, `UNKNOWN`, a failed
//! call with its message. etcd covers the real thing (see `grpc.rs`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::HeaderMap;
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};

/// How a call is answered.
#[derive(Debug, Clone, Copy)]
pub enum Health {
    /// `grpc-status: 0` with this `ServingStatus` value (1 SERVING, 2 NOT_SERVING, ...).
    Status(u8),
    /// A failed call ("Trailers-Only"): `grpc-status` and `grpc-message` in the headers.
    Fail(u32, &'static str),
}

/// One call's headers: (name in lower case, value) pairs in order.
pub type Metadata = Vec<(String, String)>;

/// A running server; its thread ends with the test binary.
pub struct GrpcServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The service names asked about, in order.
    asked: Arc<Mutex<Vec<String>>>,
    /// Each call's headers (metadata), names lower case, in order.
    metadata: Arc<Mutex<Vec<Metadata>>>,
}

impl GrpcServer {
    /// Starts a server on 127.0.0.1 answering every call with `answer(service)`.
    pub fn start(answer: fn(&str) -> Health) -> GrpcServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let asked = Arc::new(Mutex::new(Vec::new()));
        let metadata = Arc::new(Mutex::new(Vec::new()));
        serve(listener, answer, asked.clone(), metadata.clone());
        GrpcServer {
            addr,
            asked,
            metadata,
        }
    }

    /// The metadata of every call so far.
    pub fn metadata(&self) -> Vec<Metadata> {
        self.metadata.lock().unwrap().clone()
    }

    /// The service names asked about so far.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

fn serve(
    listener: std::net::TcpListener,
    answer: fn(&str) -> Health,
    asked: Arc<Mutex<Vec<String>>>,
    metadata: Arc<Mutex<Vec<Metadata>>>,
) {
    super::serve_on_thread(listener, move |stream| {
        let asked = asked.clone();
        let metadata = metadata.clone();
        async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let asked = asked.clone();
                let headers = request
                    .headers()
                    .iter()
                    .map(|(n, v)| {
                        (
                            n.to_string(),
                            String::from_utf8_lossy(v.as_bytes()).into_owned(),
                        )
                    })
                    .collect();
                metadata.lock().unwrap().push(headers);
                async move {
                    let body = request.into_body().collect().await.map(|b| b.to_bytes());
                    let service = body.map(|b| service_name(&b)).unwrap_or_default();
                    asked.lock().unwrap().push(service.clone());
                    Ok::<_, Infallible>(respond(answer(&service)))
                }
            });
            let _ = http2::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
    });
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn respond(health: Health) -> Response<Body> {
    let response = Response::builder().header("content-type", "application/grpc");
    match health {
        Health::Status(status) => {
            let message = Bytes::from(vec![0, 0, 0, 0, 2, 0x08, status]);
            let mut trailers = HeaderMap::new();
            trailers.insert("grpc-status", "0".parse().unwrap());
            let body = Full::new(message)
                .with_trailers(async move { Some(Ok(trailers)) })
                .boxed();
            response.body(body).unwrap()
        }
        Health::Fail(code, message) => response
            .header("grpc-status", code.to_string())
            .header("grpc-message", message.replace(' ', "%20"))
            .body(Full::new(Bytes::new()).boxed())
            .unwrap(),
    }
}

/// Field 1 of the one length-prefixed `HealthCheckRequest` (names shorter than 128 bytes).
fn service_name(body: &[u8]) -> String {
    match body.get(5..) {
        Some([0x0a, length, name @ ..]) if name.len() == usize::from(*length) => {
            String::from_utf8_lossy(name).into_owned()
        }
        _ => String::new(),
    }
}
