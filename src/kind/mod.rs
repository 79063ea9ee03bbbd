//! One module per condition kind behind one small interface: [`Check`] binds a target to its
//! options and implements the engine's [`Condition`] by delegating to the kind's module.
//!
//! A new kind is a module with `async fn check(...) -> Result<(), Failure>` (or
//! `Result<(), Miss<Failure>>` when a target can fail for good), one attempt that never
//! retries: the engine bounds and repeats it. What a server said goes in `Failure::Protocol`.

mod amqp;
mod dns;
mod exchange;
pub mod file;
pub mod grpc;
pub mod http;
pub mod k8s;
pub mod locality;
mod memcached;
mod mysql;
mod nats;
pub mod offload;
mod postgres;
mod redis;
mod service;
pub mod target;
mod zookeeper;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

pub use http::redirect::Redirects;

use crate::engine::{Condition, Miss};
use crate::error::Failure;
use crate::header::Header;
use crate::matcher::Matcher;
use crate::net::tls::Clients;
use crate::net::transport::{connect_tcp, connect_unix};
use crate::status::StatusRanges;
use target::{Kind, Target};

/// The options that shape every attempt, validated once by the plan.
#[derive(Debug, Default)]
pub struct Options {
    pub statuses: StatusRanges,
    /// What an HTTP body or file content must hold, if anything.
    pub matcher: Option<Matcher>,
    /// `--json-field`: values an HTTP body must hold, as JSON.
    pub json_fields: Vec<crate::expect::JsonField>,
    /// `--header-matches`: headers an HTTP answer must have.
    pub header_matches: Vec<crate::expect::HeaderMatch>,
    pub headers: Vec<Header>,
    pub method: HttpMethod,
    /// Send HTTP(S) and gRPC requests through this Unix socket instead of TCP.
    pub unix_socket: Option<PathBuf>,
    /// `--insecure`: accept any TLS certificate.
    pub insecure: bool,
    /// Extra trusted roots: the certificates of `--cacert`, read and checked by the plan.
    pub cacert: Vec<crate::net::tls::Certificate>,
    /// `--cert`/`--key`: the client certificate to offer, read and checked by the plan.
    pub client_cert: Option<crate::net::tls::Identity>,
    /// `--tls-server-name`: the TLS name to use instead of the URL's host.
    pub tls_server_name: Option<rustls::pki_types::ServerName<'static>>,
    /// The pod's API server and credentials, found by the plan when a `k8s://` target needs them.
    pub k8s: Option<k8s::Cluster>,
    pub redirects: Redirects,
}

/// The HTTP methods readygate sends; `--method` offers GET and HEAD.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum HttpMethod {
    /// GET (the default).
    #[default]
    Get,
    /// HEAD: no body is ever read.
    Head,
    /// POST with an empty body: never a check, only `--on-exit`'s notice.
    #[value(skip)]
    Post,
}

/// State shared by all checks of one run: the options, and what is set up lazily for them.
#[derive(Debug)]
pub struct Context {
    pub options: Options,
    /// TLS client settings, made on the first `https://` or `grpcs://` attempt.
    tls: OnceLock<Result<Clients, Failure>>,
}

impl Context {
    pub fn new(options: Options) -> Arc<Context> {
        Arc::new(Context {
            options,
            tls: OnceLock::new(),
        })
    }

    /// The TLS client settings, made once (the roots are parsed on first use only).
    pub fn tls(&self) -> Result<&Clients, Failure> {
        let opt = &self.options;
        let made = self.tls.get_or_init(|| {
            let name = opt.tls_server_name.clone();
            Clients::new(opt.insecure, &opt.cacert, opt.client_cert.as_ref(), name)
        });
        made.as_ref().map_err(Clone::clone)
    }
}

/// One target bound to the run's context: what the engine retries.
pub struct Check {
    pub target: Target,
    pub context: Arc<Context>,
    /// Where this target's blocking work runs.
    pub lane: offload::Lane,
    /// A file target's watch, aimed by each attempt before it reads.
    aim: Mutex<Weak<file::Aim>>,
    /// A `k8s://` target's watched state, which its attempts read.
    feed: Arc<k8s::Feed>,
}

