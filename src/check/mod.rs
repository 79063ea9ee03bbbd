//! One module per condition kind behind one small interface: [`Check`] binds a target to its
//! options and implements the engine's [`Condition`] by delegating to the kind's module.
//!
//! A new kind is a module with `async fn check(...) -> Result<(), Failure>` (or
//! `Result<(), Miss<Failure>>` when a target can fail for good), one attempt that never
//! retries: the engine bounds and repeats it. What a server said goes in `Failure::Protocol`.

mod amqp;
mod answer;
mod dns;
pub mod file;
mod grpc;
pub mod http;
pub mod k8s;
mod memcached;
mod mysql;
mod nats;
pub mod offload;
mod postgres;
mod redis;
mod tcp;
mod unix;
mod zookeeper;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

pub use http::redirect::Redirects;

use crate::engine::{Condition, Miss, NoWatch, Watch};
use crate::error::Failure;
use crate::header::Header;
use crate::matcher::Matcher;
use crate::status::StatusRanges;
use crate::target::{Kind, Target};

/// The options that shape every attempt, validated once by the plan.
#[derive(Debug, Default)]
pub struct Options {
    /// Accepted HTTP statuses.
    pub statuses: StatusRanges,
    /// What an HTTP body or file content must hold, if anything.
    pub matcher: Option<Matcher>,
    /// Extra HTTP request headers.
    pub headers: Vec<Header>,
    /// HTTP method.
    pub method: HttpMethod,
    /// Send HTTP(S) and gRPC requests through this Unix socket instead of TCP.
    pub unix_socket: Option<PathBuf>,
    /// Accept any TLS certificate.
    pub insecure: bool,
    /// Extra trusted roots: the certificates of `--cacert`, read and checked by the plan.
    pub cacert: Vec<crate::net::tls::Certificate>,
    /// `--cert`/`--key`: the client certificate to offer, read and checked by the plan.
    pub client_cert: Option<crate::net::tls::Identity>,
    /// `--tls-server-name`: the TLS name to use instead of the URL's host.
    pub tls_server_name: Option<rustls::pki_types::ServerName<'static>>,
    /// The pod's API server and credentials, found by the plan when a `k8s://` target needs them.
    pub k8s: Option<k8s::Cluster>,
    /// Which HTTP redirects are followed.
    pub redirects: Redirects,
}

/// The HTTP methods readygate sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HttpMethod {
    /// GET: the body can be matched.
    #[default]
    Get,
    /// HEAD: status only.
    Head,
    /// POST with an empty body: never a check, only `--on-exit`'s notice.
    Post,
}

/// State shared by all checks of one run: the options, and what is set up lazily for them.
#[derive(Debug)]
pub struct Context {
    /// The validated options.
    pub options: Options,
    /// TLS client settings, made on the first `https://` or `grpcs://` attempt.
    tls: OnceLock<Result<crate::net::tls::Clients, Failure>>,
}

impl Context {
    /// A context for these options; nothing costly is set up until a target needs it.
    pub fn new(options: Options) -> Arc<Context> {
        Arc::new(Context {
            options,
            tls: OnceLock::new(),
        })
    }

