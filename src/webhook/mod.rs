//! `readygate webhook`: a mutating admission webhook that applies to every Pod CREATE what
//! `inject` applies to a manifest. The API server is its only expected client, but anyone who
//! can reach the port can send anything: connections are capped, each TLS handshake and
//! request head is bounded in time, a request body in size, and an answer in time; the pod's
//! contents never reach the log (names only).

mod metrics;
mod nodes;
mod reload;
pub(crate) mod review;
mod workers;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use crate::cli::{LogArgs, WebhookArgs};
use crate::error::describe_io;
use crate::exit::Exit;
use crate::inject::Injection;
use crate::kind::k8s::{kubeconfig, Cluster};
use crate::log::LogSettings;
use crate::net::tls::server_cert::{self, Current};
use crate::process::serving;
use crate::process::signal::Terminations;
use crate::secrets::Secrets;

/// Most connections open at once (the API server keeps a few, one per concurrent call).
const MAX_CONNECTIONS: usize = 256;

/// Most reviews read and answered at once: each holds its body and the pod's tree.
const MAX_REVIEWS: usize = 16;

/// The largest review read: a pod is at most about 1.5 MiB (etcd's limit), and the review of a
/// CREATE holds it once.
const MAX_BODY: usize = 3 * 1024 * 1024;

/// How long a client may take over its TLS handshake, and then over each request head.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one review may take, from its head to the last byte of the answer: well inside the
/// API server's webhook timeout (deploy/ sets 5 s; 10 s by default).
const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// The validated command line of `readygate webhook`.
pub struct WebhookPlan {
    listen: SocketAddr,
    cert: PathBuf,
    key: PathBuf,
    pair: Arc<Current>,
    injection: Injection,
    /// With `--mode auto`: the cluster whose nodes are watched.
    cluster: Option<Cluster>,
    log: LogSettings,
}

impl WebhookPlan {
    /// Reads the certificate pair, the sidecar file and, with `--mode auto`, where the cluster
    /// is; an error is a usage error.
    pub fn new(
        args: WebhookArgs,
        log: &LogArgs,
        secrets: Arc<Secrets>,
    ) -> Result<WebhookPlan, String> {
        let pair = server_cert::read(&args.tls_cert, &args.tls_key, ("--tls-cert", "--tls-key"))?;
        let injection = crate::inject::injection(&args.injection)?;
        let cluster = match injection.auto {
            true => {
                let access = crate::inject::access(&args.injection);
                Some(kubeconfig::find(&access, secrets, nodes::ASK_WITHIN)?)
            }
            false => None,
        };
        Ok(WebhookPlan {
            listen: args.listen,
            cert: args.tls_cert,
            key: args.tls_key,
            pair: Current::new(pair),
            injection,
            cluster,
            log: crate::plan::log_settings(log, tracing::Level::INFO),
        })
    }
}

/// What every connection shares, on every worker thread.
struct Shared {
    injection: Injection,
    /// With `--mode auto`: the watched nodes, and the form chosen from them.
    nodes: Option<nodes::Chooser>,
    acceptor: TlsAcceptor,
    /// Connections open at once, across the workers.
    connections: Arc<Semaphore>,
    reviews: Semaphore,
    /// What `/metrics` shows.
    counts: metrics::Counts,
}

/// Serves until SIGTERM or SIGINT, which end it with status 0.
pub async fn serve(plan: WebhookPlan) -> Exit {
    crate::log::init(plan.log);
    crate::process::fdlimit::make_room(MAX_CONNECTIONS);
    let mut signals = Terminations::listen();
    let listener = match TcpListener::bind(plan.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            return Exit::Failed(format!(
                "cannot listen on {}: {}",
                plan.listen,
                describe_io(&e)
            ))
        }
    };
    let config = match server_cert::server_config(plan.pair.clone()) {
        Ok(config) => config,
        Err(reason) => return Exit::Failed(format!("cannot set up TLS: {reason}")),
    };
    let files = reload::Files {
        cert: plan.cert.clone(),
        key: plan.key.clone(),
        current: plan.pair.clone(),
    };
    match reload::watch(files) {
        Ok(watching) => drop(tokio::spawn(watching)),
        Err(e) => tracing::warn!(
            event = "certificate",
            "cannot watch the certificate files (they will not be reloaded): {}",
            describe_io(&e)
        ),
    }
    let local = listener.local_addr().unwrap_or(plan.listen);
    let nodes = plan.cluster.map(nodes::Chooser::start);
    let shared = Arc::new(Shared {
        injection: plan.injection,
        nodes,
        acceptor: TlsAcceptor::from(Arc::new(config)),
        connections: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
        reviews: Semaphore::new(MAX_REVIEWS),
        counts: metrics::Counts::default(),
    });
    let threads = 1 + workers::start(&listener, workers::count(), &shared);
    let plural = if threads == 1 { "" } else { "s" };
    tracing::info!(
        event = "webhook",
        threads,
        "serving admission reviews on https://{local}/mutate ({threads} thread{plural})"
    );
    tokio::select! {
        exit = serving::stopped(&mut signals) => exit,
        never = take_connections(listener, shared) => match never {},
    }
}

