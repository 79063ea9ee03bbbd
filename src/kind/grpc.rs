//! `grpc://HOST:PORT[/SERVICE]` and `grpcs://…`: the standard `grpc.health.v1.Health/Check`
//! over HTTP/2 (prior knowledge for grpc, ALPN h2 for grpcs), ready only on `SERVING`.

pub mod wire;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderName, CONTENT_TYPE, TE, USER_AGENT};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};

use super::url_parts::TargetUrl;
use super::{Context, Kind};
use crate::error::describe_error;
use crate::error::Failure;
use crate::grammar::header::Header;
use crate::net::endpoint::Endpoint;
use crate::net::first_bytes::FirstBytes;
use crate::net::tls::Alpn;
use crate::runtime::Attempt;
use crate::text::peer_text;

/// The health-check method's path.
const CHECK_PATH: &str = "/grpc.health.v1.Health/Check";

/// The `User-Agent` readygate sends, in the form gRPC implementations use.
const AGENT: &str = concat!("grpc-readygate/", env!("CARGO_PKG_VERSION"));

/// The names of the gRPC status codes, by number.
const CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// A `grpc://` or `grpcs://` health-check target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcTarget {
    /// `grpcs://`: TLS with ALPN h2.
    pub tls: bool,
    pub endpoint: Endpoint,
    /// `host:port` as written: the `:authority` and TLS name.
    pub authority: String,
    /// The service asked about; empty means the whole server.
    pub service: String,
}

impl GrpcTarget {
    /// Local when sent through `--unix-socket` (`unix_socket`), or to a local host.
    pub fn is_local(&self, unix_socket: bool) -> bool {
        unix_socket || self.endpoint.host.is_local()
    }
}

/// Parses a `grpc://` or `grpcs://` URL.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let (authority, service) = url.rest.split_once('/').unwrap_or((url.rest, ""));
    if service.contains('/') {
        return Err("a gRPC service name has no '/'".into());
    }
    Ok(Kind::Grpc(GrpcTarget {
        tls: url.scheme == "grpcs",
        endpoint: Endpoint::parse(authority, None)?,
        authority: authority.to_string(),
        service: service.to_string(),
    }))
}

/// One attempt: ask the health service about the target's service over a fresh connection.
pub async fn check(target: &GrpcTarget, context: &Context, at: &Attempt) -> Result<(), Failure> {
    let (endpoint, tls) = (&target.endpoint, target.tls);
    let stream = super::http::connect(endpoint, tls, Alpn::H2, context, at).await?;
    let (stream, first) = crate::net::first_bytes::record(stream);
    let transport_error = |e: &hyper::Error| transport_error(e, &first);
    at.waiting_for("no response");
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .map_err(|e| transport_error(&e))?;
    let exchange = async {
        let response = sender
            .send_request(request(target, &context.options.headers)?)
            .await
            .map_err(|e| transport_error(&e))?;
        at.waiting_for("answer not complete");
        judge(response, &first).await
    };
    tokio::pin!(exchange);
    // The connection is driven here rather than spawned, so it ends with the attempt.
    tokio::select! {
        outcome = &mut exchange => outcome,
        ended = connection => match ended {
            Err(e) => Err(transport_error(&e)),
            // Closed after answering: the answer is already buffered.
            Ok(()) => exchange.await,
        },
    }
}

/// The health check call; `-H` headers become its metadata (an `authorization` token, a
/// tenant), as they do with grpcurl's `-H`.
fn request(target: &GrpcTarget, metadata: &[Header]) -> Result<Request<Full<Bytes>>, String> {
    let scheme = if target.tls { "https" } else { "http" };
    let body = Full::new(Bytes::from(wire::encode_request(&target.service)));
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(format!("{scheme}://{}{CHECK_PATH}", target.authority))
        .header(CONTENT_TYPE, "application/grpc")
        .header(TE, "trailers")
        .header(USER_AGENT, AGENT)
        .body(body)
        .map_err(|e| format!("invalid gRPC request: {e}"))?;
    // As for HTTP: a name given replaces readygate's own, an empty value only removes it.
    let metadata = metadata.iter().filter(|h| is_metadata(&h.name));
    crate::grammar::header::apply(request.headers_mut(), metadata);
    Ok(request)
}

/// Whether a `-H` header can be call metadata: not one the call itself is made of, nor one
/// HTTP/2 forbids (connection-specific), nor `Host` (the URL's authority is the `:authority`).
fn is_metadata(name: &HeaderName) -> bool {
    !matches!(
        name.as_str(),
        "content-type"
            | "te"
            | "host"
            | "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "upgrade"
    )
}