/// A file target's folder events, or a `k8s://` target's watch; `None` for the other kinds
/// (they are polled).
pub type CheckWatch = Option<Watches>;

/// What wakes the engine early, by kind.
pub enum Watches {
    File(file::FileWatch),
    K8s(k8s::Watcher),
}

impl crate::engine::Watch for Watches {
    async fn changed(&mut self) {
        match self {
            Watches::File(watch) => watch.changed().await,
            Watches::K8s(watch) => watch.changed().await,
        }
    }
}

impl Condition for Check {
    type Watch = CheckWatch;
    type Failure = Failure;

    fn watch(&self) -> CheckWatch {
        let path = match &self.target.kind {
            Kind::File(path) => path,
            Kind::K8s(target) => {
                let (context, feed) = (self.context.clone(), self.feed.clone());
                let name = self.target.to_string();
                return k8s::Watcher::start(target, context, feed, name).map(Watches::K8s);
            }
            _ => return None,
        };
        // A file target's content matters only with `--contains`/`--matches`.
        let wake = match self.context.options.matcher {
            Some(_) => file::Wake::OnContent,
            None => file::Wake::OnEntries,
        };
        let watch = file::FileWatch::new(path, wake)?;
        *self.aim.lock().expect("aim lock") = Arc::downgrade(&watch.aim);
        Some(Watches::File(watch))
    }

    async fn attempt(&self) -> Result<(), Miss<Failure>> {
        self.attempt_kind().await.map_err(|miss| {
            let name = self.target.to_string();
            match miss {
                Miss::NotYet(failure) => Miss::NotYet(failure.for_target(&name)),
                Miss::Never(failure) => Miss::Never(failure.for_target(&name)),
            }
        })
    }
}

impl Check {
    /// `target` checked with the run's `context`.
    pub fn new(target: Target, context: Arc<Context>) -> Check {
        let (lane, aim, feed) = Default::default();
        Check {
            target,
            context,
            lane,
            aim,
            feed,
        }
    }

    async fn attempt_kind(&self) -> Result<(), Miss<Failure>> {
        let context = &self.context;
        let outcome = match &self.target.kind {
            Kind::Tcp(endpoint) => connect_tcp(endpoint).await.map(drop),
            Kind::Unix(path) => connect_unix(path).await.map(drop),
            Kind::Http(target) => http::check(target, context, &self.lane).await,
            Kind::File(path) => {
                // Off the runtime's thread: a stale mount or a slow regex must not stall timers.
                // Without a regex to blame, a job cut short is waiting for the file system.
                if context.options.matcher.is_none() {
                    crate::engine::waiting_for(offload::FS_SILENT);
                }
                let (path, context) = (path.clone(), context.clone());
                let aim = self.aim.lock().expect("aim lock").upgrade();
                let job = move || {
                    aim.inspect(|aim| aim.refresh());
                    file::check(&path, context.options.matcher.as_ref())
                };
                self.lane.run(job).await?
            }
            Kind::Grpc(target) => grpc::check(target, context).await,
            Kind::Postgres(target) => postgres::check(target).await,
            Kind::Redis(redis) => redis::check(redis, &self.target, context).await,
            Kind::Mysql(endpoint) => mysql::check(endpoint).await,
            Kind::Amqp(target) => amqp::check(target, context).await,
            Kind::Memcached(endpoint) => memcached::check(endpoint).await,
            Kind::Nats(endpoint) => nats::check(endpoint).await,
            Kind::Zookeeper(endpoint) => zookeeper::check(endpoint).await,
            Kind::Dns(name) => dns::check(name).await,
            Kind::K8s(target) => match &context.options.k8s {
                Some(cluster) => return k8s::check(target, cluster, &self.feed).await,
                None => Err(Failure::Protocol("no in-cluster config for k8s://".into())),
            },
        };
        Ok(outcome?)
    }
}
