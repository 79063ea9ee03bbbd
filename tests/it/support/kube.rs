//! A stand-in Kubernetes API server: HTTPS (rustls, a test CA) on 127.0.0.1, in-process, that
//! checks the bearer token and serves objects shaped as the real API serves them (single
//! objects, lists filtered by label selector, `Status` objects for 401/403/404), with state the
//! test changes while readygate waits. No real API server can run on these machines.
//!
//! With it comes a service account folder (`token`, `ca.crt`, `namespace`) and the environment
//! a pod has, so `readygate` finds its "cluster" as it would in a pod.

use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use http_body_util::Full;
use hyper::body::{Body, Bytes, Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio_rustls::TlsAcceptor;

use super::certs::Certs;
use super::TempDir;

/// The service account's namespace: what a target without `?namespace=` looks in.
pub const OWN_NAMESPACE: &str = "shop";

/// One request as the stand-in saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Path and query, as sent.
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The `Accept` header, if any.
    pub accept: Option<String>,
    /// The `Host` header, if any.
    pub host: Option<String>,
    /// The status answered to a GET; `None` for a watch.
    pub status: Option<u16>,
}

/// An object the server holds, with the labels a list selects it by.
struct Stored {
    labels: Vec<(String, String)>,
    body: Value,
}

#[derive(Default)]
struct State {
    /// By `(API prefix, resource, namespace, name)`, e.g. `("/apis/batch/v1", "jobs", …)`.
    objects: HashMap<(String, String, String, String), Stored>,
    /// The one token accepted.
    token: String,
    /// `(verb, resource)` pairs the service account may not do.
    denied: HashSet<(String, String)>,
    /// Bodies sent as they are (status 200) for a path and query, whatever the objects say.
    verbatim: HashMap<String, Bytes>,
    /// Set: every request is refused with a 400 whose message this makes of the
    /// `Authorization` header, as a proxy or API server that quotes what it got.
    quoting: Option<fn(&str) -> String>,
    seen: Vec<Seen>,
    /// The last resourceVersion given out; each `put` takes the next.
    version: u64,
    /// Every change, as a watch sends it: `(version, key, event type, object)`.
    changes: Vec<(u64, Key, &'static str, Value)>,
    /// How the next watches are answered, one entry each; then `always`.
    watches: VecDeque<Watching>,
    /// How every watch is answered once `watches` is used up; `None`: [`Watching::Follow`].
    always: Option<Watching>,
    /// Set: a watch carries every object of its resource, in every namespace, whatever its
    /// selector asks, as a server or proxy that ignores the selector.
    ignores_selectors: bool,
    /// Answers set by a test for `(method, path and query)`: status and body as they are.
    routes: HashMap<(String, String), (u16, Bytes)>,
    /// What admission does to a dry-run pod CREATE before it is answered (default: nothing).
    admit: Option<fn(Value) -> Value>,
    /// No bearer token is checked: `kubectl proxy` (plain HTTP) or a verified client
    /// certificate says who.
    anyone: bool,
}

/// How the stand-in is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// HTTPS with the test CA's server certificate; a bearer token says who.
    Tls,
    /// HTTPS that demands a client certificate of the test CA, which says who.
    MutualTls,
    /// Plain HTTP without credentials, as `kubectl proxy` serves.
    Plain,
    /// As `Tls`, with a self-signed `CA:TRUE` certificate that `ca.crt` holds exactly.
    SelfSigned,
}

/// `(API prefix, resource, namespace, name)`.
type Key = (String, String, String, String);

/// How the stand-in answers one watch request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watching {
    /// Each change of the object as it comes, until the client goes.
    Follow,
    /// The changes after the version asked for, up to `n` of them, then the end of the
    /// stream (as `timeoutSeconds` ends it).
    EndAfter(usize),
    /// A `BOOKMARK` at a newer version than any change, then the end of the stream.
    BookmarkThenEnd,
    /// HTTP 410 Gone: the version asked for is too old.
    Gone,
    /// 200, then an `ERROR` event with code 410, then the end of the stream.
    GoneEvent,
    /// 200, then an `ERROR` event with code 500, as kube-apiserver 1.34 answers a watch from
    /// now with bookmarks when its etcd cannot report progress; then the end of the stream.
    Refuse,
    /// No answer at all: the connection stays open and silent.
    Stall,
    /// An event that never ends: a line of `{"type":"MODIFIED","object":{"x":"aaaa…` for as
    /// long as the client reads.
    Endless,
    /// `ADDED` events of ever new pods with names of 250 bytes, for as long as the client reads.
    Flood,
    /// What is watched as it is now, as one `MODIFIED` event (the first object for a list),
    /// then the end of the stream.
    Current,
    /// 200, then the end of the stream at once, with no event.
    End,
    /// 200 and a blank line, then the connection dropped mid-answer.
    Dropped,
}

/// A running stand-in; it stops with the test process.
pub struct ApiServer {
    /// Where it listens.
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    /// The service account folder given to readygate.
    pub account: TempDir,
    _certs: Certs,
}

impl ApiServer {
    /// Starts a server on 127.0.0.1 accepting `token`, and writes the service account folder.
    pub fn start(token: &str) -> ApiServer {
        ApiServer::start_on(IpAddr::from([127, 0, 0, 1]), token)
    }

