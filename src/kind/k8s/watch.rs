//! The watch of one named object: after a GET, one long request that the API server answers
//! with each change as it happens, decoded one event (one JSON line) at a time. Each event's
//! object is judged as a GET's answer is, kept in a [`Feed`], and wakes the engine, whose next
//! attempt takes it without a request. The engine still owns retrying: when the watch breaks,
//! attempts fall back to GETs on the target's schedule, and each GET restarts the watch.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use http_body_util::BodyExt;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{oneshot, Notify};
use tokio::task::JoinHandle;
use tokio::time::{sleep, timeout};

use super::cluster::Cluster;
use super::object::clip;
use super::request::{collection, connect, request, MAX_ANSWER};
use super::{judge, watched, K8sTarget, Verdict};
use crate::engine::{Miss, Watch};
use crate::error::Failure;
use crate::kind::http::roundtrip;
use crate::kind::Context;
use crate::percent::encode_query_value;

/// The `timeoutSeconds` asked of the API server: a quiet object costs one request per span.
const WATCH_SECONDS: u64 = 240;

/// What the watch has learnt, shared by the attempts and the task that reads the stream.
#[derive(Default)]
pub struct Feed {
    state: Mutex<State>,
    /// A version to watch from is there.
    start: Notify,
    /// The object changed (or the watch broke): the engine's next attempt comes now.
    wake: Notify,
}

#[derive(Default)]
struct State {
    /// A task follows the stream; without one (`probe`, `serve`) every attempt is a GET.
    watching: bool,
    /// The watch was refused (403): GETs only, as before watches.
    polling: bool,
    /// Where the watch starts or resumes; `None`: a GET is due first.
    version: Option<String>,
    /// The object's last state, judged; current while `version` is set.
    verdict: Option<Verdict>,
    /// Why the watch broke, told by the next attempt (which then backs off, then re-lists).
    broke: Option<Failure>,
}

impl Feed {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The verdict an attempt takes without a request, when the watch keeps it current.
    pub fn current(&self) -> Option<Verdict> {
        let mut state = self.state();
        if let Some(failure) = state.broke.take() {
            return Some(Err(Miss::NotYet(failure)));
        }
        match state.watching && !state.polling && state.version.is_some() {
            true => state.verdict.clone(),
            false => None,
        }
    }

    /// A GET's verdict, and the version it read, from which the watch starts.
    pub fn listed(&self, version: Option<String>, verdict: &Verdict) {
        let mut state = self.state();
        let start = state.watching && !state.polling && version.is_some();
        (state.version, state.verdict) = (version, Some(verdict.clone()));
        if start {
            self.start.notify_one();
        }
    }

    /// An event's object: its version and what it says.
    fn event(&self, version: Option<String>, verdict: Verdict) {
        let mut state = self.state();
        if version.is_some() {
            state.version = version;
        }
        state.verdict = Some(verdict);
        self.wake.notify_one();
    }

    /// The watch must start again from a GET: at once (`410 Gone`), or, with a reason, after
    /// the engine's back-off.
    fn relist(&self, broke: Option<Failure>) {
        let mut state = self.state();
        (state.version, state.verdict, state.broke) = (None, None, broke);
        self.wake.notify_one();
    }

    /// Waits for a version to watch from.
    async fn version(&self) -> String {
        loop {
            if let Some(version) = self.state().version.clone() {
                return version;
            }
            self.start.notified().await;
        }
    }
}

/// The engine's wake-ups for a watched `k8s://` target; dropping it ends the watch.
pub struct Watcher {
    feed: Arc<Feed>,
    task: JoinHandle<()>,
}

impl Watcher {
    /// Starts following `target` for the engine, if it names one object; `name` labels the
    /// warning of a refused watch.
    pub fn start(
        target: &K8sTarget,
        context: Arc<Context>,
        feed: Arc<Feed>,
        name: String,
    ) -> Option<Watcher> {
        watched(target)?;
        feed.state().watching = true;
        let follow = follow(target.clone(), context, feed.clone(), name);
        let task = tokio::spawn(follow);
        Some(Watcher { feed, task })
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.task.abort();
        self.feed.state().watching = false;
    }
}

impl Watch for Watcher {
    async fn changed(&mut self) {
        self.feed.wake.notified().await;
    }
}

/// How one watch request ended.
enum Ended {
    /// The server ended the stream (`timeoutSeconds`): resume from the last version.
    Resume,
    /// `410 Gone`: the version is too old; re-list at once.
    Gone,
    /// `403`: the service account may `get` but not `watch`.
    Forbidden,
    /// Anything else: back off on the target's schedule, then re-list.
    Broke(Failure),
}

/// Follows the object from each version the attempts' GETs give, until dropped (the engine's
/// deadline) or the watch is refused.
async fn follow(target: K8sTarget, context: Arc<Context>, feed: Arc<Feed>, name: String) {
    let (Some(cluster), Some((resource, kind, object))) =
        (context.options.k8s.as_ref(), watched(&target))
    else {
        return;
    };
    let ns = target.namespace.as_deref().unwrap_or(&cluster.namespace);
    let bound = cluster.attempt_timeout;
    loop {
        let from = feed.version().await;
        let path = format!(
            "{}?watch=1&fieldSelector={}&resourceVersion={}&allowWatchBookmarks=true\
             &timeoutSeconds={WATCH_SECONDS}",
            collection(resource, ns),
            encode_query_value(&format!("metadata.name={object}")),
            encode_query_value(&from),
        );
        let absent = || format!("no {kind} {object} in {ns} (yet)");
        match once(cluster, path, &target, &feed, bound, absent).await {
            Ended::Resume => tracing::debug!("{name}: the watch ended; resuming"),
            Ended::Gone => {
                tracing::debug!("{name}: the watch's version is gone; re-listing");
                feed.relist(None);
            }
            Ended::Forbidden => {
                let (group, plural) = (resource.0, resource.2);
                let group = match group {
                    "" => String::new(),
                    group => format!(" (apiGroup \"{group}\")"),
                };
                tracing::warn!(
                    "{name}: forbidden: watch {plural}/{object} in {ns}; polling with get \
                     instead — grant watch on {plural}{group} to the pod's service account"
                );
                feed.state().polling = true;
                return;
            }
            Ended::Broke(failure) => {
                tracing::debug!("{name}: the watch broke: {failure}");
                feed.relist(Some(failure));
            }
        }
    }
}

