//! One request to the API server per attempt: a fresh connection, TLS verified with the
//! cluster's CA, the credential read afresh, and the answer's status turned into a reason a
//! person can act on.

use std::borrow::Cow;
use std::time::Duration;

use http_body_util::{Empty, Full};
use hyper::body::Bytes;
use hyper::{Method, Request};
use serde::Deserialize;
use socket2::{SockRef, TcpKeepalive};
use tokio::net::TcpStream;

use super::cluster::Cluster;
use super::credential::Session;
use super::object::clip;
use crate::error::Failure;
use crate::grammar::header::Header;
use crate::kind::http::request::{build, Carry};
use crate::kind::http::HttpTarget;
use crate::kind::http::{read_body, roundtrip};
use crate::net::resolve::Resolver;
use crate::net::transport::{connect_tcp, BoxedIo};
use crate::runtime::{Attempt, TLS_HANDSHAKE};

/// The most of an answer that is read: a list of a few hundred pods; also the most of one
/// watch event.
pub const MAX_ANSWER: usize = 4 << 20;

/// An API resource: its group (empty for the core group), version and plural name, and whether
/// its objects live in a namespace; a custom resource's is found by discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    pub group: Cow<'static, str>,
    pub version: Cow<'static, str>,
    pub plural: Cow<'static, str>,
    pub namespaced: bool,
}

impl Resource {
    /// A built-in resource whose objects live in a namespace.
    pub const fn namespaced(
        group: &'static str,
        version: &'static str,
        plural: &'static str,
    ) -> Resource {
        Resource {
            group: Cow::Borrowed(group),
            version: Cow::Borrowed(version),
            plural: Cow::Borrowed(plural),
            namespaced: true,
        }
    }
}

