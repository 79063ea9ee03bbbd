//! `http://` and `https://`: ready when a response has an accepted status and, with
//! `--header-matches`, `--contains`/`--matches` and `--json-field`, the headers and a body that
//! match. Redirects are handled as the kubelet does.

mod informational;
mod json;
pub mod redirect;
pub mod request;
mod retry_after;

use std::future::Future;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderMap, LOCATION};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::rt::TokioIo;

use super::url_parts::TargetUrl;
use super::{Context, HttpMethod, Kind};
use crate::error::describe_error;
use crate::error::Failure;
use crate::grammar::expect::{HeaderMatch, JsonField};
use crate::grammar::matcher::{Matcher, MAX_BODY};
use crate::net::endpoint::Endpoint;
use crate::net::tls::Alpn;
use crate::net::transport::{self, BoxedIo};
use crate::runtime::lane::Lane;
use crate::runtime::{Attempt, NOTHING_YET, TLS_HANDSHAKE};
use crate::text::quoted;

use redirect::Redirect;
use request::Carry;

/// How much of the body a status-only check reads, as the kubelet does: a body that stalls
/// within it is not ready at the attempt timeout.
const STATUS_BODY: usize = 10 * 1024;

/// An `http://` or `https://` URL, split into what a request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// `https://`: speak TLS, verify the server name.
    pub tls: bool,
    /// Where to connect (unless `--unix-socket` says otherwise).
    pub endpoint: Endpoint,
    /// `host[:port]` as written in the URL, without credentials: the `Host` header and TLS name.
    pub authority: String,
    /// Path and query, at least `/`.
    pub path: String,
    /// `user:password` from the URL, percent-decoded (`p%40ss` is `p@ss`), sent as basic
    /// authentication and never printed.
    pub credentials: Option<Vec<u8>>,
}

impl HttpTarget {
    /// Local when sent through `--unix-socket` (`unix_socket`), or to a local host.
    pub fn is_local(&self, unix_socket: bool) -> bool {
        unix_socket || self.endpoint.host.is_local()
    }
}

/// Parses an `http://` or `https://` URL, whole.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    let tls = url.scheme == "https";
    let uri: Uri = url.text.parse().map_err(|e| format!("invalid URL: {e}"))?;
    let authority = uri.authority().ok_or("missing host")?.as_str();
    let (credentials, written) = match authority.rsplit_once('@') {
        Some((userinfo, written)) => (
            Some(crate::text::percent::decode(userinfo.as_bytes())),
            written,
        ),
        None => (None, authority),
    };
    let path = match uri.path_and_query().map_or("", |p| p.as_str()) {
        "" => "/".to_string(),
        path if path.starts_with('/') => path.to_string(),
        path => format!("/{path}"),
    };
    Ok(Kind::Http(HttpTarget {
        tls,
        endpoint: Endpoint::parse(written, Some(if tls { 443 } else { 80 }))?,
        authority: written.to_string(),
        path,
        credentials,
    }))
}

/// A request that got no HTTP answer, with the likely mistake: a port that speaks another
/// protocol closes the connection (Redis does on a `Host:` line) or answers in its own.
fn not_http(err: &hyper::Error) -> Failure {
    let said = describe_error(err);
    let hint = match (err.is_incomplete_message(), err.is_parse()) {
        (true, _) => " (closed without an HTTP answer: is this an HTTP port?)",
        (_, true) => " (the answer is not HTTP: is this an HTTP port?)",
        _ => "",
    };
    Failure::Text(format!("{said}{hint}"))
}

/// One attempt: request, following same-host redirects, then judge status and body.
pub async fn check(
    target: &HttpTarget,
    context: &Context,
    lane: &Lane,
    at: &Attempt,
) -> Result<(), Failure> {
    let options = &context.options;
    let mut redirected: Option<HttpTarget> = None;
    let mut carry = Carry::ALL;
    let most = options.redirects.most_requests();
    for _ in 0..most {
        let current = redirected.as_ref().unwrap_or(target);
        let judge = |response| answer(current, response, options, lane, at);
        let Redirect::Follow { mut next, absolute } =
            exchange(current, context, carry, judge, at).await?
        else {
            return Ok(());
        };
        // Secrets go to the origin the user named only: curl's rule (CVE-2022-27776).
        carry.secrets = next.tls == target.tls && next.endpoint == target.endpoint;
        carry.custom_host &= !absolute;
        if next.credentials.is_none() && carry.secrets {
            next.credentials.clone_from(&target.credentials);
        }
        redirected = Some(next);
    }
    Err(Failure::Text(format!("stopped after {most} redirects")))
}