/// Takes connections on `listener` for as long as it is polled, each served on a task of its
/// own, at most [`MAX_CONNECTIONS`] at once across the workers.
async fn take_connections(listener: TcpListener, shared: Arc<Shared>) -> Infallible {
    loop {
        // The semaphore is never closed: a permit always comes.
        let Ok(permit) = shared.connections.clone().acquire_owned().await else {
            continue;
        };
        let (stream, _) = serving::next_connection(&listener).await;
        let shared = shared.clone();
        tokio::spawn(async move {
            connection(stream, shared).await;
            drop(permit);
        });
    }
}

/// Serves one connection: the TLS handshake within its bound, then HTTP/1.1 requests.
async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let handshake = shared.acceptor.accept(stream);
    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(tls)) => tls,
        _ => return,
    };
    let service = service_fn(move |request| {
        let shared = shared.clone();
        async move {
            let response = route(request, &shared).await;
            shared.counts.answered(response.status().as_u16());
            Ok::<_, Infallible>(response)
        }
    });
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HANDSHAKE_TIMEOUT)
        .max_buf_size(64 * 1024);
    let _ = http.serve_connection(TokioIo::new(tls), service).await;
}

/// Answers one request by its path.
async fn route(request: Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    match (request.method(), request.uri().path()) {
        (&Method::GET, "/healthz") => plain(StatusCode::OK, "ok\n"),
        (&Method::GET, "/readyz") => {
            match shared.nodes.as_ref().map_or(true, nodes::Chooser::ready) {
                true => plain(StatusCode::OK, "ok\n"),
                false => plain(StatusCode::SERVICE_UNAVAILABLE, "nodes not listed yet\n"),
            }
        }
        (&Method::GET, "/metrics") => {
            let mut response = plain(StatusCode::OK, &shared.counts.render());
            let kind = HeaderValue::from_static(crate::metrics::CONTENT_TYPE);
            response.headers_mut().insert(CONTENT_TYPE, kind);
            response
        }
        (&Method::POST, "/mutate") => {
            let started = tokio::time::Instant::now();
            let answer = tokio::time::timeout(ANSWER_WITHIN, mutate(request, shared)).await;
            shared.counts.reviewed(started.elapsed());
            match answer {
                Ok(response) => response,
                Err(_) => {
                    tracing::warn!(
                        event = "admission",
                        "no review answered within {ANSWER_WITHIN:?}"
                    );
                    plain(StatusCode::SERVICE_UNAVAILABLE, "review not read in time\n")
                }
            }
        }
        (_, "/mutate" | "/healthz" | "/readyz" | "/metrics") => {
            plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n")
        }
        _ => plain(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// Reads one review (bounded in size) and answers it.
async fn mutate(request: Request<Incoming>, shared: &Shared) -> Response<Full<Bytes>> {
    let Ok(_permit) = shared.reviews.acquire().await else {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "shutting down\n");
    };
    // A declared length past the cap is refused before a byte of the body is read.
    let declared = hyper::body::Body::size_hint(request.body()).lower();
    if declared > MAX_BODY as u64 {
        tracing::warn!(
            event = "admission",
            "refused a request: review larger than 3 MiB"
        );
        return plain(StatusCode::PAYLOAD_TOO_LARGE, "review larger than 3 MiB\n");
    }
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            let too_large = e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some();
            let (status, what) = match too_large {
                true => (StatusCode::PAYLOAD_TOO_LARGE, "review larger than 3 MiB"),
                false => (StatusCode::BAD_REQUEST, "review not read"),
            };
            tracing::warn!(event = "admission", "refused a request: {what}");
            return plain(status, &format!("{what}\n"));
        }
    };
    let choose = |node: Option<&str>| match &shared.nodes {
        Some(chooser) => chooser.mode(node),
        None => crate::inject::sidecar::Mode::Universal,
    };
    match review::answer(&body, &shared.injection, choose) {
        Ok((json, decision)) => {
            shared.counts.admitted(decision.verdict);
            let mode = decision.mode.map_or("", |mode| mode.name());
            tracing::info!(
                event = "admission",
                pod = decision.pod.as_str(),
                verdict = decision.verdict,
                mode,
                "{} {}{}{}",
                decision.verdict,
                decision.pod,
                if mode.is_empty() { "" } else { ", sidecar " },
                mode
            );
            let mut response = Response::new(Full::new(Bytes::from(json)));
            let kind = HeaderValue::from_static("application/json");
            response.headers_mut().insert(CONTENT_TYPE, kind);
            response
        }
        Err(reason) => {
            // Where the body broke, never its text.
            tracing::warn!(event = "admission", "refused a request: {reason}");
            plain(StatusCode::BAD_REQUEST, &format!("{reason}\n"))
        }
    }
}

/// A short text answer.
fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())));
    *response.status_mut() = status;
    response
}
