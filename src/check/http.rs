//! `http://` and `https://`: ready when a response has an accepted status and, with
//! `--contains`/`--matches`, a body that matches. Redirects are handled as the kubelet does.

use base64::Engine as _;
use http_body_util::{BodyExt, Empty};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_LENGTH, HOST, LOCATION, USER_AGENT};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::{Context, HttpMethod};
use crate::engine::Reason;
use crate::matcher::MAX_BODY;
use crate::target::HttpTarget;
use crate::transport::{self, describe_error};

/// Most redirects followed, as the kubelet (Go's HTTP client) does.
const MAX_REDIRECTS: usize = 10;

/// The `User-Agent` readygate sends.
const AGENT: &str = concat!("readygate/", env!("CARGO_PKG_VERSION"));

/// One attempt: request, following same-host redirects, then judge status and body.
pub async fn check(target: &HttpTarget, context: &Context) -> Result<(), Reason> {
    let options = &context.options;
    let mut current = target.clone();
    for _ in 0..=MAX_REDIRECTS {
        let (response, _connection) = request(&current, context).await?;
        let status = response.status();
        if status.is_redirection() {
            if let Some(next) = redirect_target(&current, &response) {
                current = next;
                continue;
            }
        }
        if !options.statuses.contains(status.as_u16()) {
            return Err(format!("status {}", status.as_u16()));
        }
        return match &options.matcher {
            Some(matcher) if options.method == HttpMethod::Get => {
                let body = read_body(response.into_body()).await?;
                // A regex over a hostile megabyte can take seconds: keep it off the timers' thread.
                let judge = matcher.clone();
                if super::offload::run(move || judge.is_match(&body)).await? {
                    Ok(())
                } else {
                    Err(matcher.failure("body"))
                }
            }
            _ => Ok(()),
        };
    }
    Err(format!("stopped after {MAX_REDIRECTS} redirects"))
}

/// One request with the context's method over a fresh connection, no redirect followed and
/// no body read: the status it got. For `--on-exit`'s POST, which is a notice, not a check.
pub async fn send(target: &HttpTarget, context: &Context) -> Result<StatusCode, Reason> {
    let (response, _connection) = request(target, context).await?;
    Ok(response.status())
}

/// Aborts the task driving a connection when dropped, so no socket outlives its attempt.
struct Connection(tokio::task::JoinHandle<()>);

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sends one request over a fresh connection and returns the response head (body unread),
/// with the connection it arrived on.
async fn request(
    target: &HttpTarget,
    context: &Context,
) -> Result<(Response<Incoming>, Connection), Reason> {
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
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| describe_error(&e))?;
    let connection = Connection(tokio::spawn(async move {
        let _ = connection.await;
    }));
    let request = build_request(target, options)?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| describe_error(&e))?;
    Ok((response, connection))
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

/// Reads at most [`MAX_BODY`] bytes of the body; a longer body is cut, never read to its end.
async fn read_body(mut body: Incoming) -> Result<Vec<u8>, Reason> {
    let mut collected = Vec::new();
    while collected.len() < MAX_BODY {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let room = MAX_BODY - collected.len();
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