/// Judges one response: a redirect to follow, a refused status or body, or (as
/// [`Redirect::Answer`]) an accepted one.
async fn answer(
    current: &HttpTarget,
    response: Response<Incoming>,
    options: &super::Options,
    lane: &Lane,
    at: &Attempt,
) -> Result<Redirect, Failure> {
    let status = response.status();
    let location = response.headers().get(LOCATION);
    let redirect = redirect::next(current, status, location, options.redirects)?;
    if let Redirect::Follow { .. } = redirect {
        return Ok(redirect);
    }
    if !options.statuses.contains(status.as_u16()) {
        let now = std::time::SystemTime::now();
        if let Some(wait) = retry_after::requested(status, response.headers(), now) {
            at.retry_not_before(wait);
        }
        return Err(Failure::status(status.as_u16()));
    }
    for expected in &options.header_matches {
        header_matches(response.headers(), expected)?;
    }
    let get = options.method == HttpMethod::Get;
    let matcher = options.matcher.clone().filter(|_| get);
    let fields = options.json_fields.clone();
    // Without a body to match, the answer is whole when its first 10 KiB have come (kubelet).
    if matcher.is_none() && (fields.is_empty() || !get) {
        read_body(response.into_body(), STATUS_BODY).await?;
        return Ok(Redirect::Answer);
    }
    let body = read_body(response.into_body(), MAX_BODY).await?;
    at.waiting_for(NOTHING_YET);
    // A regex or a parse over a hostile megabyte can take a while: off the timers' thread.
    lane.run(move || judge_body(&body, matcher.as_ref(), &fields))
        .await??;
    Ok(Redirect::Answer)
}

/// Whether a body holds what `--contains`/`--matches` and every `--json-field` ask.
fn judge_body(body: &[u8], matcher: Option<&Matcher>, fields: &[JsonField]) -> Result<(), Failure> {
    if let Some(matcher) = matcher.filter(|matcher| !matcher.is_match(body)) {
        return Err(Failure::Text(matcher.failure("body")));
    }
    for field in fields {
        json::judge(body, field).map_err(|reason| match body.len() >= MAX_BODY {
            true => Failure::Text(format!("{reason}; only its first 1 MiB is read")),
            false => Failure::Text(reason),
        })?;
    }
    Ok(())
}

/// Whether an answer has the header `expected` names with a value that matches (any one of
/// several); a secret header's value is never quoted.
fn header_matches(headers: &HeaderMap, expected: &HeaderMatch) -> Result<(), Failure> {
    let name = &expected.name;
    let mut values = headers.get_all(name).iter().peekable();
    let Some(first) = values.peek().map(|value| value.as_bytes()) else {
        return Err(Failure::Text(format!("no header {name}")));
    };
    let text = |value: &[u8]| String::from_utf8_lossy(value).into_owned();
    if values.any(|value| expected.regex.is_match(&text(value.as_bytes()))) {
        return Ok(());
    }
    let shown = match crate::grammar::header::is_secret(name.as_str()) {
        true => "(value hidden)".to_string(),
        false => format!("\"{}\"", crate::text::peer_text(&text(first))),
    };
    let pattern = quoted(expected.regex.as_str());
    Err(Failure::Text(format!(
        "header {name} {shown} did not match {pattern}"
    )))
}

/// One request with the context's method over a fresh connection, no redirect followed and
/// no body read: the status it got. For `--on-exit`'s POST, which is a notice, not a check.
pub async fn send(
    target: &HttpTarget,
    context: &Context,
    at: &Attempt,
) -> Result<StatusCode, Failure> {
    let status = |response: Response<Incoming>| async move { Ok(response.status()) };
    exchange(target, context, Carry::ALL, status, at).await
}