    /// As [`ApiServer::start`], listening on `ip` (`::1` for an IPv6 cluster).
    pub fn start_on(ip: IpAddr, token: &str) -> ApiServer {
        let listener = std::net::TcpListener::bind((ip, 0)).expect("bind");
        ApiServer::serve(listener, token, Transport::Tls)
    }

    /// As [`ApiServer::start`], serving a self-signed certificate marked a CA, which the
    /// service account's `ca.crt` holds exactly.
    pub fn start_self_signed(token: &str) -> ApiServer {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
        ApiServer::serve(listener, token, Transport::SelfSigned)
    }

    /// As [`ApiServer::start`], but plain HTTP without credentials: `kubectl proxy`.
    pub fn start_proxy() -> ApiServer {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
        ApiServer::serve(listener, "", Transport::Plain)
    }

    /// As [`ApiServer::start`], but the client proves who it is with a certificate the
    /// test CA signed ([`ApiServer::client_pair`]), and no token.
    pub fn start_mutual() -> ApiServer {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
        ApiServer::serve(listener, "", Transport::MutualTls)
    }

    /// As [`ApiServer::start`], on 127.0.0.1 inside the network namespace at `netns` (a
    /// `/proc/PID/ns/net` path): a pod's own API connection, which its tests can cut.
    pub fn start_in(netns: &std::path::Path, token: &str) -> ApiServer {
        use std::os::fd::AsRawFd;
        let namespace = std::fs::File::open(netns).expect("open the network namespace");
        // A socket stays in the namespace it was made in, whichever thread serves it.
        let listener = std::thread::spawn(move || {
            // SAFETY: an open namespace file; only this short-lived thread changes namespace.
            let entered = unsafe { libc::setns(namespace.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(entered, 0, "setns: {}", std::io::Error::last_os_error());
            std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind")
        });
        ApiServer::serve(
            listener.join().expect("bind in the namespace"),
            token,
            Transport::Tls,
        )
    }

    /// Serves the stand-in on `listener`.
    fn serve(listener: std::net::TcpListener, token: &str, transport: Transport) -> ApiServer {
        let certs = match transport {
            Transport::SelfSigned => Certs::self_signed(),
            _ => Certs::localhost(),
        };
        let account = TempDir::new();
        std::fs::copy(&certs.ca, account.join("ca.crt")).expect("copy ca.crt");
        std::fs::write(account.join("namespace"), OWN_NAMESPACE).expect("write namespace");
        let state = Arc::new(Mutex::new(State {
            token: token.to_string(),
            version: 4711,
            anyone: matches!(transport, Transport::MutualTls | Transport::Plain),
            ..State::default()
        }));
        let server = ApiServer {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            state,
            account,
            _certs: certs,
        };
        server.write_token(token);
        let addr = listener.local_addr().expect("local addr");
        let config = match transport {
            Transport::MutualTls => server._certs.mutual_server_config(),
            _ => server._certs.server_config(),
        };
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let state = server.state.clone();
        super::serve_on_thread(listener, move |stream| {
            let (acceptor, state) = (acceptor.clone(), state.clone());
            async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let state = state.clone();
                    async move {
                        if request.method() == hyper::Method::POST {
                            return Ok::<_, Infallible>(answer_post(&state, request).await);
                        }
                        match answer(&state, &request) {
                            Some(answer) => Ok(answer),
                            None => std::future::pending().await,
                        }
                    }
                });
                if transport == Transport::Plain {
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                    return;
                }
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            }
        });
        ApiServer { addr, ..server }
    }

    /// `readygate ARGS` as run in a pod of this cluster: the API server's variables set and
    /// the service account folder pointed at (as `--k8s-serviceaccount-dir` does).
    pub fn readygate<const N: usize>(&self, args: [&str; N]) -> Command {
        let mut command = super::readygate(args);
        command
            .env("KUBERNETES_SERVICE_HOST", self.addr.ip().to_string())
            .env("KUBERNETES_SERVICE_PORT", self.addr.port().to_string())
            .env("READYGATE_K8S_SERVICEACCOUNT_DIR", &self.account.0)
            .env_remove("POD_NAMESPACE");
        command
    }

    /// Puts (or replaces) an object, as made by the builders below, at the next
    /// resourceVersion; a watch of it sees the change.
    pub fn put(&self, object: Value) {
        let kind = object["kind"].as_str().expect("kind").to_string();
        let (prefix, resource) = match kind.as_str() {
            "Job" => ("/apis/batch/v1", "jobs"),
            "Pod" => ("/api/v1", "pods"),
            "EndpointSlice" => ("/apis/discovery.k8s.io/v1", "endpointslices"),
            "Deployment" => ("/apis/apps/v1", "deployments"),
            "Node" => ("/api/v1", "nodes"),
            "StatefulSet" => ("/apis/apps/v1", "statefulsets"),
            "DaemonSet" => ("/apis/apps/v1", "daemonsets"),
            other => panic!("no such kind in the stand-in: {other}"),
        };
        self.put_as(prefix, resource, object);
    }

    /// Puts (or replaces) an object of any resource (`prefix` as `/apis/GROUP/VERSION`, the
    /// plural `resource`); without a `metadata.namespace` it is outside namespaces.
    pub fn put_as(&self, prefix: &str, resource: &str, mut object: Value) {
        let metadata = &object["metadata"];
        let key = (
            prefix.to_string(),
            resource.to_string(),
            metadata["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            metadata["name"].as_str().expect("name").to_string(),
        );
        let labels = metadata["labels"]
            .as_object()
            .map(|labels| {
                labels
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let mut state = self.state.lock().unwrap();
        state.version += 1;
        let version = state.version;
        object["metadata"]["resourceVersion"] = json!(version.to_string());
        let kind = match state.objects.contains_key(&key) {
            true => "MODIFIED",
            false => "ADDED",
        };
        state
            .changes
            .push((version, key.clone(), kind, object.clone()));
        let stored = Stored {
            labels,
            body: object,
        };
        state.objects.insert(key, stored);
    }

    /// Deletes the `kind` (`Pod`, `Job`, `EndpointSlice`) of this name in the own namespace; a
    /// watch sees it.
    pub fn delete(&self, kind: &str, name: &str) {
        let (prefix, resource) = match kind {
            "Job" => ("/apis/batch/v1", "jobs"),
            "Pod" => ("/api/v1", "pods"),
            "EndpointSlice" => ("/apis/discovery.k8s.io/v1", "endpointslices"),
            other => panic!("the stand-in deletes no {other}"),
        };
        let key = (
            prefix.into(),
            resource.into(),
            OWN_NAMESPACE.into(),
            name.into(),
        );
        let mut state = self.state.lock().unwrap();
        let mut gone = state
            .objects
            .remove(&key)
            .expect("an object to delete")
            .body;
        state.version += 1;
        gone["metadata"]["resourceVersion"] = json!(state.version.to_string());
        let version = state.version;
        state.changes.push((version, key, "DELETED", gone));
    }

    /// Serves discovery's `APIResourceList` of `group_version` (`example.com/v1`, or `v1`):
    /// `(plural, singular, kind, namespaced)` each.
    pub fn discovery(&self, group_version: &str, resources: &[(&str, &str, &str, bool)]) {
        let resources: Vec<Value> = resources
            .iter()
            .flat_map(|(plural, singular, kind, namespaced)| {
                let verbs = ["get", "list", "watch", "create", "update", "patch", "delete"];
                [
                    json!({"name": plural, "singularName": singular, "namespaced": namespaced,
                        "kind": kind, "verbs": verbs, "storageVersionHash": "4rB3bEtxY0w="}),
                    json!({"name": format!("{plural}/status"), "singularName": "",
                        "namespaced": namespaced, "kind": kind, "verbs": ["get", "patch", "update"]}),
                ]
            })
            .collect();
        let body = json!({"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": group_version, "resources": resources});
        let path = match group_version {
            "v1" => "/api/v1".to_string(),
            group_version => format!("/apis/{group_version}"),
        };
        self.route("GET", &path, 200, body.to_string());
    }

    /// Answers the next watch requests as these say, one each, in order.
    pub fn watches(&self, plan: &[Watching]) {
        self.state.lock().unwrap().watches.extend(plan);
    }

    /// Answers every watch request as `plan` says, once those of [`ApiServer::watches`] are
    /// used up.
    pub fn always(&self, plan: Watching) {
        self.state.lock().unwrap().always = Some(plan);
    }

    /// From now on, a watch carries every object of its resource in every namespace, whatever
    /// its selector asks (as a server or proxy that ignores it).
    pub fn ignore_selectors(&self) {
        self.state.lock().unwrap().ignores_selectors = true;
    }

    /// The watch requests seen so far, with the resourceVersion each asked for.
    pub fn watch_versions(&self) -> Vec<String> {
        self.seen()
            .iter()
            .filter(|seen| seen.path.contains("watch=1"))
            .map(|seen| query_value(&seen.path, "resourceVersion").unwrap_or_default())
            .collect()
    }

    /// Answers `path_and_query` with `body` as it is, status 200: an answer no object makes.
    pub fn answer_verbatim(&self, path_and_query: &str, body: impl Into<Bytes>) {
        let mut state = self.state.lock().unwrap();
        state
            .verbatim
            .insert(path_and_query.to_string(), body.into());
    }

    /// Answers `method` on `path_and_query` with `code` and `body` as they are, after the
    /// credentials are checked: what no stored object makes (`/version`, `/metrics`, nodes).
    pub fn route(&self, method: &str, path_and_query: &str, code: u16, body: impl Into<Bytes>) {
        let key = (method.to_string(), path_and_query.to_string());
        self.state
            .lock()
            .unwrap()
            .routes
            .insert(key, (code, body.into()));
    }

    /// Refuses `method` on `path_and_query` with a 403 `Status`, as RBAC does.
    pub fn forbid(&self, method: &str, path_and_query: &str) {
        let message = format!(
            "User \"system:serviceaccount:{OWN_NAMESPACE}:waiter\" cannot {} resource at \
             {path_and_query}",
            method.to_lowercase()
        );
        let body = status(403, "Forbidden", &message, json!({})).to_string();
        self.route(method, path_and_query, 403, body);
    }

    /// What admission does to each dry-run pod CREATE from now on, before it is answered.
    pub fn admit_with(&self, admit: fn(Value) -> Value) {
        self.state.lock().unwrap().admit = Some(admit);
    }

    /// A client certificate and key the server of [`ApiServer::start_mutual`] accepts.
    pub fn client_pair(&self) -> super::certs::Pair {
        self._certs.client("doctor")
    }

    /// The test CA's certificate file.
    pub fn ca_file(&self) -> PathBuf {
        self._certs.ca.clone()
    }

    /// Refuses `verb` on `resource` from now on (403, as RBAC does).
    pub fn deny(&self, verb: &str, resource: &str) {
        let denied = (verb.to_string(), resource.to_string());
        self.state.lock().unwrap().denied.insert(denied);
    }

    /// Refuses every request from now on with a 400 `Status` whose message `quote` makes of
    /// the request's `Authorization` header.
    pub fn refuse_quoting(&self, quote: fn(&str) -> String) {
        self.state.lock().unwrap().quoting = Some(quote);
    }

    /// Accepts only `token` from now on.
    pub fn accept_only(&self, token: &str) {
        self.state.lock().unwrap().token = token.to_string();
    }

    /// Replaces the token file as the kubelet does (a new file renamed into place).
    pub fn write_token(&self, token: &str) {
        let fresh = self.account.join("token.new");
        std::fs::write(&fresh, format!("{token}\n")).expect("write token");
        std::fs::rename(&fresh, self.account.join("token")).expect("rename token");
    }

    /// The path of the service account folder.
    pub fn account_dir(&self) -> PathBuf {
        self.account.0.clone()
    }

    /// The statuses answered so far to GETs of `path` (path and query, as sent), in order.
    pub fn answers(&self, path: &str) -> Vec<u16> {
        let seen = self.seen();
        seen.iter()
            .filter(|seen| seen.path == path)
            .filter_map(|seen| seen.status)
            .collect()
    }

    /// The requests seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// Waits until at least `n` requests were answered: the event a test that changes state
    /// mid-wait synchronises on.
    #[track_caller]
    pub fn wait_for_requests(&self, n: usize) {
        super::wait_until(&format!("{n} requests to the API server"), || {
            self.seen().len() >= n
        });
    }
}

/// Answers one request from the state, as the API server would; `None`: no answer ever.
fn answer(state: &Arc<Mutex<State>>, request: &Request<Incoming>) -> Option<Response<Answer>> {
    let query = request.uri().query().unwrap_or_default();
    if query.contains("watch=1") {
        return watch(state, request);
    }
    Some(answer_get(state, request))
}

/// What a watch follows.
enum Selects {
    /// The object of this name (`fieldSelector=metadata.name=NAME`).
    Name(String),
    /// The objects with all these labels (`labelSelector=k=v,…`).
    Labels(Vec<(String, String)>),
}

/// The `k=v` requirements of a label selector.
fn selector(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter(|r| !r.is_empty())
        .map(|r| {
            let (k, v) = r
                .split_once('=')
                .expect("the stand-in knows only k=v selectors");
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// A value of the query `path` carries, percent-decoded.
fn query_value(path: &str, name: &str) -> Option<String> {
    let query = path.split_once('?')?.1;
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
        .map(percent_decode)
}

/// A watch request: checked as a GET is, then answered as the plan says.
fn watch(state: &Arc<Mutex<State>>, request: &Request<Incoming>) -> Option<Response<Answer>> {
    let uri = request.uri().to_string();
    let Some((prefix, namespace, resource, None)) = route(request.uri().path()) else {
        panic!("the stand-in watches a collection: {uri}");
    };
    // No version: from the most recent one, what exists first sent as `ADDED`.
    let from = query_value(&uri, "resourceVersion");
    let bookmarks = uri.contains("allowWatchBookmarks=true");
    assert!(uri.contains("timeoutSeconds="), "{uri}");
    // One object by the name field selector, or the objects a label selector matches.
    let selects = match (
        query_value(&uri, "fieldSelector"),
        query_value(&uri, "labelSelector"),
    ) {
        (Some(field), None) => {
            let name = field
                .strip_prefix("metadata.name=")
                .expect("a name selector");
            Selects::Name(name.to_string())
        }
        (None, Some(labels)) => Selects::Labels(selector(&labels)),
        // Every object of the resource (the nodes).
        (None, None) => Selects::Labels(Vec::new()),
        _ => panic!("the stand-in watches by name or by labels: {uri}"),
    };
    let mut locked = state.lock().unwrap();
    locked.seen.push(Seen {
        path: uri.clone(),
        authorization: request
            .headers()
            .get("authorization")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        accept: None,
        host: None,
        status: None,
    });
    let bearer = format!("Bearer {}", locked.token);
    if !locked.anyone && locked.seen.last().unwrap().authorization.as_deref() != Some(&bearer) {
        return Some(respond(
            401,
            status(401, "Unauthorized", "Unauthorized", json!(null)),
        ));
    }
    if locked
        .denied
        .contains(&("watch".to_string(), resource.clone()))
    {
        let message = format!(
            "{resource} is forbidden: User \"system:serviceaccount:{OWN_NAMESPACE}:waiter\" \
             cannot watch resource \"{resource}\" in the namespace \"{namespace}\""
        );
        return Some(respond(403, status(403, "Forbidden", &message, json!({}))));
    }
    let always = locked.always.unwrap_or(Watching::Follow);
    let plan = locked.watches.pop_front().unwrap_or(always);
    let everything = locked.ignores_selectors;
    let now = locked.version;
    let from: Option<u64> = from.map(|v| v.parse().expect("a resourceVersion the stand-in gave"));
    // As kube-apiserver 1.34 on an etcd that cannot report its progress: a watch from now with
    // bookmarks is a "watch list", which it refuses.
    let plan = match (from, bookmarks) {
        (None, true) => Watching::Refuse,
        (Some(_), false) => panic!("a watch from a version without bookmarks: {uri}"),
        _ => plan,
    };
    let watched = move |key: &Key, object: &Value| {
        if everything {
            return (&key.0, &key.1) == (&prefix, &resource);
        }
        (&key.0, &key.1, &key.2) == (&prefix, &resource, &namespace)
            && match &selects {
                Selects::Name(name) => key.3 == *name,
                Selects::Labels(wanted) => wanted
                    .iter()
                    .all(|(k, v)| object["metadata"]["labels"][k].as_str() == Some(v)),
            }
    };
    // What exists at the most recent version, for a watch without one.
    let existing: Vec<Value> = match from {
        Some(_) => Vec::new(),
        None => locked
            .objects
            .iter()
            .filter(|(key, stored)| watched(key, &stored.body))
            .map(|(_, stored)| stored.body.clone())
            .collect(),
    };
    let from = from.unwrap_or(now);
    let gone = move || {
        status(
            410,
            "Expired",
            &format!("too old resource version: {from}"),
            json!(null),
        )
    };
    // What is watched as it is now, for a watch that sends it once.
    let current = locked
        .objects
        .iter()
        .find(|(key, stored)| watched(key, &stored.body))
        .map(|(_, stored)| stored.body.clone());
    match plan {
        Watching::Stall => return None,
        Watching::Gone => return Some(respond(410, gone())),
        Watching::Dropped => {
            let mut response = respond(200, json!(null));
            *response.body_mut() = Answer::Dropped(false);
            return Some(response);
        }
        _ => {}
    }
    let (lines, stream) = tokio::sync::mpsc::channel::<Bytes>(4);
    let state = state.clone();
    let line = |value: Value| Bytes::from(format!("{value}\n"));
    tokio::spawn(async move {
        let mut at = from;
        let mut sent = 0;
        for object in existing {
            let added = line(json!({"type": "ADDED", "object": object}));
            if lines.send(added).await.is_err() {
                return;
            }
        }
        match plan {
            Watching::End => return,
            Watching::Current => {
                if let Some(object) = current {
                    let _ = lines
                        .send(line(json!({"type": "MODIFIED", "object": object})))
                        .await;
                }
                return;
            }
            Watching::GoneEvent => {
                let _ = lines
                    .send(line(json!({"type": "ERROR", "object": gone()})))
                    .await;
                return;
            }
            Watching::Refuse => {
                let message = "a watch stream was requested by the client but the required \
                               storage feature RequestWatchProgress is disabled";
                let error = status(500, "InternalError", message, json!(null));
                let _ = lines
                    .send(line(json!({"type": "ERROR", "object": error})))
                    .await;
                return;
            }
            Watching::BookmarkThenEnd => {
                let version = {
                    let mut state = state.lock().unwrap();
                    state.version += 1;
                    state.version
                };
                let bookmark = json!({"type": "BOOKMARK", "object": {"kind": "Job",
                    "apiVersion": "batch/v1", "metadata": {"resourceVersion": version.to_string(),
                    "annotations": {"k8s.io/initial-events-end": "true"}}}});
                let _ = lines.send(line(bookmark)).await;
                return;
            }
            Watching::Flood => {
                for i in 0.. {
                    let pod = json!({"type": "ADDED", "object": {"kind": "Pod", "apiVersion": "v1",
                        "metadata": {"name": format!("flood-{i:0>244}"), "namespace": OWN_NAMESPACE,
                            "resourceVersion": from.to_string(), "labels": {"app": "web"}},
                        "status": {"phase": "Pending"}}});
                    if lines.send(line(pod)).await.is_err() {
                        return;
                    }
                }
            }
            Watching::Endless => {
                let _ = lines
                    .send(Bytes::from(r#"{"type":"MODIFIED","object":{"x":""#))
                    .await;
                let chunk = Bytes::from(vec![b'a'; 64 << 10]);
                while lines.send(chunk.clone()).await.is_ok() {}
                return;
            }
            _ => {}
        }
        loop {
            let new: Vec<(u64, &'static str, Value)> = state
                .lock()
                .unwrap()
                .changes
                .iter()
                .filter(|(version, changed, _, object)| *version > at && watched(changed, object))
                .map(|(version, _, kind, object)| (*version, *kind, object.clone()))
                .collect();
            for (version, kind, object) in new {
                at = version;
                if lines
                    .send(line(json!({"type": kind, "object": object})))
                    .await
                    .is_err()
                {
                    return;
                }
                sent += 1;
                if plan == Watching::EndAfter(sent) {
                    return;
                }
            }
            if lines.is_closed() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });
    let mut response = respond(200, json!(null));
    *response.body_mut() = Answer::Stream(stream);
    Some(response)
}

/// An answer's body: whole, or a watch's lines as they come.
pub enum Answer {
    Full(Full<Bytes>),
    Stream(tokio::sync::mpsc::Receiver<Bytes>),
    /// A blank line, then an error, on which the server drops the connection; `true` once the
    /// line is sent.
    Dropped(bool),
}

impl Body for Answer {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            Answer::Full(full) => Pin::new(full).poll_frame(cx).map_err(|e| match e {}),
            Answer::Dropped(sent @ false) => {
                *sent = true;
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"\n")))))
            }
            Answer::Dropped(true) => {
                let reset = std::io::ErrorKind::ConnectionReset;
                Poll::Ready(Some(Err(std::io::Error::new(reset, "dropped mid-answer"))))
            }
            Answer::Stream(lines) => lines
                .poll_recv(cx)
                .map(|line| line.map(|l| Ok(Frame::data(l)))),
        }
    }
}

/// Answers one POST: a route set by the test, else a dry-run pod CREATE (the pod as admission
/// leaves it, with a generated name), else 404; recorded with its status.
async fn answer_post(state: &Mutex<State>, request: Request<Incoming>) -> Response<Answer> {
    use http_body_util::BodyExt;
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    let path = parts.uri.to_string();
    let mut state = state.lock().unwrap();
    let response =
        if !state.anyone && header("authorization") != Some(format!("Bearer {}", state.token)) {
            respond(
                401,
                status(401, "Unauthorized", "Unauthorized", json!(null)),
            )
        } else if let Some((code, body)) = state.routes.get(&("POST".to_string(), path.clone())) {
            let mut response = respond(*code, json!(null));
            *response.body_mut() = Answer::Full(Full::new(body.clone()));
            response
        } else if parts.uri.path().ends_with("/pods") && parts.uri.query() == Some("dryRun=All") {
            assert_eq!(header("content-type").as_deref(), Some("application/json"));
            let mut pod: Value = serde_json::from_slice(&body).expect("a JSON pod");
            pod["metadata"]["name"] = json!("readygate-doctor-x7k2q");
            let pod = match state.admit {
                Some(admit) => admit(pod),
                None => pod,
            };
            respond(201, pod)
        } else {
            respond(404, status(404, "NotFound", "not found", json!({})))
        };
    state.seen.push(Seen {
        path,
        authorization: header("authorization"),
        accept: header("accept"),
        host: header("host"),
        status: Some(response.status().as_u16()),
    });
    response
}

/// Answers one GET from the state, as the API server would, and records it with its status.
fn answer_get(state: &Mutex<State>, request: &Request<Incoming>) -> Response<Answer> {
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    let mut state = state.lock().unwrap();
    let response = get(&state, request, header);
    state.seen.push(Seen {
        path: request.uri().to_string(),
        authorization: header("authorization"),
        accept: header("accept"),
        host: header("host"),
        status: Some(response.status().as_u16()),
    });
    response
}

/// The answer to one GET; `header` reads the request's headers.
fn get(
    state: &State,
    request: &Request<Incoming>,
    header: impl Fn(&str) -> Option<String>,
) -> Response<Answer> {
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or_default().to_string();
    if let Some(quote) = state.quoting {
        let message = quote(&header("authorization").unwrap_or_default());
        return respond(400, status(400, "BadRequest", &message, json!(null)));
    }
    if !state.anyone && header("authorization") != Some(format!("Bearer {}", state.token)) {
        return respond(
            401,
            status(401, "Unauthorized", "Unauthorized", json!(null)),
        );
    }
    let set = ("GET".to_string(), request.uri().to_string());
    if let Some((code, body)) = state.routes.get(&set) {
        let mut response = respond(*code, json!(null));
        *response.body_mut() = Answer::Full(Full::new(body.clone()));
        return response;
    }
    if let Some(body) = state.verbatim.get(&request.uri().to_string()) {
        let mut response = respond(200, json!(null));
        *response.body_mut() = Answer::Full(Full::new(body.clone()));
        return response;
    }
    let Some((prefix, namespace, resource, name)) = route(&path) else {
        return respond(
            404,
            status(
                404,
                "NotFound",
                "the server could not find the requested resource",
                json!({}),
            ),
        );
    };
    let group = prefix
        .split('/')
        .nth(2)
        .filter(|_| prefix.starts_with("/apis/"));
    let group = group.unwrap_or_default();
    let verb = if name.is_some() { "get" } else { "list" };
    if state.denied.contains(&(verb.to_string(), resource.clone())) {
        let what = match &name {
            Some(name) => format!("{resource}.{group} \"{name}\"").replace(". \"", " \""),
            None => format!("{resource}.{group}")
                .trim_end_matches('.')
                .to_string(),
        };
        let message = format!(
            "{what} is forbidden: User \"system:serviceaccount:{OWN_NAMESPACE}:waiter\" \
             cannot {verb} resource \"{resource}\" in API group \"{group}\" in the namespace \
             \"{namespace}\""
        );
        return respond(
            403,
            status(403, "Forbidden", &message, json!({"kind": resource})),
        );
    }
    match name {
        Some(name) => {
            let key = (prefix.clone(), resource.clone(), namespace, name.clone());
            match state.objects.get(&key) {
                Some(stored) => respond(200, stored.body.clone()),
                None => {
                    let message = format!("{resource}.{group} \"{name}\" not found");
                    let message = message.replace(". \"", " \"");
                    let details = json!({"name": name, "group": group, "kind": resource});
                    respond(404, status(404, "NotFound", &message, details))
                }
            }
        }
        None => {
            let selector = query
                .split('&')
                .find_map(|pair| pair.strip_prefix("labelSelector="))
                .map(percent_decode)
                .unwrap_or_default();
            let wanted = self::selector(&selector);
            let mut items: Vec<(&String, Value)> = state
                .objects
                .iter()
                .filter(|((p, r, ns, _), stored)| {
                    *p == prefix
                        && *r == resource
                        && *ns == namespace
                        && wanted.iter().all(|w| stored.labels.contains(w))
                })
                .map(|((_, _, _, name), stored)| {
                    // Items of a list carry no kind or apiVersion of their own.
                    let mut item = stored.body.clone();
                    let object = item.as_object_mut().expect("object");
                    object.remove("kind");
                    object.remove("apiVersion");
                    (name, item)
                })
                .collect();
            items.sort_by(|a, b| a.0.cmp(b.0));
            let (kind, api_version) = match resource.as_str() {
                "pods" => ("PodList", "v1"),
                "endpointslices" => ("EndpointSliceList", "discovery.k8s.io/v1"),
                "jobs" => ("JobList", "batch/v1"),
                "nodes" => ("NodeList", "v1"),
                _ => ("DeploymentList", "apps/v1"),
            };
            respond(
                200,
                json!({
                    "kind": kind,
                    "apiVersion": api_version,
                    "metadata": {"resourceVersion": state.version.to_string()},
                    "items": items.into_iter().map(|(_, item)| item).collect::<Vec<_>>(),
                }),
            )
        }
    }
}

/// `(API prefix, namespace, resource, name)` of `/api/v1/namespaces/NS/RES[/NAME]` or
/// `/apis/GROUP/VERSION/namespaces/NS/RES[/NAME]`.
fn route(path: &str) -> Option<(String, String, String, Option<String>)> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (prefix, rest) = match *parts.first()? {
        "api" => (format!("/api/{}", parts.get(1)?), &parts[2..]),
        "apis" => (
            format!("/apis/{}/{}", parts.get(1)?, parts.get(2)?),
            &parts[3..],
        ),
        _ => return None,
    };
    match rest {
        ["namespaces", ns, resource] => Some((prefix, ns.to_string(), resource.to_string(), None)),
        ["namespaces", ns, resource, name] => Some((
            prefix,
            ns.to_string(),
            resource.to_string(),
            Some(name.to_string()),
        )),
        // Outside namespaces: nodes, a cluster-scoped custom resource.
        [resource] if *resource != "namespaces" => {
            Some((prefix, String::new(), resource.to_string(), None))
        }
        [resource, name] if *resource != "namespaces" => Some((
            prefix,
            String::new(),
            resource.to_string(),
            Some(name.to_string()),
        )),
        _ => None,
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).expect("a %-escape"));
            i += 3;
        } else {
            assert!(
                bytes[i].is_ascii_alphanumeric() || b"-_.~".contains(&bytes[i]),
                "unencoded {:?} in a query value: {text}",
                bytes[i] as char
            );
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("utf-8")
}

