//! `readygate serve`: the kubelet asks over HTTP (`httpGet` on `/ready`, `/ready/NAME`,
//! `/livez`) or gRPC health (`grpc:`), on one port, instead of exec'ing `probe` in the
//! container. Targets are checked on demand (`fresh.rs`); the server is built for hostile
//! clients: GET and HEAD only, a bounded request head and body each read within a timeout, a
//! cap on connections (`conns.rs`) and on each connection's life, and tiny answers written at
//! once.

mod answer;
mod budget;
mod conns;
mod fresh;
mod grpc;
mod metrics;
pub mod plan;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::Interest;
use tokio::net::{TcpListener, TcpSocket, TcpStream};

use crate::error::describe_io;
use crate::exit::Exit;
use crate::kind::{Check, Context};
use crate::process::serving;
use crate::process::signal::Terminations;
use answer::App;
use conns::{Conns, Entry};
use fresh::Targets;
use metrics::Eviction;
pub use plan::ServePlan;

/// Most connections open at once (the kubelet opens one per probe).
const MAX_CONNECTIONS: usize = 64;

/// How long a client may take to send its request head (slowloris).
const HEAD_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a client may take to send a request's body once its head came (a gRPC call's
/// message: a few bytes); the only body read.
const BODY_TIMEOUT: Duration = Duration::from_secs(2);

/// The HTTP/2 flow-control windows: what a client may send before readygate reads it, per
/// stream and per connection (a gRPC health request is a few bytes; hyper's default is 1 MiB,
/// which a few dozen connections would turn into tens of MiB held).
const STREAM_WINDOW: u32 = 16 * 1024;
const CONNECTION_WINDOW: u32 = 64 * 1024;

/// The largest request head read, in bytes (hyper's least buffer size).
const MAX_HEAD: usize = 8192;

/// The most a connection may send in all: a probe's request is a few hundred bytes, a gRPC
/// client's calls on one connection a few KiB; more is a flood of frames (SETTINGS, PING).
const READ_BUDGET: usize = 64 * 1024;

/// Most requests in progress at once on one HTTP/2 connection.
const MAX_STREAMS: u32 = 8;

/// How long a connection may stay open beyond one attempt's bound: a request head, an answer
/// and a few more calls of a gRPC client that keeps its connection.
const LINGER: Duration = Duration::from_secs(5);

/// Connections the kernel keeps waiting to be accepted (capped by `net.core.somaxconn`).
const BACKLOG: u32 = 4096;

/// Serves until SIGTERM or SIGINT, which end it with status 0.
pub async fn serve(mut serve: ServePlan) -> Exit {
    crate::log::init(serve.plan.log);
    crate::process::fdlimit::make_room(serve.plan.targets.len() + MAX_CONNECTIONS);
    let mut signals = Terminations::listen();
    if let Err(exit) = crate::plan::read_files(&mut serve.plan, &mut signals).await {
        return exit;
    }
    let listener = match listen(serve.listen) {
        Ok(listener) => listener,
        Err(e) => {
            let address = serve.listen;
            return Exit::Failed(format!("cannot listen on {address}: {}", describe_io(&e)));
        }
    };
    let local = listener.local_addr().unwrap_or(serve.listen);
    let policy = &serve.plan.policy;
    // `--timeout`, if given, bounds an answer's attempts as it bounds `probe`'s.
    let bound = policy.deadline.map_or(policy.attempt_timeout, |deadline| {
        deadline.min(policy.attempt_timeout)
    });
    let names: Vec<String> = serve.plan.targets.iter().map(ToString::to_string).collect();
    let context = Context::new(std::mem::take(&mut serve.plan.options));
    let checks = serve.plan.targets.iter();
    let checks = checks.map(|target| Check::new(target.clone(), context.clone()));
    let (fresh_for, invert) = (serve.fresh_for, policy.invert);
    tracing::info!(
        event = "serve",
        "serving on {local}: /ready for {}{}",
        names.join(", "),
        crate::kind::uses::note(&serve.plan.partial)
    );
    for group in &serve.groups {
        let members: Vec<&str> = group.members.iter().map(|&i| names[i].as_str()).collect();
        tracing::info!(
            event = "serve",
            "serving /ready/{} for {}",
            group.name,
            members.join(", ")
        );
    }
    let targets = Targets::new(checks.collect(), names, fresh_for, bound, invert);
    let all = (0..targets.len()).collect();
    let app = Arc::new(App {
        targets,
        plan: serve,
        all,
        counts: metrics::Counts::default(),
    });
    let lifetime = bound + LINGER;
    let builders = Arc::new(Builders::new());
    let conns = Conns::new(MAX_CONNECTIONS);
    loop {
        let (stream, peer) = match serving::accept(&listener, &mut signals).await {
            Ok(accepted) => accepted,
            Err(exit) => return exit,
        };
        // With no room to be made for its address (`Conns::admit`), it is closed at once.
        match conns.admit(peer.ip()) {
            Some(entry) => {
                let (app, builders) = (app.clone(), builders.clone());
                tokio::spawn(connection(stream, entry, app, builders, lifetime));
            }
            None => app.counts.refused(),
        }
        // The new connection reads its request head before the next accept can evict it.
        tokio::task::yield_now().await;
    }
}

