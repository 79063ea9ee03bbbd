//! `http://` and `https://`: ready when a response has an accepted status and, with
//! `--contains`/`--matches`, a body that matches. Redirects are handled as the kubelet does.

use std::future::Future;

use base64::Engine as _;
use http_body_util::{BodyExt, Empty};
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    HeaderValue, AUTHORIZATION, CONNECTION, CONTENT_LENGTH, HOST, LOCATION, USER_AGENT,
};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::{Context, HttpMethod};
use crate::engine::Reason;
use crate::matcher::{Matcher, MAX_BODY};
use crate::target::HttpTarget;
use crate::transport::{self, describe_error, BoxedIo};

/// Most redirects followed, as the kubelet (Go's HTTP client) does.
const MAX_REDIRECTS: usize = 10;

/// The `User-Agent` readygate sends.
pub const AGENT: &str = concat!("readygate/", env!("CARGO_PKG_VERSION"));

/// One attempt: request, following same-host redirects, then judge status and body.
pub async fn check(target: &HttpTarget, context: &Context) -> Result<(), Reason> {
    let options = &context.options;
    let mut redirected: Option<HttpTarget> = None;
    for _ in 0..=MAX_REDIRECTS {
        let current = redirected.as_ref().unwrap_or(target);
        let step = exchange(current, context, |response| {
            answer(current, response, options)
        })
        .await?;
        match step {
            Step::Redirect(next) => redirected = Some(next),
            Step::Ready => return Ok(()),
            Step::Body(body, matcher) => {
                // A regex over a hostile megabyte can take seconds: keep it off the timers' thread.
                let judge = matcher.clone();
                return if super::offload::run(move || judge.is_match(&body)).await? {
                    Ok(())
                } else {
                    Err(matcher.failure("body"))
                };
            }
        }
    }
    Err(format!("stopped after {MAX_REDIRECTS} redirects"))
}

/// What one response leads to.
enum Step<'a> {
    /// A same-host redirect to follow.
    Redirect(HttpTarget),
    /// An accepted status, and no body to match.
    Ready,
    /// An accepted status and the body's first [`MAX_BODY`] bytes, still to be matched.
    Body(Vec<u8>, &'a Matcher),
}

/// Judges one response: a redirect to follow, a refused status, or what is left to check.
async fn answer<'a>(
    current: &HttpTarget,
    response: Response<Incoming>,
    options: &'a super::Options,
) -> Result<Step<'a>, Reason> {
    let status = response.status();
    if status.is_redirection() {
        if let Some(next) = redirect_target(current, &response) {
            return Ok(Step::Redirect(next));
        }
    }
    if !options.statuses.contains(status.as_u16()) {
        return Err(format!("status {}", status.as_u16()));
    }
    match &options.matcher {
        Some(matcher) if options.method == HttpMethod::Get => Ok(Step::Body(
            read_body(response.into_body(), MAX_BODY).await?,
            matcher,
        )),
        _ => Ok(Step::Ready),
    }
}

/// One request with the context's method over a fresh connection, no redirect followed and
/// no body read: the status it got. For `--on-exit`'s POST, which is a notice, not a check.
pub async fn send(target: &HttpTarget, context: &Context) -> Result<StatusCode, Reason> {
    exchange(
        target,
        context,
        |response| async move { Ok(response.status()) },
    )
    .await
}

/// Sends one request over a fresh connection and hands the response (body unread) to `judge`.
async fn exchange<T, F, J>(target: &HttpTarget, context: &Context, judge: J) -> Result<T, Reason>
where
    J: FnOnce(Response<Incoming>) -> F,
    F: Future<Output = Result<T, Reason>>,
{
    let options = &context.options;
    let stream = transport::open(&target.endpoint, options.unix_socket.as_deref()).await?;
    let stream = if target.tls {
        crate::tls::connect(
            stream,
            &target.endpoint.host,
            crate::tls::Alpn::Http1,
            context,
        )
        .await?
    } else {
        stream
    };
    roundtrip(stream, build_request(target, options)?, judge).await
}