/// A `Status` object, as the API server sends with every refusal.
fn status(code: u16, reason: &str, message: &str, details: Value) -> Value {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if !details.is_null() {
        status["details"] = details;
    }
    status
}

fn respond(code: u16, body: Value) -> Response<Answer> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .header("audit-id", "0b5a4d3e-1f3c-4a8e-9d6b-2c7f0e1a9b84")
        .body(Answer::Full(Full::new(Bytes::from(body.to_string()))))
        .unwrap()
}

const TIME: &str = "2026-12-01T10:00:00Z";

fn metadata(namespace: &str, name: &str, labels: Value) -> Value {
    json!({
        "name": name,
        "namespace": namespace,
        "uid": "5f0c2a43-8d9e-4b71-a6c2-3e8f1d7b9a10",
        "resourceVersion": "4711",
        "generation": 1,
        "creationTimestamp": TIME,
        "labels": labels,
    })
}

/// How far a Job has got.
#[derive(Debug, Clone, Copy)]
pub enum JobState {
    /// A pod is running.
    Running,
    /// Succeeded: `SuccessCriteriaMet` and `Complete`.
    Complete,
    /// Out of retries: `FailureTarget` and `Failed`.
    Failed,
    /// Out of retries, its pod still terminating: `FailureTarget` only (`Failed` comes once
    /// the pod is gone).
    Failing,
    /// `spec.suspend: true`.
    Suspended,
}

