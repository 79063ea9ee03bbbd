//! One module per condition kind behind one small interface: [`Check`] binds a target to its
//! options and implements the engine's [`Condition`] by delegating to the kind's module.
//!
//! A new kind is a module with its target type, a `parse` from its URL (a row of [`SCHEMES`]),
//! its [`Reach`] (an arm of `Kind::reach`), and `async fn check(...) -> Result<(), Failure>`,
//! one attempt that never retries: the engine bounds and repeats it. A reason is its words
//! (`Failure::from`); only `Failure::Connect`, which the report shortens, keeps its parts, and
//! `Failure::Never` marks a target that can fail for good. `exec:` ([`command`]) is the one
//! target that is no URL: the target parser reads its prefix before any scheme.

mod amqp;
pub mod command;
mod dns;
mod exchange;
pub mod file;
pub mod grpc;
pub mod http;
pub mod k8s;
mod kafka;
mod memcached;
mod mysql;
mod nats;
pub mod password;
mod postgres;
mod redis;
pub mod target;
mod tcp;
mod unix;
mod url_parts;
pub mod uses;
mod zookeeper;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock, Weak};

pub use crate::net::endpoint::{Endpoint, Host};
pub use http::redirect::Redirects;
use url_parts::TargetUrl;

use crate::engine::{Condition, Schedule};
use crate::error::Failure;
use crate::grammar::header::Header;
use crate::grammar::matcher::Matcher;
use crate::grammar::status::StatusRanges;
use crate::net::resolve::Resolver;
use crate::net::tls::{self, Clients};
use crate::runtime::Attempt;
use target::Target;

/// What kind of condition a target is, with everything needed to check it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Ready when a TCP connection is established.
    Tcp(Endpoint),
    /// Ready when an HTTP(S) response has an accepted status (and body).
    Http(http::HttpTarget),
    /// Ready when the path exists (and its content matches).
    File(PathBuf),
    /// Ready when a stream connection to the Unix socket succeeds.
    Unix(PathBuf),
    /// Ready when the gRPC health service answers `SERVING`.
    Grpc(grpc::GrpcTarget),
    /// Ready when the StartupMessage gets an authentication request (or an error but 57P03).
    Postgres(postgres::PostgresTarget),
    /// Ready when `PING` gets `+PONG`.
    Redis(redis::RedisTarget),
    /// Ready when the server greets with a HandshakeV10.
    Mysql(Endpoint),
    /// Ready when the protocol header gets Connection.Start.
    Amqp(amqp::AmqpTarget),
    /// Ready when `version` gets `VERSION`.
    Memcached(Endpoint),
    /// Ready when the server's `INFO` is not in lame-duck mode.
    Nats(Endpoint),
    /// Ready when `srvr` gets a `Mode:`.
    Zookeeper(Endpoint),
    /// Ready when the listener's cluster has a controller and lists this broker as live.
    Kafka(kafka::KafkaTarget),
    /// Ready when the name resolves.
    Dns(String),
    /// Ready when the Kubernetes object is (a Job complete, a pod ready…).
    K8s(k8s::K8sTarget),
    /// Ready when the command exits 0.
    Command(command::CommandTarget),
}

/// A kind's parser: the target URL, at plan time, before any I/O; the error is the fault.
type Parse = fn(&TargetUrl) -> Result<Kind, String>;

/// The URL schemes and the kind that parses each: a new kind is one row here. The third
/// column: whether the error for an unknown scheme lists it (aliases are not).
const SCHEMES: &[(&str, Parse, bool)] = &[
    ("tcp", tcp::parse, true),
    ("http", http::parse, true),
    ("https", http::parse, true),
    ("file", file::parse, true),
    ("unix", unix::parse, true),
    ("grpc", grpc::parse, true),
    ("grpcs", grpc::parse, true),
    ("k8s", k8s::parse, true),
    ("postgres", postgres::parse, true),
    ("postgresql", postgres::parse, false),
    ("redis", redis::parse, true),
    ("rediss", redis::parse, true),
    ("mysql", mysql::parse, true),
    ("mariadb", mysql::parse, false),
    ("amqp", amqp::parse, true),
    ("amqps", amqp::parse, true),
    ("memcached", memcached::parse, true),
    ("nats", nats::parse, true),
    ("zk", zookeeper::parse, true),
    ("kafka", kafka::parse, true),
    ("kafkas", kafka::parse, true),
    ("dns", dns::parse, true),
];

/// How a target's attempts reach it, which is what one costs: the plan gives each its schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// On this machine (a file, a Unix socket, a loopback host): an attempt costs microseconds.
    Local,
    /// A peer over the network: an attempt is one connect (DNS answers are cached by TTL).
    Network,
    /// `k8s://`: watched, so readiness is seen at once; a retry asks the API server every pod
    /// shares (a new watch, a GET).
    ApiServer,
    /// `exec:`: each attempt starts a process, and most ask a server elsewhere.
    Command,
}