    /// The TLS client settings, made once (the roots are parsed on first use only).
    pub fn tls(&self) -> Result<&crate::net::tls::Clients, Failure> {
        self.tls
            .get_or_init(|| {
                let options = &self.options;
                crate::net::tls::Clients::new(
                    options.insecure,
                    &options.cacert,
                    options.client_cert.as_ref(),
                    options.tls_server_name.clone(),
                )
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// One target bound to the run's context: what the engine retries.
pub struct Check {
    /// The target to check.
    pub target: Target,
    /// The shared options.
    pub context: Arc<Context>,
    /// Where this target's blocking work runs.
    pub lane: offload::Lane,
}

impl Check {
    /// `target` checked with the run's `context`.
    pub fn new(target: Target, context: Arc<Context>) -> Check {
        Check {
            target,
            context,
            lane: offload::Lane::default(),
        }
    }
}

/// The watch of any check kind: file-system events for files, nothing for the others.
pub enum CheckWatch {
    /// Polling only.
    None(NoWatch),
    /// Folder events on the file's nearest existing folder.
    File(file::FileWatch),
}

impl Watch for CheckWatch {
    async fn changed(&mut self) {
        match self {
            CheckWatch::None(watch) => watch.changed().await,
            CheckWatch::File(watch) => watch.changed().await,
        }
    }
}

impl Check {
    /// A file target's content matters only with `--contains`/`--matches`.
    fn file_wake(&self) -> file::Wake {
        match self.context.options.matcher {
            Some(_) => file::Wake::OnContent,
            None => file::Wake::OnEntries,
        }
    }
}

impl Condition for Check {
    type Watch = CheckWatch;
    type Failure = Failure;

    fn watch(&self) -> CheckWatch {
        match &self.target.kind {
            Kind::File(path) => match file::FileWatch::new(path, self.file_wake(), &self.lane) {
                Some(watch) => CheckWatch::File(watch),
                None => CheckWatch::None(NoWatch),
            },
            _ => CheckWatch::None(NoWatch),
        }
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
    /// One attempt by the target's kind.
    async fn attempt_kind(&self) -> Result<(), Miss<Failure>> {
        let outcome = match &self.target.kind {
            Kind::Tcp(endpoint) => tcp::check(endpoint).await,
            Kind::Http(target) => http::check(target, &self.context, &self.lane).await,
            Kind::File(path) => {
                // Off the runtime's thread: a stale mount or a slow regex must not stall timers.
                let (path, context) = (path.clone(), self.context.clone());
                let job = move || file::check(&path, context.options.matcher.as_ref());
                self.lane.run(job).await?
            }
            Kind::Unix(path) => unix::check(path).await,
            Kind::Grpc(target) => grpc::check(target, &self.context).await,
            Kind::Postgres(target) => postgres::check(target).await,
            Kind::Redis(redis) => redis::check(redis, &self.target, &self.context).await,
            Kind::Mysql(endpoint) => mysql::check(endpoint).await,
            Kind::Amqp(target) => amqp::check(target, &self.context).await,
            Kind::Memcached(endpoint) => memcached::check(endpoint).await,
            Kind::Nats(endpoint) => nats::check(endpoint).await,
            Kind::Zookeeper(endpoint) => zookeeper::check(endpoint).await,
            Kind::Dns(name) => dns::check(name).await,
            Kind::K8s(target) => {
                let cluster = self.context.options.k8s.as_ref();
                let cluster =
                    cluster.ok_or(Failure::Protocol("no in-cluster config for k8s://".into()))?;
                return k8s::check(target, cluster).await;
            }
        };
        Ok(outcome?)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::engine::{self, Policy};

    #[tokio::test]
    async fn a_file_target_stuck_in_the_file_system_holds_up_neither_others_nor_the_deadline() {
        let dir = std::env::temp_dir().join(format!("readygate-stuck-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ready = dir.join("ready");
        std::fs::write(&ready, "").unwrap();
        let context = Context::new(Options::default());
        let target = |path: &std::path::Path| Target::parse(path.to_str().unwrap()).unwrap();
        // A file on a dead mount: its lane is held by a call that never returns.
        let stuck = Check::new(target(&dir.join("hung")), context.clone());
        let (_release, held) = std::sync::mpsc::channel::<()>();
        stuck.lane.start(move || {
            let _ = held.recv();
        });
        let fine = Check::new(target(&ready), context);
        let policy = Policy {
            deadline: Some(Duration::from_millis(800)),
            attempt_timeout: Duration::from_millis(200),
            success_threshold: 1,
            any: false,
            invert: false,
            max_attempts: None,
        };
        let names = ["hung".to_string(), "ready".to_string()];
        let started = std::time::Instant::now();
        let local = engine::Schedule {
            label: "local",
            first: Duration::from_millis(10),
            max: Duration::from_millis(100),
            growth: (2, 1),
        };
        let schedules = [local; 2];
        let report = engine::run(vec![stuck, fine], &names, &schedules, &policy).await;
        let took = started.elapsed();
        assert!(!report.ready);
        assert!(report.targets[1].ready, "{report:?}");
        let reason = report.targets[0].reason().unwrap_or_default();
        assert!(reason.starts_with("no answer within"), "{reason}");
        assert!(
            took >= Duration::from_millis(800) && took < Duration::from_secs(3),
            "{took:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