/// A batch/v1 Job, as `kubectl get job -o json` shows one.
pub fn job(namespace: &str, name: &str, state: JobState) -> Value {
    let condition = |kind: &str, reason: &str, message: &str| {
        json!({"type": kind, "status": "True", "lastProbeTime": TIME,
               "lastTransitionTime": TIME, "reason": reason, "message": message})
    };
    let status = match state {
        JobState::Running => json!({"startTime": TIME, "active": 1, "ready": 0,
            "terminating": 0, "uncountedTerminatedPods": {}}),
        JobState::Suspended => json!({"conditions": [condition("Suspended", "JobSuspended",
            "Job suspended")], "active": 0, "ready": 0, "terminating": 0}),
        JobState::Complete => json!({
            "conditions": [
                condition("SuccessCriteriaMet", "CompletionsReached",
                    "Reached expected number of succeeded pods"),
                condition("Complete", "CompletionsReached",
                    "Reached expected number of succeeded pods"),
            ],
            "startTime": TIME, "completionTime": TIME, "succeeded": 1, "ready": 0,
            "terminating": 0, "uncountedTerminatedPods": {},
        }),
        JobState::Failed => json!({
            "conditions": [
                condition("FailureTarget", "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit"),
                condition("Failed", "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit"),
            ],
            "startTime": TIME, "failed": 7, "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {},
        }),
        JobState::Failing => json!({
            "conditions": [
                condition("FailureTarget", "BackoffLimitExceeded",
                    "Job has reached the specified backoff limit"),
            ],
            "startTime": TIME, "failed": 6, "ready": 0, "terminating": 1,
            "uncountedTerminatedPods": {},
        }),
    };
    let labels = json!({"batch.kubernetes.io/job-name": name, "job-name": name});
    json!({
        "kind": "Job",
        "apiVersion": "batch/v1",
        "metadata": metadata(namespace, name, labels.clone()),
        "spec": {
            "parallelism": 1, "completions": 1, "backoffLimit": 6,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid":
                "5f0c2a43-8d9e-4b71-a6c2-3e8f1d7b9a10"}},
            "manualSelector": false,
            "template": {"metadata": {"labels": labels}, "spec": {
                "containers": [{"name": name, "image": "app:1", "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
                "restartPolicy": "Never", "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst", "securityContext": {}, "schedulerName":
                "default-scheduler"}},
            "completionMode": "NonIndexed",
            "suspend": matches!(state, JobState::Suspended),
            "podReplacementPolicy": "TerminatingOrFailed",
        },
        "status": status,
    })
}