/// One watch request of `path`: its events judged into `feed` until it ends.
async fn once(
    cluster: &Cluster,
    path: String,
    target: &K8sTarget,
    feed: &Feed,
    bound: Duration,
    absent: impl Fn() -> String,
) -> Ended {
    let (head, mut headed) = oneshot::channel();
    let exchange = async {
        // Read afresh for every request: bound tokens rotate.
        let token = cluster.read_token().await?;
        let request = request(&cluster.api, path, &token).map_err(Failure::from)?;
        let stream = connect(cluster).await?;
        roundtrip(stream, request, |response| async move {
            let _ = head.send(());
            match response.status().as_u16() {
                200 => {}
                410 => return Ok(Ended::Gone),
                403 => return Ok(Ended::Forbidden),
                status => {
                    let failure = format!("status {status} from the API server to the watch");
                    return Ok(Ended::Broke(failure.into()));
                }
            }
            Ok(events(response.into_body(), target, feed, bound, absent).await)
        })
        .await
    };
    tokio::pin!(exchange);
    // The answer's head comes within the attempt's bound; then the stream may be quiet until
    // the server ends it at `timeoutSeconds`.
    let ended = tokio::select! {
        ended = &mut exchange => ended,
        _ = sleep(bound) => match headed.try_recv() {
            Ok(()) => exchange.await,
            Err(_) => Err(Failure::from("no answer to the watch in time".to_string())),
        },
    };
    ended.unwrap_or_else(Ended::Broke)
}

/// One line of a watch stream.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// Reads the stream line by line, no line kept past [`MAX_ANSWER`].
async fn events(
    mut body: hyper::body::Incoming,
    target: &K8sTarget,
    feed: &Feed,
    bound: Duration,
    absent: impl Fn() -> String,
) -> Ended {
    let silence = Duration::from_secs(WATCH_SECONDS) + bound;
    let mut line: Vec<u8> = Vec::new();
    let mut heard = false;
    loop {
        let data = match timeout(silence, body.frame()).await {
            Err(_) => return Ended::Broke("the watch went silent".to_string().into()),
            Ok(None) if heard => return Ended::Resume,
            Ok(None) => return Ended::Broke("the API server ended the watch at once".into()),
            Ok(Some(Err(e))) => return Ended::Broke(format!("the watch broke: {e}").into()),
            Ok(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
        };
        let mut rest = &data[..];
        loop {
            let end = rest.iter().position(|&b| b == b'\n');
            let take = end.unwrap_or(rest.len());
            if line.len() + take > MAX_ANSWER {
                let mib = MAX_ANSWER >> 20;
                let failure = format!("a watch event from the API server is over {mib} MiB");
                return Ended::Broke(failure.into());
            }
            line.extend_from_slice(&rest[..take]);
            let Some(end) = end else { break };
            rest = &rest[end + 1..];
            if line.iter().all(u8::is_ascii_whitespace) {
                line.clear();
                continue;
            }
            heard = true;
            if let Some(ended) = event(&line, target, feed, &absent) {
                return ended;
            }
            line = Vec::new();
        }
    }
}

/// Judges one event into `feed`; `Some` ends the watch.
fn event(
    line: &[u8],
    target: &K8sTarget,
    feed: &Feed,
    absent: impl Fn() -> String,
) -> Option<Ended> {
    let Ok(event) = serde_json::from_slice::<Event>(line) else {
        let failure = "unexpected watch event from the API server".to_string();
        return Some(Ended::Broke(failure.into()));
    };
    let object = event.object.get().as_bytes();
    match event.kind {
        "ADDED" | "MODIFIED" => feed.event(version(object), judge(target, object)),
        "DELETED" => feed.event(version(object), Err(Miss::NotYet(absent().into()))),
        "BOOKMARK" => {
            if let Some(version) = version(object) {
                feed.state().version = Some(version);
            }
        }
        "ERROR" => {
            let status: Status = serde_json::from_slice(object).unwrap_or_default();
            if status.code == 410 {
                return Some(Ended::Gone);
            }
            let failure = format!(
                "the watch failed: status {} from the API server: {}",
                status.code,
                clip(&status.message)
            );
            return Some(Ended::Broke(failure.into()));
        }
        other => {
            let failure = format!("unexpected watch event {}", clip(other));
            return Some(Ended::Broke(failure.into()));
        }
    }
    None
}

/// An `ERROR` event's object.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Status {
    code: u16,
    message: String,
}

/// `metadata.resourceVersion` of an object's JSON, if it has one.
pub fn version(object: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Versioned {
        metadata: Metadata,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Metadata {
        resource_version: String,
    }
    let versioned: Versioned = serde_json::from_slice(object).ok()?;
    Some(versioned.metadata.resource_version).filter(|v| !v.is_empty())
}
