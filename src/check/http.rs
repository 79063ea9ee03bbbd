//! `http://` and `https://`: ready when a response has an accepted status and, with
//! `--contains`/`--matches`, a body that matches. Redirects are handled as the kubelet does.

mod informational;
pub mod redirect;
pub mod request;
mod retry_after;

use std::future::Future;

use http_body_util::{BodyExt, Empty};
use hyper::body::{Bytes, Incoming};
use hyper::header::LOCATION;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::offload::Lane;
use super::{Context, HttpMethod};
use crate::engine::waiting_for;
use crate::error::describe_error;
use crate::error::Failure;
use crate::matcher::{Matcher, MAX_BODY};
use crate::net::transport::{self, BoxedIo};
use crate::target::HttpTarget;

use redirect::Redirect;
use request::Carry;
pub use request::AGENT;

/// How much of the body a status-only check reads, as the kubelet does: a body that stalls
/// within it is not ready at the attempt timeout.
const STATUS_BODY: usize = 10 * 1024;

/// One attempt: request, following same-host redirects, then judge status and body.
pub async fn check(target: &HttpTarget, context: &Context, lane: &Lane) -> Result<(), Failure> {
    let options = &context.options;
    let mut redirected: Option<HttpTarget> = None;
    let mut carry = Carry::ALL;
    let most = options.redirects.most_requests();
    for _ in 0..most {
        let current = redirected.as_ref().unwrap_or(target);
        let step = exchange(current, context, carry, |response| {
            answer(current, response, options)
        })
        .await?;
        match step {
            Step::Redirect { mut next, absolute } => {
                // Secrets go to the origin the user named only: curl's rule (CVE-2022-27776).
                carry.secrets = same_origin(target, &next);
                carry.custom_host &= !absolute;
                if next.credentials.is_none() && carry.secrets {
                    next.credentials.clone_from(&target.credentials);
                }
                redirected = Some(next);
            }
            Step::Ready => return Ok(()),
            Step::Body(body, matcher) => {
                waiting_for(crate::engine::NOTHING_YET);
                // A regex over a hostile megabyte can take seconds: keep it off the timers' thread.
                let judge = matcher.clone();
                return if lane.run(move || judge.is_match(&body)).await? {
                    Ok(())
                } else {
                    Err(Failure::Mismatch(matcher.failure("body")))
                };
            }
        }
    }
    Err(Failure::Protocol(format!("stopped after {most} redirects")))
}

/// Same scheme, host and port.
fn same_origin(a: &HttpTarget, b: &HttpTarget) -> bool {
    a.tls == b.tls && a.endpoint == b.endpoint
}

/// What one response leads to.
enum Step<'a> {
    /// A same-host redirect to follow.
    Redirect {
        /// Where to.
        next: HttpTarget,
        /// The `Location` was an absolute URL.
        absolute: bool,
    },
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
) -> Result<Step<'a>, Failure> {
    let status = response.status();
    if let Redirect::Follow { next, absolute } = redirect::next(
        current,
        status,
        response.headers().get(LOCATION),
        options.redirects,
    )? {
        return Ok(Step::Redirect { next, absolute });
    }
    if !options.statuses.contains(status.as_u16()) {
        let now = std::time::SystemTime::now();
        if let Some(wait) = retry_after::requested(status, response.headers(), now) {
            crate::engine::retry_not_before(wait);
        }
        return Err(Failure::Status(status.as_u16()));
    }
    match &options.matcher {
        Some(matcher) if options.method == HttpMethod::Get => Ok(Step::Body(
            read_body(response.into_body(), MAX_BODY).await?,
            matcher,
        )),
        _ => {
            // As the kubelet: the answer is whole when its body (the first 10 KiB) has come.
            read_body(response.into_body(), STATUS_BODY).await?;
            Ok(Step::Ready)
        }
    }
}

/// One request with the context's method over a fresh connection, no redirect followed and
/// no body read: the status it got. For `--on-exit`'s POST, which is a notice, not a check.
pub async fn send(target: &HttpTarget, context: &Context) -> Result<StatusCode, Failure> {
    exchange(target, context, Carry::ALL, |response| async move {
        Ok(response.status())
    })
    .await
}

/// Sends one request over a fresh connection and hands the response (body unread) to `judge`.
async fn exchange<T, F, J>(
    target: &HttpTarget,
    context: &Context,
    carry: Carry,
    judge: J,
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
    let stream = transport::open(&target.endpoint, options.unix_socket.as_deref()).await?;
    let stream = if target.tls {
        waiting_for("TLS handshake not complete");
        crate::net::tls::connect(
            stream,
            &target.endpoint.host,
            crate::net::tls::Alpn::Http1,
            context.tls()?,
        )
        .await?
    } else {
        stream
    };
    roundtrip(stream, request, judge).await
}

/// Sends `request` as the only one over `stream` and hands the response (body unread) to
/// `judge`. The connection is driven here, alongside `judge`, rather than spawned: no task to
/// allocate and wake, and the socket closes when this returns, so none outlives its attempt.
pub async fn roundtrip<T, F, J>(
    stream: BoxedIo,
    mut request: Request<Empty<Bytes>>,
    judge: J,
) -> Result<T, Failure>
where
    J: FnOnce(Response<Incoming>) -> F,
    F: Future<Output = Result<T, Failure>>,
{
    let informational = informational::Guard::attach(&mut request);
    waiting_for("no response");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| describe_error(&e))?;
    let exchange = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| describe_error(&e))?;
        waiting_for("body not complete");
        judge(response).await
    };
    tokio::pin!(exchange);
    // Cancellation: dropping this future drops every arm, which closes the connection.
    tokio::select! {
        // The exchange first: it queues the request before the connection's first poll looks.
        biased;
        outcome = &mut exchange => outcome,
        // Ended first, with or without an error: hyper has handed the outcome (a response, a
        // body's end, or the error) to the request and its body, so the exchange finishes
        // from what it was given, as it did when a spawned task drove the connection.
        _ = connection => exchange.await,
        () = informational.tripped() => Err(Failure::Protocol(informational.reason())),
    }
}

/// Reads at most `most` bytes of the body; a longer body is cut, never read to its end.
pub async fn read_body(mut body: Incoming, most: usize) -> Result<Vec<u8>, Failure> {
    let mut collected = Vec::new();
    while collected.len() < most {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let room = most - collected.len();
                    collected.extend_from_slice(&data[..data.len().min(room)]);
                }
            }
            Some(Err(e)) => {
                return Err(Failure::Protocol(format!(
                    "reading body: {}",
                    describe_error(&e)
                )))
            }
            None => break,
        }
    }
    Ok(collected)
}

/// An `http(s)://` target as the user types it, for the tests of this folder.
#[cfg(test)]
fn test_target(url: &str) -> crate::target::HttpTarget {
    match crate::target::Target::parse(url).unwrap().kind {
        crate::target::Kind::Http(target) => target,
        _ => panic!("{url}"),
    }
}