/// A v1 Pod with these labels, running and ready or not.
pub fn pod(namespace: &str, name: &str, labels: Value, ready: bool) -> Value {
    let flag = if ready { "True" } else { "False" };
    let mut ready_condition = json!({"type": "Ready", "status": flag, "lastProbeTime": null,
        "lastTransitionTime": TIME});
    let mut containers_ready = json!({"type": "ContainersReady", "status": flag,
        "lastProbeTime": null, "lastTransitionTime": TIME});
    if !ready {
        for condition in [&mut ready_condition, &mut containers_ready] {
            condition["reason"] = json!("ContainersNotReady");
            condition["message"] = json!("containers with unready status: [app]");
        }
    }
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": metadata(namespace, name, labels),
        "spec": {"containers": [{"name": "app", "image": "app:1", "resources": {}}],
                 "restartPolicy": "Always", "nodeName": "node-1",
                 "serviceAccountName": "default"},
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": null,
                 "lastTransitionTime": TIME},
                {"type": "Initialized", "status": "True", "lastProbeTime": null,
                 "lastTransitionTime": TIME},
                ready_condition,
                containers_ready,
                {"type": "PodScheduled", "status": "True", "lastProbeTime": null,
                 "lastTransitionTime": TIME},
            ],
            "hostIP": "10.0.0.4", "podIP": "10.244.1.7", "podIPs": [{"ip": "10.244.1.7"}],
            "startTime": TIME,
            "containerStatuses": [{"name": "app", "ready": ready, "restartCount": 0,
                "started": true, "image": "app:1", "imageID": "", "containerID":
                "containerd://4f1d", "state": {"running": {"startedAt": TIME}}}],
            "qosClass": "BestEffort",
        },
    })
}