/// What is asked of a resource, and so which RBAC verb it needs.
pub enum Query<'a> {
    /// `get` of the object so named.
    Get(&'a str),
    /// `list` of the objects this label selector matches.
    List(Cow<'a, str>),
}

/// What the API server says when it refuses: a `Status` object.
#[derive(Deserialize)]
struct Refusal {
    /// E.g. `jobs.batch "x" not found`.
    #[serde(default)]
    message: String,
}

/// Asks `query` of `resource` in `namespace`: the answer's body (status 200), unread; `None`:
/// no such object (404), which may come later. The name is looked up by `resolver`, all
/// within `at`.
pub async fn fetch_body(
    cluster: &Cluster,
    resource: &Resource,
    namespace: &str,
    query: &Query<'_>,
    resolver: &Resolver,
    at: &Attempt,
) -> Result<Option<Vec<u8>>, Failure> {
    let path = path(resource, namespace, query);
    let (status, body) = call(cluster, Method::GET, path, None, resolver, at).await?;
    let failure = match status {
        200 => return Ok(Some(body)),
        404 => return Ok(None),
        401 => unauthorized(cluster),
        403 => forbidden(resource, namespace, query, &cluster.who),
        _ => refused(status, &body),
    };
    Err(failure)
}

/// One request of `method` to `path` (with its query) carrying `body` as JSON: the answer's
/// status and body (at most [`MAX_ANSWER`]), all within `at`. For the commands that ask the
/// cluster more than a target's object (`doctor`).
pub async fn call(
    cluster: &Cluster,
    method: Method,
    path: String,
    body: Option<Vec<u8>>,
    resolver: &Resolver,
    at: &Attempt,
) -> Result<(u16, Vec<u8>), Failure> {
    let session = cluster.session().await?;
    let request = request(&cluster.api, path, session.bearer.as_deref());
    let request = request.map_err(Failure::from)?;
    let stream = connect(cluster, &session, resolver, at).await?;
    let read = |response: hyper::Response<hyper::body::Incoming>| async move {
        let status = response.status().as_u16();
        let body = read_body(response.into_body(), MAX_ANSWER + 1).await?;
        Ok((status, body))
    };
    let (status, body) = match body {
        None => roundtrip(stream, request, read, at).await?,
        Some(body) => {
            let (mut parts, _) = request.into_parts();
            parts.method = method;
            let json = hyper::header::HeaderValue::from_static("application/json");
            parts.headers.insert(hyper::header::CONTENT_TYPE, json);
            let request = Request::from_parts(parts, Full::new(Bytes::from(body)));
            roundtrip(stream, request, read, at).await?
        }
    };
    if body.len() > MAX_ANSWER {
        let mib = MAX_ANSWER >> 20;
        return Err(format!("the API server's answer is over {mib} MiB").into());
    }
    Ok((status, body))
}

/// The reason for a 401: the credential is not accepted.
pub fn unauthorized(cluster: &Cluster) -> Failure {
    let who = &cluster.who;
    Failure::Text(format!(
        "token rejected (401 Unauthorized): the API server does not accept the credentials of \
         {who}"
    ))
}

/// The reason for another refusal: its status and the `Status` object's message.
pub fn refused(status: u16, body: &[u8]) -> Failure {
    let message = serde_json::from_slice::<Refusal>(body)
        .map(|status| status.message)
        .unwrap_or_default();
    let colon = if message.is_empty() { "" } else { ": " };
    Failure::Text(format!(
        "status {status} from the API server{colon}{}",
        clip(&message)
    ))
}

/// A fresh connection to the API server, TLS verified with the cluster's CA (none for
/// `http://`, as `kubectl proxy` serves).
pub async fn connect(
    cluster: &Cluster,
    session: &Session,
    resolver: &Resolver,
    at: &Attempt,
) -> Result<BoxedIo, Failure> {
    let host = &cluster.api.endpoint.host;
    let tcp = connect_tcp(&cluster.api.endpoint, resolver, at).await?;
    keepalive(&tcp, cluster.attempt_timeout);
    let stream: BoxedIo = Box::new(tcp);
    let Some(tls) = session.tls.as_ref().filter(|_| cluster.api.tls) else {
        return Ok(stream);
    };
    at.waiting_for(TLS_HANDSHAKE);
    let name = cluster.server_name.clone();
    crate::net::tls::connect_with(stream, host, name, tls, &cluster.trust).await
}

/// A quiet connection is probed (TCP keepalive) after this long: a watch is quiet for minutes.
const PROBE_AFTER: Duration = Duration::from_secs(10);
/// Probes unanswered in a row after which the API server is taken as gone.
const PROBES: u32 = 3;

/// TCP keepalive on an API connection, each probe given the attempt's time (the kernel counts
/// whole seconds): a watch whose server vanished without a word (its node gone, a connection
/// tracker that forgot it) fails its read instead of waiting for `timeoutSeconds`.
fn keepalive(tcp: &TcpStream, bound: Duration) {
    let every = bound.clamp(Duration::from_secs(1), PROBE_AFTER);
    let probes = TcpKeepalive::new()
        .with_time(PROBE_AFTER)
        .with_interval(every)
        .with_retries(PROBES);
    if let Err(e) = SockRef::from(tcp).set_tcp_keepalive(&probes) {
        tracing::debug!("no TCP keepalive on the API connection: {e}");
    }
}

/// The collection's path, e.g. `/apis/batch/v1/namespaces/NS/jobs` (`/apis/G/V/PLURAL` for a
/// resource outside namespaces).
pub fn collection(resource: &Resource, namespace: &str) -> String {
    let (version, plural) = (&resource.version, &resource.plural);
    let api = match &*resource.group {
        "" => format!("/api/{version}"),
        group => format!("/apis/{group}/{version}"),
    };
    match resource.namespaced {
        true => format!("{api}/namespaces/{namespace}/{plural}"),
        false => format!("{api}/{plural}"),
    }
}

/// ` in NS` after an object in a reason; nothing for a resource outside namespaces (whose
/// namespace is empty).
pub fn in_namespace(namespace: &str) -> String {
    match namespace {
        "" => String::new(),
        namespace => format!(" in {namespace}"),
    }
}

/// The request path, e.g. `/apis/batch/v1/namespaces/NS/jobs/NAME`.
fn path(resource: &Resource, namespace: &str, query: &Query) -> String {
    let collection = collection(resource, namespace);
    match query {
        Query::Get(name) => format!("{collection}/{name}"),
        Query::List(labels) => format!(
            "{collection}?labelSelector={}",
            crate::text::percent::encode_query_value(labels)
        ),
    }
}

/// `forbidden: get jobs/NAME in NS — grant get on jobs (apiGroup "batch") to the pod's …`.
pub fn forbidden(resource: &Resource, namespace: &str, query: &Query, who: &str) -> Failure {
    let plural = &resource.plural;
    let (verb, object) = match query {
        Query::Get(name) => ("get", format!("{plural}/{name}")),
        Query::List(_) => ("list", plural.to_string()),
    };
    let group = api_group(&resource.group);
    let at = in_namespace(namespace);
    Failure::Text(format!(
        "forbidden: {verb} {object}{at} — grant {verb} on {plural}{group} to {who}"
    ))
}

/// ` (apiGroup "batch")` after a resource's name in a grant, nothing for the core group.
pub fn api_group(group: &str) -> String {
    match group {
        "" => String::new(),
        group => format!(" (apiGroup \"{group}\")"),
    }
}

/// The GET of `path` (under the server's own path) from `api`, asking for JSON, with the
/// token as a bearer credential (which `Header` marks sensitive).
pub fn request(
    api: &HttpTarget,
    path: String,
    token: Option<&str>,
) -> Result<Request<Empty<Bytes>>, String> {
    let mut headers = vec![Header::parse("Accept: application/json")?];
    if let Some(token) = token {
        headers.push(Header::parse(&format!("Authorization: Bearer {token}"))?);
    }
    let mut api = api.clone();
    api.path = format!("{}{path}", api.path.trim_end_matches('/'));
    build(&api, Method::GET, &headers, Carry::ALL)
}