/// Reads the answer: the serving status when the call succeeded, else why it did not.
async fn judge(response: Response<Incoming>, first: &FirstBytes) -> Result<(), Failure> {
    let status = response.status();
    let (head, body) = response.into_parts();
    if status != StatusCode::OK {
        let status = status.as_u16();
        return Err(format!("HTTP status {status} (not a gRPC server?)").into());
    }
    let (message, trailers) = super::http::read_frames(body, wire::MAX_RESPONSE + 1)
        .await
        .map_err(|e| transport_error(&e, first))?;
    if message.len() > wire::MAX_RESPONSE {
        return Err("health response too large".into());
    }
    // A call that fails at once puts its status in the headers ("Trailers-Only").
    let ending = trailers.as_ref().unwrap_or(&head.headers);
    match grpc_status(ending) {
        None => Err(match head.headers.get(CONTENT_TYPE) {
            Some(kind) if !kind.as_bytes().starts_with(b"application/grpc") => {
                Failure::Text(format!(
                    "not a gRPC answer (content-type {})",
                    String::from_utf8_lossy(kind.as_bytes())
                ))
            }
            _ => "no grpc-status in the answer".into(),
        }),
        Some(0) => match wire::decode_response(&message)? {
            wire::SERVING => Ok(()),
            status => Err(Failure::Text(wire::status_name(status))),
        },
        Some(code) => Err(failed_call(code, ending)),
    }
}

/// The numeric `grpc-status`, if present and a number.
fn grpc_status(headers: &HeaderMap) -> Option<u32> {
    let value = headers.get("grpc-status")?.to_str().ok()?;
    value.trim().parse().ok()
}

/// A call that ended with a non-zero status. `NOT_FOUND` is how `Check` says the service is
/// unknown (the health protocol's `SERVICE_UNKNOWN`), so it is named so.
fn failed_call(code: u32, headers: &HeaderMap) -> Failure {
    let name = CODES.get(code as usize).copied().unwrap_or("UNKNOWN_CODE");
    let mut status = format!("grpc-status {code} {name}");
    if let Some(message) = headers.get("grpc-message").filter(|m| !m.is_empty()) {
        let message = crate::text::percent::decode(message.as_bytes());
        status = format!(
            "{status}: {}",
            peer_text(&String::from_utf8_lossy(&message))
        );
    }
    Failure::Text(match code {
        5 => format!("SERVICE_UNKNOWN ({status})"),
        _ => status,
    })
}

/// A failure below the gRPC call (connection, HTTP/2), named as such, or as the likely mistake
/// when the server's first bytes were not HTTP/2 (HTTP/2 reads them as a frame too large).
fn transport_error(err: &hyper::Error, first: &FirstBytes) -> Failure {
    Failure::Text(match first.spoken() {
        Some("HTTP/1") => "the server answered in HTTP/1: is this a gRPC port?".into(),
        Some("TLS") => "the server speaks TLS: try grpcs://".into(),
        _ if first.text().is_some() => format!(
            "the server answered in text ({}…), not HTTP/2: is this a gRPC port?",
            crate::text::quoted(&first.text().unwrap_or_default())
        ),
        _ if err.is_closed() || describe_error(err).ends_with("connection closed") => format!(
            "gRPC transport: {} (closed without an HTTP/2 answer: is this a gRPC port?)",
            describe_error(err)
        ),
        _ => format!("gRPC transport: {}", describe_error(err)),
    })
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

    use super::*;
    use crate::kind::target::Target;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn failed_calls_are_named() {
        let unknown = "SERVICE_UNKNOWN (grpc-status 5 NOT_FOUND: unknown service)";
        for (code, message, named) in [
            (
                12,
                Some("no grpc.Health"),
                "grpc-status 12 UNIMPLEMENTED: no grpc.Health",
            ),
            (5, Some("unknown%20service"), unknown),
            (14, None, "grpc-status 14 UNAVAILABLE"),
            (99, None, "grpc-status 99 UNKNOWN_CODE"),
        ] {
            let given: Vec<_> = message.map(|m| ("grpc-message", m)).into_iter().collect();
            assert_eq!(failed_call(code, &headers(&given)), Failure::from(named));
        }
    }

    #[test]
    fn h_headers_become_metadata_except_the_calls_own() {
        let Kind::Grpc(target) = Target::parse("grpc://h:1").unwrap().kind else {
            panic!()
        };
        let given: Vec<Header> = [
            "Authorization: Bearer t",
            "X-Tenant: a",
            "x-tenant: b",
            "Content-Type: text/plain",
            "Connection: keep-alive",
            "User-Agent:",
        ]
        .iter()
        .map(|h| Header::parse(h).unwrap())
        .collect();
        let request = request(&target, &given).unwrap();
        let headers = request.headers();
        assert_eq!(headers["authorization"], "Bearer t");
        assert_eq!(headers.get_all("x-tenant").iter().count(), 2);
        assert_eq!(headers["content-type"], "application/grpc");
        assert!(headers.get("connection").is_none());
        assert!(headers.get("user-agent").is_none());
    }

    #[test]
    fn grpc_status_is_read_from_headers_or_trailers() {
        assert_eq!(grpc_status(&headers(&[("grpc-status", "0")])), Some(0));
        assert_eq!(grpc_status(&headers(&[("grpc-status", "x")])), None);
        assert_eq!(grpc_status(&HeaderMap::new()), None);
    }
}