impl Kind {
    /// How the target is reached (see [`Target::reach`]).
    fn reach(&self, unix_socket: bool) -> Reach {
        let by_host = |local: bool| if local { Reach::Local } else { Reach::Network };
        match self {
            Kind::File(_) | Kind::Unix(_) => Reach::Local,
            Kind::Http(target) => by_host(target.is_local(unix_socket)),
            Kind::Grpc(target) => by_host(target.is_local(unix_socket)),
            Kind::Tcp(endpoint)
            | Kind::Mysql(endpoint)
            | Kind::Memcached(endpoint)
            | Kind::Nats(endpoint)
            | Kind::Zookeeper(endpoint) => by_host(endpoint.host.is_local()),
            Kind::Postgres(target) => by_host(target.endpoint.host.is_local()),
            Kind::Redis(target) => by_host(target.endpoint.host.is_local()),
            Kind::Amqp(target) => by_host(target.endpoint.host.is_local()),
            Kind::Kafka(target) => by_host(target.endpoint.host.is_local()),
            Kind::Dns(name) => by_host(dns::is_local(name)),
            Kind::K8s(_) => Reach::ApiServer,
            Kind::Command(_) => Reach::Command,
        }
    }
}

/// The options that shape every attempt, validated once by the plan.
#[derive(Debug, Default)]
pub struct Options {
    pub statuses: StatusRanges,
    /// What an HTTP body or file content must hold, if anything.
    pub matcher: Option<Matcher>,
    /// `--json-field`: values an HTTP body must hold, as JSON.
    pub json_fields: Vec<crate::grammar::expect::JsonField>,
    /// `--header-matches`: headers an HTTP answer must have.
    pub header_matches: Vec<crate::grammar::expect::HeaderMatch>,
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HttpMethod {
    /// GET (the default).
    #[default]
    Get,
    /// HEAD: no body is ever read.
    Head,
    /// POST with an empty body: never a check, only `--on-exit`'s notice.
    Post,
}

/// State shared by all checks of one run: the options, what is set up lazily for them, and
/// what the run remembers between attempts. Handed down to each check, never reached through
/// a global: two runs in one process (unit tests) share nothing; `--on-exit`'s notice
/// ([`Context::notice`]) shares its run's memory.
#[derive(Debug)]
pub struct Context {
    pub options: Options,
    /// TLS client settings, made on the first `https://` or `grpcs://` attempt.
    tls: OnceLock<Result<Clients, Failure>>,
    /// The warnings the TLS settings gave.
    tls_told: Arc<tls::Told>,
    /// The DNS answers and nameserver order every connect of the run shares.
    pub resolver: Arc<Resolver>,
    /// The inotify instance the run's file targets share.
    pub inotify: file::HubSlot,
    /// Whether `redis://`'s warning about `-NOAUTH` was given (once per run).
    pub noauth_told: AtomicBool,
    /// Whether `kafka://`'s note that no live broker advertises the target was given (once).
    pub kafka_unlisted_told: AtomicBool,
}

impl Context {
    pub fn new(options: Options) -> Arc<Context> {
        Arc::new(Context {
            options,
            tls: OnceLock::new(),
            tls_told: Arc::default(),
            resolver: Arc::default(),
            inotify: file::HubSlot::default(),
            noauth_told: AtomicBool::new(false),
            kafka_unlisted_told: AtomicBool::new(false),
        })
    }

    /// The context of `--on-exit`'s notice: a POST with only the run's TLS trust (`--insecure`,
    /// `--cacert`), and the run's DNS answers and TLS warnings, so neither comes twice.
    pub fn notice(&self) -> Context {
        let options = Options {
            method: HttpMethod::Post,
            insecure: self.options.insecure,
            cacert: self.options.cacert.clone(),
            ..Options::default()
        };
        Context {
            options,
            tls: OnceLock::new(),
            tls_told: self.tls_told.clone(),
            resolver: self.resolver.clone(),
            inotify: file::HubSlot::default(),
            noauth_told: AtomicBool::new(false),
            kafka_unlisted_told: AtomicBool::new(false),
        }
    }