/// A listener with a deep accept queue: at std's and tokio's 128, a burst of connections
/// while readygate waits for the CPU overflows it, and every connection after that (the
/// kubelet's too) waits a second for its SYN to be sent again.
fn listen(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match address {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(BACKLOG)
}

/// The HTTP/1 and HTTP/2 settings of every connection.
struct Builders {
    http1: http1::Builder,
    http2: http2::Builder<TokioExecutor>,
}

impl Builders {
    fn new() -> Builders {
        // No timer for hyper: the head's deadline is the connection's own (`connection`).
        let mut http1 = http1::Builder::new();
        http1
            .max_buf_size(MAX_HEAD)
            .max_headers(64)
            // One request per connection, as the kubelet's prober makes them.
            .keep_alive(false);
        let mut http2 = http2::Builder::new(TokioExecutor::new());
        http2
            .max_concurrent_streams(MAX_STREAMS)
            .max_header_list_size(MAX_HEAD as u32)
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW);
        Builders { http1, http2 }
    }
}

/// The start of the HTTP/2 connection preface: no HTTP/1 request starts so.
const PREFACE: &[u8] = b"PRI ";

/// Whether the client speaks HTTP/2 (prior knowledge, as gRPC clients do), from its first
/// bytes, left unread; `None` when it sends none within the head timeout or goes away.
async fn speaks_http2(stream: &TcpStream) -> Option<bool> {
    let mut start = [0u8; PREFACE.len()];
    loop {
        stream.readable().await.ok()?;
        match stream.peek(&mut start).await {
            Ok(0) | Err(_) => return None,
            // Too few bytes to tell yet, all of them the preface's: wait for more (readiness
            // cleared, or `readable` would return at once for the bytes already there).
            Ok(n) if n < start.len() && start[..n] == PREFACE[..n] => {
                let would_block = || Err::<(), _>(std::io::ErrorKind::WouldBlock.into());
                let _ = stream.try_io(Interest::READABLE, would_block);
            }
            Ok(_) => return Some(start == PREFACE),
        }
    }
}

/// Serves one connection until it ends, is evicted to make room, or has lived `lifetime`.
async fn connection(
    stream: TcpStream,
    entry: Entry,
    app: Arc<App>,
    builders: Arc<Builders>,
    lifetime: Duration,
) {
    let _ = stream.set_nodelay(true);
    // A connection costs a task and no buffer until its first bytes come: a flood of silent
    // connections stays cheap to hold and to evict.
    let head_by = tokio::time::Instant::now() + HEAD_TIMEOUT;
    let http2 = tokio::select! {
        http2 = speaks_http2(&stream) => match http2 {
            Some(http2) => http2,
            None => return,
        },
        () = entry.evicted() => {
            app.counts.evicted(Eviction::Cap);
            return;
        }
        () = tokio::time::sleep_until(head_by) => {
            app.counts.evicted(Eviction::HeadTimeout);
            return;
        }
    };
    let entry = Arc::new(entry);
    let asked = entry.clone();
    let counts = app.clone();
    let service = service_fn(move |request| {
        let (entry, app) = (asked.clone(), app.clone());
        entry.asking();
        async move {
            let body_by = tokio::time::Instant::now() + BODY_TIMEOUT;
            // Busy only while readygate works out the answer: a client that sends its body
            // slowly (or never) holds an idle connection, which can be evicted.
            let response = match answer::read(&app, request, body_by).await {
                Ok(question) => {
                    let _busy = entry.busy();
                    answer::respond(&app, question).await
                }
                Err(at_once) => at_once,
            };
            let code = response.extensions().get::<metrics::Code>().copied();
            let code = code.unwrap_or(metrics::Code::Http(response.status().as_u16()));
            app.counts.answered(code);
            Ok::<_, Infallible>(response)
        }
    });
    let spent = budget::Spent::default();
    let io = TokioIo::new(budget::Budgeted::new(stream, READ_BUDGET, spent.clone()));
    let served = async {
        match http2 {
            true => drop(builders.http2.serve_connection(io, service).await),
            false => drop(builders.http1.serve_connection(io, service).await),
        }
    };
    // The whole request head by `head_by` (slowloris); after that only the lifetime bounds it.
    let head_late = async {
        tokio::time::sleep_until(head_by).await;
        if entry.asked() {
            std::future::pending::<()>().await;
        }
    };
    // Cancellation: dropping the connection closes it; an attempt it started runs on.
    let evicted = tokio::select! {
        () = served => spent.get().then_some(Eviction::ReadBudget),
        () = entry.evicted() => Some(Eviction::Cap),
        () = head_late => Some(Eviction::HeadTimeout),
        () = tokio::time::sleep(lifetime) => Some(Eviction::Lifetime),
    };
    if let Some(why) = evicted {
        counts.counts.evicted(why);
    }
}