/// A discovery.k8s.io/v1 EndpointSlice of Service `service`; each endpoint's `ready` condition
/// as given (`None`: absent). No endpoint at all is sent as `"endpoints": null`, as the API does.
pub fn endpoint_slice(namespace: &str, service: &str, ready: &[Option<bool>]) -> Value {
    let endpoints: Vec<Value> = ready
        .iter()
        .enumerate()
        .map(|(i, ready)| {
            let mut conditions = json!({"serving": true, "terminating": false});
            if let Some(ready) = ready {
                conditions["ready"] = json!(ready);
            }
            json!({"addresses": [format!("10.244.1.{}", i + 10)], "conditions": conditions,
                   "targetRef": {"kind": "Pod", "namespace": namespace,
                                 "name": format!("{service}-{i}")},
                   "nodeName": "node-1"})
        })
        .collect();
    let labels = json!({"kubernetes.io/service-name": service,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"});
    json!({
        "kind": "EndpointSlice",
        "apiVersion": "discovery.k8s.io/v1",
        "metadata": metadata(namespace, &format!("{service}-x7k2p"), labels),
        "addressType": "IPv4",
        "endpoints": if endpoints.is_empty() { Value::Null } else { json!(endpoints) },
        "ports": [{"name": "", "protocol": "TCP", "port": 5432}],
    })
}

/// An apps/v1 Deployment of `replicas`, of which `updated` are updated; available or not.
pub fn deployment(
    namespace: &str,
    name: &str,
    replicas: u32,
    updated: u32,
    available: bool,
) -> Value {
    let available_condition = match available {
        true => json!({"type": "Available", "status": "True", "lastUpdateTime": TIME,
            "lastTransitionTime": TIME, "reason": "MinimumReplicasAvailable",
            "message": "Deployment has minimum availability."}),
        false => json!({"type": "Available", "status": "False", "lastUpdateTime": TIME,
            "lastTransitionTime": TIME, "reason": "MinimumReplicasUnavailable",
            "message": "Deployment does not have minimum availability."}),
    };
    json!({
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": metadata(namespace, name, json!({"app": name})),
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "strategy": {"type": "RollingUpdate", "rollingUpdate":
                    {"maxUnavailable": "25%", "maxSurge": "25%"}},
                 "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
        "status": {
            "observedGeneration": 1, "replicas": replicas, "updatedReplicas": updated,
            "readyReplicas": updated, "availableReplicas": if available { updated } else { 0 },
            "conditions": [available_condition,
                {"type": "Progressing", "status": "True", "lastUpdateTime": TIME,
                 "lastTransitionTime": TIME, "reason": "NewReplicaSetAvailable",
                 "message": format!("ReplicaSet \"{name}-5d8f7c9b6\" has successfully progressed.")}],
        },
    })
}