/// Sends `request` as the only one over `stream` and hands the response (body unread) to
/// `judge`. The connection is driven here, alongside `judge`, rather than spawned: no task to
/// allocate and wake, and the socket closes when this returns, so none outlives its attempt.
pub async fn roundtrip<T, F, J>(
    stream: BoxedIo,
    request: Request<Empty<Bytes>>,
    judge: J,
) -> Result<T, Reason>
where
    J: FnOnce(Response<Incoming>) -> F,
    F: Future<Output = Result<T, Reason>>,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| describe_error(&e))?;
    let exchange = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| describe_error(&e))?;
        judge(response).await
    };
    tokio::pin!(exchange);
    // Cancellation: dropping this future drops both arms, which closes the connection.
    tokio::select! {
        // The exchange first: it queues the request before the connection's first poll looks.
        biased;
        outcome = &mut exchange => outcome,
        // Ended first, with or without an error: hyper has handed the outcome (a response, a
        // body's end, or the error) to the request and its body, so the exchange finishes
        // from what it was given, as it did when a spawned task drove the connection.
        _ = connection => exchange.await,
    }
}

fn build_request(
    target: &HttpTarget,
    options: &super::Options,
) -> Result<Request<Empty<Bytes>>, Reason> {
    let method = match options.method {
        HttpMethod::Get => hyper::Method::GET,
        HttpMethod::Head => hyper::Method::HEAD,
        HttpMethod::Post => hyper::Method::POST,
    };
    let mut builder = Request::builder().method(method).uri(target.path.as_str());
    let headers = builder.headers_mut().expect("fresh builder");
    headers.insert(
        HOST,
        HeaderValue::from_str(&target.authority).map_err(|_| "invalid host".to_string())?,
    );
    headers.insert(USER_AGENT, HeaderValue::from_static(AGENT));
    // One request per connection, as the kubelet's prober says too: hyper then neither reads
    // on for a next response nor keeps a buffer for one.
    headers.insert(CONNECTION, HeaderValue::from_static("close"));
    if let Some(credentials) = &target.credentials {
        let encoded = base64::engine::general_purpose::STANDARD.encode(credentials);
        let mut value = HeaderValue::from_str(&format!("Basic {encoded}"))
            .map_err(|_| "invalid credentials in URL".to_string())?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    if options.method == HttpMethod::Post {
        // Said outright: some servers refuse a POST without a length (411).
        headers.insert(CONTENT_LENGTH, HeaderValue::from_static("0"));
    }
    for header in &options.headers {
        headers.insert(header.name.clone(), header.value.clone());
    }
    builder
        .body(Empty::new())
        .map_err(|e| format!("invalid request: {e}"))
}

/// Reads at most `max` bytes of the body; a longer body is cut, never read to its end.
pub async fn read_body(mut body: Incoming, max: usize) -> Result<Vec<u8>, Reason> {
    let mut collected = Vec::new();
    while collected.len() < max {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let room = max - collected.len();
                    collected.extend_from_slice(&data[..data.len().min(room)]);
                }
            }
            Some(Err(e)) => return Err(format!("reading body: {}", describe_error(&e))),
            None => break,
        }
    }
    Ok(collected)
}

/// Where a redirect leads, if it is to be followed: only to the same host name, as the
/// kubelet does; a redirect elsewhere is an answer with its 3xx status.
fn redirect_target(current: &HttpTarget, response: &Response<Incoming>) -> Option<HttpTarget> {
    if !matches!(
        response.status(),
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    ) {
        return None;
    }
    let location = response.headers().get(LOCATION)?.to_str().ok()?;
    let next = follow(current, location)?;
    (next.endpoint.host == current.endpoint.host).then_some(next)
}

/// Resolves `location` against `current`: absolute, scheme-relative, absolute-path or relative.
fn follow(current: &HttpTarget, location: &str) -> Option<HttpTarget> {
    if location.contains("://") || location.starts_with("//") {
        let absolute = if location.starts_with("//") {
            let scheme = if current.tls { "https:" } else { "http:" };
            format!("{scheme}{location}")
        } else {
            location.to_string()
        };
        let target = crate::target::Target::parse(&absolute).ok()?;
        return match target.kind {
            crate::target::Kind::Http(mut next) => {
                if next.credentials.is_none() {
                    next.credentials.clone_from(&current.credentials);
                }
                Some(next)
            }
            _ => None,
        };
    }
    let path = if location.starts_with('/') {
        location.to_string()
    } else {
        let base = current.path.split('?').next().unwrap_or("/");
        let dir = &base[..=base.rfind('/').unwrap_or(0)];
        format!("{dir}{location}")
    };
    Some(HttpTarget {
        path,
        ..current.clone()
    })
}