    /// The TLS client settings, made once (the roots are parsed on first use only).
    pub fn tls(&self) -> Result<&Clients, Failure> {
        let opt = &self.options;
        let made = self.tls.get_or_init(|| {
            let name = opt.tls_server_name.clone();
            let told = &self.tls_told;
            Clients::new(
                opt.insecure,
                &opt.cacert,
                opt.client_cert.as_ref(),
                name,
                told,
            )
        });
        made.as_ref().map_err(Clone::clone)
    }
}

/// One target bound to the run's context: what the engine retries.
pub struct Check {
    pub target: Target,
    pub context: Arc<Context>,
    /// Where this target's blocking work runs.
    pub lane: crate::runtime::lane::Lane,
    /// What its kind keeps between attempts, if anything.
    held: Held,
}

/// What a kind keeps between a target's attempts: only file and `k8s://` targets keep anything.
enum Held {
    /// A file target's watch, aimed by each attempt before it reads.
    File(Mutex<Weak<file::Aim>>),
    /// A `k8s://` target's watched state, which its attempts read.
    K8s(Arc<k8s::Feed>),
    /// Every other kind: each attempt starts afresh.
    Nothing,
}

impl Held {
    fn for_kind(kind: &Kind) -> Held {
        match kind {
            Kind::File(_) => Held::File(Mutex::default()),
            Kind::K8s(_) => Held::K8s(Arc::default()),
            _ => Held::Nothing,
        }
    }

    /// A file target's watch, once one is aimed.
    fn aim(&self) -> Option<Arc<file::Aim>> {
        match self {
            Held::File(aim) => aim.lock().expect("aim lock").upgrade(),
            _ => None,
        }
    }

    /// A `k8s://` target's feed (what its watch has learnt).
    fn feed(&self) -> Arc<k8s::Feed> {
        match self {
            Held::K8s(feed) => feed.clone(),
            _ => Arc::default(),
        }
    }
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

    fn watch(&self, schedule: Schedule) -> CheckWatch {
        let (path, aim) = match (&self.target.kind, &self.held) {
            (Kind::File(path), Held::File(aim)) => (path, aim),
            (Kind::K8s(target), Held::K8s(feed)) => {
                let (context, feed) = (self.context.clone(), feed.clone());
                let name = self.target.to_string();
                return k8s::Watcher::start(target, context, feed, name, schedule)
                    .map(Watches::K8s);
            }
            _ => return None,
        };
        // A file target's content matters only with `--contains`/`--matches`.
        let wake = match self.context.options.matcher {
            Some(_) => file::Wake::OnContent,
            None => file::Wake::OnEntries,
        };
        let watch = file::FileWatch::new(path, wake, &self.context.inotify)?;
        *aim.lock().expect("aim lock") = Arc::downgrade(&watch.aim);
        Some(Watches::File(watch))
    }

    async fn attempt(&self, at: &Attempt) -> Result<(), Failure> {
        let outcome = self.attempt_kind(at).await;
        outcome.map_err(|failure| failure.for_target(&self.target.to_string()))
    }
}

impl Check {
    /// `target` checked with the run's `context`.
    pub fn new(target: Target, context: Arc<Context>) -> Check {
        Check {
            held: Held::for_kind(&target.kind),
            target,
            context,
            lane: Default::default(),
        }
    }

    async fn attempt_kind(&self, at: &Attempt) -> Result<(), Failure> {
        let context = &self.context;
        match &self.target.kind {
            Kind::Tcp(endpoint) => tcp::check(endpoint, &context.resolver, at).await,
            Kind::Unix(path) => unix::check(path).await,
            Kind::Http(target) => http::check(target, context, &self.lane, at).await,
            Kind::File(path) => {
                // Off the runtime's thread: a stale mount or a slow regex must not stall timers.
                // Without a regex to blame, a job cut short is waiting for the file system.
                if context.options.matcher.is_none() {
                    at.waiting_for(crate::runtime::lane::FS_SILENT);
                }
                let (path, context) = (path.clone(), context.clone());
                let aim = self.held.aim();
                let job = move || {
                    aim.inspect(|aim| aim.refresh());
                    file::check(&path, context.options.matcher.as_ref())
                };
                self.lane.run(job).await?
            }
            Kind::Grpc(target) => grpc::check(target, context, at).await,
            Kind::Postgres(target) => postgres::check(target, context, at).await,
            Kind::Redis(redis) => redis::check(redis, &self.target, context, at).await,
            Kind::Mysql(endpoint) => mysql::check(endpoint, context, at).await,
            Kind::Amqp(target) => amqp::check(target, context, at).await,
            Kind::Memcached(endpoint) => memcached::check(endpoint, context, at).await,
            Kind::Nats(endpoint) => nats::check(endpoint, context, at).await,
            Kind::Zookeeper(endpoint) => zookeeper::check(endpoint, context, at).await,
            Kind::Kafka(kafka) => kafka::check(kafka, &self.target, context, at).await,
            Kind::Dns(name) => dns::check(name, &context.resolver, at).await,
            Kind::K8s(target) => match &context.options.k8s {
                Some(cluster) => {
                    let resolver = &context.resolver;
                    k8s::check(target, cluster, &self.held.feed(), resolver, at).await
                }
                None => Err(Failure::Text("no in-cluster config for k8s://".into())),
            },
            Kind::Command(target) => command::check(target, &self.lane, at).await,
        }
    }
}
