//! The server side of `grpc.health.v1.Health/Check` (the kubelet's `grpc:` probe): service ""
//! is every target, a group's NAME its targets; SERVING when they are ready, else NOT_SERVING.
//! `Watch` and every other method are UNIMPLEMENTED.

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response};

use super::answer::{App, Body};
use super::metrics::Code;
use crate::kind::grpc::wire;

/// The one method answered.
const CHECK_PATH: &str = "/grpc.health.v1.Health/Check";

/// The largest request read; a health request is a service name.
const MAX_REQUEST: usize = 4096;

/// `ServingStatus` values answered.
const SERVING: u8 = 1;
const NOT_SERVING: u8 = 2;

/// gRPC status codes used, with their names (what `/metrics` counts the call as).
const INVALID_ARGUMENT: (u32, &str) = (3, "INVALID_ARGUMENT");
const DEADLINE_EXCEEDED: (u32, &str) = (4, "DEADLINE_EXCEEDED");
const NOT_FOUND: (u32, &str) = (5, "NOT_FOUND");
const UNIMPLEMENTED: (u32, &str) = (12, "UNIMPLEMENTED");

/// Reads one gRPC call, its message by `by`: the targets it asks about, or its failure.
pub async fn read(
    app: &App,
    request: Request<Incoming>,
    by: tokio::time::Instant,
) -> Result<&[usize], Response<Body>> {
    if request.method() != Method::POST || request.uri().path() != CHECK_PATH {
        return Err(failed(
            UNIMPLEMENTED,
            "only%20grpc.health.v1.Health/Check%20is%20served",
        ));
    }
    let read = crate::kind::http::read_frames(request.into_body(), MAX_REQUEST + 1);
    let Ok(body) = tokio::time::timeout_at(by, read).await else {
        return Err(failed(
            DEADLINE_EXCEEDED,
            "request%20not%20sent%20in%20time",
        ));
    };
    let service = match body {
        Ok((body, _)) if body.len() <= MAX_REQUEST => wire::decode_request(&body),
        Ok(_) => Err("request too large".into()),
        Err(_) => Err("request not complete".into()),
    };
    let Ok(service) = service else {
        return Err(failed(INVALID_ARGUMENT, "undecodable%20HealthCheckRequest"));
    };
    app.members(&service)
        .ok_or_else(|| failed(NOT_FOUND, "unknown%20service"))
}

/// Answers a health check on `members`: `SERVING` when they are ready.
pub async fn respond(app: &App, members: &[usize]) -> Response<Body> {
    let (status, name) = match app.verdict(members).await.ready {
        true => (SERVING, "SERVING"),
        false => (NOT_SERVING, "NOT_SERVING"),
    };
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let message = Bytes::copy_from_slice(&wire::encode_response(status));
    let body = Full::new(message)
        .with_trailers(std::future::ready(Some(Ok(trailers))))
        .boxed();
    let mut response = grpc_response(body);
    response.extensions_mut().insert(Code::Grpc(name));
    response
}

/// A call that failed, in the headers alone ("Trailers-Only"); `message` is percent-encoded.
fn failed((code, name): (u32, &'static str), message: &'static str) -> Response<Body> {
    let mut response = grpc_response(Full::new(Bytes::new()).boxed());
    response.extensions_mut().insert(Code::Grpc(name));
    let headers = response.headers_mut();
    headers.insert("grpc-status", HeaderValue::from(code));
    headers.insert("grpc-message", HeaderValue::from_static(message));
    response
}

fn grpc_response(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    let kind = HeaderValue::from_static("application/grpc");
    response.headers_mut().insert(CONTENT_TYPE, kind);
    response
}
