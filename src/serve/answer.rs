//! What a request is answered: `/ready` (every target), `/ready/NAME` (a group), `/livez`,
//! `/metrics` (`metrics.rs`), and gRPC health calls (`grpc.rs`); GET and HEAD only. A body has one line per target, `TARGET:
//! ready` or `TARGET: REASON`, each clipped and redacted as log lines are. A request is read
//! whole first (`read`), then answered (`respond`): only the second is readygate's own work.

use std::convert::Infallible;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode, Version};

use super::fresh::Targets;
use super::metrics::Counts;
use super::plan::ServePlan;

/// A response body: whole (a few lines), or a gRPC message with its trailers.
pub type Body = BoxBody<Bytes, Infallible>;

/// The longest line a body holds per target; a longer reason is cut short.
const MAX_LINE: usize = 256;

/// What answers need: the targets and the plan's groups and options.
pub struct App {
    pub targets: Targets,
    pub plan: ServePlan,
    /// Every target, in order: `/ready` and gRPC service "".
    pub all: Vec<usize>,
    /// The server's own counts, for `/metrics`.
    pub counts: Counts,
}

/// Whether a set of targets is ready, and the body's lines saying why.
pub struct Verdict {
    pub ready: bool,
    pub body: String,
}

impl App {
    /// The verdict on `members`: all ready (any one with `--any`), after at most one attempt
    /// each.
    pub async fn verdict(&self, members: &[usize]) -> Verdict {
        if self.plan.plan.disabled {
            let body = "READYGATE_DISABLED is set: not checking\n".to_string();
            return Verdict { ready: true, body };
        }
        let outcomes = self.targets.outcomes(members).await;
        let ready = match self.plan.plan.policy.any {
            true => outcomes.iter().any(Result::is_ok),
            false => outcomes.iter().all(Result::is_ok),
        };
        let mut body = String::new();
        for (&index, outcome) in members.iter().zip(&outcomes) {
            let state = outcome.as_ref().err().map_or("ready", String::as_str);
            let line = format!("{}: {state}", self.targets.name(index));
            // Redacted before it is cut: a cut could leave half a secret unrecognised.
            body.push_str(&clip(&self.plan.plan.secrets.hide(&line)));
            body.push('\n');
        }
        Verdict { ready, body }
    }

    /// The targets behind gRPC service or group `name` ("" is every target).
    pub fn members(&self, name: &str) -> Option<&[usize]> {
        match name {
            "" => Some(&self.all),
            name => self.plan.members(name),
        }
    }
}

/// What a request asks readygate to work out: the verdict on some targets.
pub enum Question<'a> {
    /// `/ready` or `/ready/NAME`: answered in plain text.
    Ready(&'a [usize]),
    /// A gRPC health check: answered `SERVING` or `NOT_SERVING`.
    Grpc(&'a [usize]),
}

/// What a plain request's path names.
enum Path<'a> {
    Ready(&'a [usize]),
    Live,
    Metrics,
}

/// Reads `request` (a gRPC call's message by `body_by`): the question it asks, or its answer
/// when that needs no attempt (`/livez`, `/metrics`, `404`, `405`, a gRPC call refused).
pub async fn read<'a>(
    app: &'a App,
    request: Request<Incoming>,
    body_by: tokio::time::Instant,
) -> Result<Question<'a>, Response<Body>> {
    tracing::debug!(
        event = "request",
        "{} {}",
        request.method(),
        request.uri().path()
    );
    if is_grpc(&request) {
        return super::grpc::read(app, request, body_by)
            .await
            .map(Question::Grpc);
    }
    let path = request.uri().path();
    let named = match path {
        "/livez" => Path::Live,
        "/metrics" => Path::Metrics,
        "/ready" => Path::Ready(&app.all),
        _ => match path
            .strip_prefix("/ready/")
            .and_then(|name| app.plan.members(name))
        {
            Some(members) => Path::Ready(members),
            None => {
                let line = format!("no such path: {}\n", crate::text::one_line(path));
                return Err(text(app, StatusCode::NOT_FOUND, line));
            }
        },
    };
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        let line = "method not allowed: use GET or HEAD\n".to_string();
        let mut response = text(app, StatusCode::METHOD_NOT_ALLOWED, line);
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Err(response);
    }
    match named {
        Path::Ready(members) => Ok(Question::Ready(members)),
        Path::Live => Err(text(app, StatusCode::OK, "ok\n".into())),
        Path::Metrics => Err(metrics(app)),
    }
}

/// The answer to `question`, after at most one attempt per target.
pub async fn respond(app: &App, question: Question<'_>) -> Response<Body> {
    let members = match question {
        Question::Ready(members) => members,
        Question::Grpc(members) => return super::grpc::respond(app, members).await,
    };
    let verdict = app.verdict(members).await;
    let status = match verdict.ready {
        true => StatusCode::OK,
        false => StatusCode::SERVICE_UNAVAILABLE,
    };
    text(app, status, verdict.body)
}

/// A gRPC call: HTTP/2 with a gRPC content type.
fn is_grpc(request: &Request<Incoming>) -> bool {
    let grpc = request
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|kind| kind.as_bytes().starts_with(b"application/grpc"));
    grpc && request.version() == Version::HTTP_2
}

/// A plain-text answer (an empty body with `--quiet-body`); never cached by a proxy.
fn text(app: &App, status: StatusCode, body: String) -> Response<Body> {
    let body = match app.plan.quiet_body {
        true => String::new(),
        false => body,
    };
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    let plain = HeaderValue::from_static("text/plain; charset=utf-8");
    headers.insert(CONTENT_TYPE, plain);
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The `/metrics` answer: what has been counted, in the Prometheus text format.
fn metrics(app: &App) -> Response<Body> {
    let body = super::metrics::render(app);
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    let headers = response.headers_mut();
    let kind = HeaderValue::from_static(crate::metrics::CONTENT_TYPE);
    headers.insert(CONTENT_TYPE, kind);
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `line` cut to [`MAX_LINE`] bytes (on a character boundary), marked as cut.
fn clip(line: &str) -> String {
    if line.len() <= MAX_LINE {
        return line.to_string();
    }
    format!("{}…", crate::text::head(line, MAX_LINE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_clipped_on_a_character_boundary() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(MAX_LINE);
        let clipped = clip(&long);
        assert!(
            clipped.len() <= MAX_LINE + '…'.len_utf8(),
            "{}",
            clipped.len()
        );
        assert!(clipped.ends_with('…'));
    }
}