/// Sends one request over a fresh connection and hands the response (body unread) to `judge`.
async fn exchange<T, F, J>(
    target: &HttpTarget,
    context: &Context,
    carry: Carry,
    judge: J,
    at: &Attempt,
) -> Result<T, Failure>
where
    J: FnOnce(Response<Incoming>) -> F,
    F: Future<Output = Result<T, Failure>>,
{
    let options = &context.options;
    let method = match options.method {
        HttpMethod::Get => hyper::Method::GET,
        HttpMethod::Head => hyper::Method::HEAD,
        HttpMethod::Post => hyper::Method::POST,
    };
    let request = request::build(target, method, &options.headers, carry)?;
    let stream = connect(&target.endpoint, target.tls, Alpn::Http1, context, at).await?;
    roundtrip(stream, request, judge, at).await
}

/// A fresh connection to `endpoint` (or `--unix-socket`), in TLS offering `alpn` if `tls`.
pub async fn connect(
    endpoint: &Endpoint,
    tls: bool,
    alpn: Alpn,
    context: &Context,
    at: &Attempt,
) -> Result<BoxedIo, Failure> {
    let unix_socket = context.options.unix_socket.as_deref();
    let stream = transport::open(endpoint, unix_socket, &context.resolver, at).await?;
    if !tls {
        return Ok(stream);
    }
    at.waiting_for(TLS_HANDSHAKE);
    let plain = match alpn {
        Alpn::H2 => "grpc://",
        Alpn::Http1 | Alpn::None => "http://",
    };
    crate::net::tls::connect(stream, &endpoint.host, alpn, plain, context.tls()?, at).await
}

/// Sends `request` as the only one over `stream` and hands the response (body unread) to
/// `judge`. The connection is driven here, alongside `judge`, rather than spawned: no task to
/// allocate and wake, and the socket closes when this returns, so none outlives its attempt.
pub async fn roundtrip<T, F, J, B>(
    stream: BoxedIo,
    mut request: Request<B>,
    judge: J,
    at: &Attempt,
) -> Result<T, Failure>
where
    J: FnOnce(Response<Incoming>) -> F,
    F: Future<Output = Result<T, Failure>>,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let informational = informational::Guard::attach(&mut request);
    at.waiting_for("no response");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| describe_error(&e))?;
    let exchange = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| not_http(&e))?;
        at.waiting_for("body not complete");
        judge(response).await
    };
    tokio::pin!(exchange);
    // Cancellation: dropping this future drops every arm, which closes the connection.
    tokio::select! {
        // The exchange first: it queues the request before the connection's first poll looks.
        biased;
        outcome = &mut exchange => outcome,
        // Ended first, with or without an error: hyper has handed the outcome to the request
        // and its body, so the exchange finishes from what it was given.
        _ = connection => exchange.await,
        failure = informational.tripped() => Err(failure),
    }
}

/// Reads at most `most` bytes of the body (a longer one is cut, never read to its end), and
/// the trailers that end it within them.
pub async fn read_frames(
    mut body: Incoming,
    most: usize,
) -> Result<(Vec<u8>, Option<HeaderMap>), hyper::Error> {
    let mut collected = Vec::new();
    let mut trailers = None;
    while collected.len() < most {
        let Some(frame) = body.frame().await else {
            break;
        };
        match frame?.into_data() {
            Ok(data) => {
                let room = most - collected.len();
                collected.extend_from_slice(&data[..data.len().min(room)]);
            }
            Err(frame) => trailers = frame.into_trailers().ok().or(trailers),
        }
    }
    Ok((collected, trailers))
}

/// [`read_frames`]' body, without trailers.
pub async fn read_body(body: Incoming, most: usize) -> Result<Vec<u8>, Failure> {
    let (body, _) = read_frames(body, most)
        .await
        .map_err(|e| format!("reading body: {}", describe_error(&e)))?;
    Ok(body)
}

/// An `http(s)://` target as the user types it, for the tests of this folder.
#[cfg(test)]
fn test_target(url: &str) -> HttpTarget {
    match super::target::Target::parse(url).unwrap().kind {
        Kind::Http(target) => target,
        _ => panic!("{url}"),
    }
}
