//! The watch of a target's object (by its name) or list (by its label selector): after a GET,
//! one long request that the API server answers with each change as it happens, decoded one
//! event (one JSON line) at a time. Each event's object is judged as a GET's answer is (for a
//! list: the item changed in the list kept, then the list judged), kept in a [`Feed`], and
//! wakes the engine, whose next attempt takes it without a request. The engine still owns
//! retrying: when the watch breaks, attempts fall back to GETs on the target's schedule, and
//! each GET restarts the watch.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::Response;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{oneshot, Notify};
use tokio::task::JoinHandle;
use tokio::time::{sleep, timeout_at};

use super::cluster::Cluster;
use super::list::{self, Item, Items};
use super::object::clip;
use super::request::Query::{Get, List};
use super::request::{api_group, collection, connect, in_namespace, request, Resource};
use super::request::{Query, MAX_ANSWER};
use super::selector;
use super::{
    absent, judge, judge_list, list_item, namespace, query, resource, Judgement, K8sTarget, Object,
};
use crate::engine::{Backoff, Schedule, Watch};
use crate::error::{describe_error, Failure};
use crate::kind::http::roundtrip;
use crate::kind::Context;
use crate::net::resolve::Resolver;
use crate::runtime::Attempt;
use crate::text::percent::encode_query_value;

/// The shortest `timeoutSeconds` asked of the API server, and the spread added at random (so
/// that pods started together do not come back together): a quiet object costs one request
/// per 4 to 8 minutes.
const WATCH_SECONDS: u64 = 240;

/// The longest `resourceVersion` used: the API server's are decimal numbers (etcd's revision);
/// a longer one is not put in a request, a reason or a log line, and the target is polled.
const MAX_VERSION: usize = 300;

/// What the watch has learnt, shared by the attempts and the task that reads the stream.
#[derive(Default)]
pub struct Feed {
    state: Mutex<FeedState>,
    /// A version to watch from is there.
    start: Notify,
    /// The object changed (or the watch broke): the engine's next attempt comes now.
    wake: Notify,
    /// The resource discovery found for a target of any type, once it has.
    found: OnceLock<Resource>,
}

/// What a feed knows: whether and how its target is watched, and the last state seen.
#[derive(Default)]
struct FeedState {
    /// A task follows the stream; without one (`probe`, `serve`) every attempt is a GET.
    watching: bool,
    /// The watch was refused (403): GETs only, as before watches.
    polling: bool,
    /// A watch from now failed (a server that cannot serve one): a missing object is polled
    /// until it exists.
    polls_missing: bool,
    /// Where the watch starts or resumes; `None`: a GET is due first; empty: from now (the
    /// GET found no such object).
    version: Option<String>,
    /// The object's (or list's) last state, judged; current while `version` is set.
    verdict: Option<Judgement>,
    /// A list's items, which each event of its watch changes.
    items: Option<Items>,
    /// Why the watch broke, told by the next attempt (which then backs off, then re-lists).
    broke: Option<Failure>,
}

impl Feed {
    fn state(&self) -> MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The resource discovery found for a target of any type, if it has yet.
    pub fn resource(&self) -> Option<Resource> {
        self.found.get().cloned()
    }

    /// Keeps what discovery found.
    pub fn found(&self, resource: Resource) {
        let _ = self.found.set(resource);
    }

    /// The verdict an attempt takes without a request, when the watch keeps it current.
    pub fn current(&self) -> Option<Judgement> {
        let mut state = self.state();
        if let Some(failure) = state.broke.take() {
            return Some(Err(failure));
        }
        match state.watching && !state.polling && state.version.is_some() {
            true => state.verdict.clone(),
            false => None,
        }
    }

    /// A GET's verdict, the version it read (from which the watch starts) and, for a list,
    /// its items.
    pub fn listed(&self, version: Option<String>, verdict: &Judgement, items: Option<Items>) {
        let mut state = self.state();
        let version = version.filter(|v| !(v.is_empty() && state.polls_missing));
        let start = state.watching && !state.polling && version.is_some();
        (state.version, state.verdict) = (version, Some(verdict.clone()));
        state.items = items;
        if start {
            self.start.notify_one();
        }
    }

    /// An event's object: its version and what it says.
    fn event(&self, version: Option<String>, verdict: Judgement) {
        let mut state = self.state();
        if version.is_some() {
            state.version = version;
        }
        state.verdict = Some(verdict);
        self.wake.notify_one();
    }

    /// An event's list item: added or changed (`Some`) or deleted, then the list judged anew.
    fn item(
        &self,
        version: Option<String>,
        (name, item): (String, Option<Item>),
        judge: impl FnOnce(&Items) -> Judgement,
    ) -> Result<(), Failure> {
        let mut state = self.state();
        let items = state.items.get_or_insert_with(Items::default);
        list::change(items, name, item)?;
        let verdict = judge(items);
        if version.is_some() {
            state.version = version;
        }
        state.verdict = Some(verdict);
        self.wake.notify_one();
        Ok(())
    }

    /// The watch must start again from a GET: at once (`410 Gone`), or, with a reason, after
    /// the engine's back-off.
    fn relist(&self, broke: Option<Failure>) {
        let mut state = self.state();
        (state.version, state.verdict, state.broke) = (None, None, broke);
        state.items = None;
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
    /// Starts following `target` for the engine; `name` labels the watch's warnings, and
    /// `schedule` (the target's) spaces the requests of a watch the server keeps ending.
    pub fn start(
        target: &K8sTarget,
        context: Arc<Context>,
        feed: Arc<Feed>,
        name: String,
        schedule: Schedule,
    ) -> Option<Watcher> {
        context.options.k8s.as_ref()?;
        feed.state().watching = true;
        let pace = Pace::new(schedule);
        let follow = follow(target.clone(), context, feed.clone(), name, pace);
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
pub(super) enum Ended {
    /// The server ended the stream (`timeoutSeconds`): resume from the last version.
    Resume,
    /// `410 Gone`: the version is too old; re-list at once.
    Gone,
    /// `403`: the service account may `get` but not `watch`.
    Forbidden,
    /// Another error status, as the answer's or in an `ERROR` event: the server's own word.
    Refused(Failure),
    /// Anything else: back off on the target's schedule, then re-list.
    Broke(Failure),
}

/// What reads a watch's events into the feed.
struct Reader<'a> {
    /// The target as the log names it.
    name: &'a str,
    target: &'a K8sTarget,
    /// What is watched, and how.
    resource: &'a Resource,
    query: &'a Query<'a>,
    /// The namespace watched, for the reasons.
    ns: &'a str,
    feed: &'a Feed,
    /// An event about another object was told of (once per target and run).
    stray_told: AtomicBool,
}

/// Spaces the requests of a watch the server keeps ending early (a proxy that ends each stream
/// after one event, `410 Gone` every time): from the second short watch in a row on, each
/// request the watch makes or causes (a new watch, a re-list's GET) first waits one delay of
/// the target's schedule, growing as polling's would. So past the first few requests the
/// server is asked no more often than polling would ask it; a watch that lasts starts over.
pub(super) struct Pace {
    backoff: Backoff,
    /// Watches in a row that ended before half their span.
    short: u32,
}

impl Pace {
    pub(super) fn new(schedule: Schedule) -> Pace {
        let backoff = Backoff::new(schedule, fastrand::u64(..));
        Pace { backoff, short: 0 }
    }

    /// A watch asked to last `span` ended after `lasted`.
    pub(super) fn ended(&mut self, lasted: Duration, span: Duration) {
        if lasted >= span / 2 {
            self.short = 0;
            self.backoff.reset();
        } else {
            self.short = self.short.saturating_add(1);
        }
    }

    /// Waits before the next request, while the watches keep ending early.
    pub(super) async fn wait(&mut self) {
        if self.short >= 2 {
            sleep(self.backoff.next_delay()).await;
        }
    }
}

/// Follows the object (or list) from each version the attempts' GETs give, until dropped (the
/// engine's deadline) or the watch is refused; `pace` spaces the requests.
async fn follow(
    target: K8sTarget,
    context: Arc<Context>,
    feed: Arc<Feed>,
    name: String,
    mut pace: Pace,
) {
    let Some(cluster) = context.options.k8s.as_ref() else {
        return;
    };
    // The first GET (after discovery, for a target of any type) comes before any watch.
    feed.version().await;
    let Some(resource) = resource(&target, &feed) else {
        return;
    };
    let ns = namespace(&target, cluster, &resource);
    let query = query(&target);
    let selector = match &query {
        Get(object) => {
            let field = encode_query_value(&format!("metadata.name={object}"));
            format!("fieldSelector={field}")
        }
        List(labels) => format!("labelSelector={}", encode_query_value(labels)),
    };
    let reader = Reader {
        name: &name,
        target: &target,
        resource: &resource,
        query: &query,
        ns,
        feed: &feed,
        stray_told: AtomicBool::new(false),
    };
    loop {
        let version = feed.version().await;
        pace.wait().await;
        let seconds = WATCH_SECONDS + fastrand::u64(..WATCH_SECONDS);
        // Without a version the API server starts at its most recent one and first sends the
        // object as `ADDED` if it exists by then, so a creation after the GET is not missed.
        // Without bookmarks too: with them such a watch is a "watch list" to API servers of
        // 1.34, which refuse it unless etcd can report its progress.
        let from = match version.as_str() {
            "" => String::new(),
            from => format!(
                "&resourceVersion={}&allowWatchBookmarks=true",
                encode_query_value(from)
            ),
        };
        let path = format!(
            "{}?watch=1&{selector}{from}&timeoutSeconds={seconds}",
            collection(&resource, ns),
        );
        let span = Duration::from_secs(seconds);
        let started = Instant::now();
        let handle = |line: &[u8]| event(line, &reader);
        let ended = once(cluster, &context.resolver, path, &name, span, handle).await;
        pace.ended(started.elapsed(), span);
        match ended {
            Ended::Resume => tracing::debug!("{name}: the watch ended; resuming"),
            Ended::Gone => {
                tracing::debug!("{name}: the watch's version is gone; re-listing");
                pace.wait().await;
                feed.relist(None);
            }
            Ended::Forbidden => {
                let (group, plural) = (api_group(&resource.group), &resource.plural);
                let (what, verb) = match &query {
                    Get(object) => (format!("{plural}/{object}"), "get"),
                    List(_) => (plural.to_string(), "list"),
                };
                let (at, who) = (in_namespace(ns), &cluster.who);
                tracing::warn!(
                    target = name,
                    "{name}: forbidden: watch {what}{at}; polling with {verb} instead — \
                     grant watch on {plural}{group} to {who}"
                );
                feed.state().polling = true;
                return;
            }
            // Refused, or no head in time: the server waits for its cache to be fresh first,
            // which without etcd's progress reports lasts until the next change (or 3 s).
            Ended::Refused(failure) | Ended::Broke(failure) if version.is_empty() => {
                tracing::debug!(
                    "{name}: the API server cannot watch from now ({failure}); polling while \
                     the object is missing"
                );
                feed.state().polls_missing = true;
                pace.wait().await;
                feed.relist(None);
            }
            Ended::Refused(failure) | Ended::Broke(failure) => {
                tracing::debug!("{name}: the watch broke: {failure}");
                pace.wait().await;
                feed.relist(Some(failure));
            }
        }
    }
}

/// One watch request of `path`, asked to end after `span`: each event's line handed to
/// `handle` (which ends the watch by returning how) until it ends; `name` labels the log.
pub(super) async fn once(
    cluster: &Cluster,
    resolver: &Resolver,
    path: String,
    name: &str,
    span: Duration,
    handle: impl FnMut(&[u8]) -> Option<Ended>,
) -> Ended {
    let bound = cluster.attempt_timeout;
    let (head, mut headed) = oneshot::channel();
    let exchange = async {
        // Read afresh for every request: bound tokens rotate.
        let session = cluster.session().await?;
        let request = request(&cluster.api, path, session.bearer.as_deref());
        let request = request.map_err(Failure::from)?;
        // Outside the engine's attempts: the bounds are this function's own.
        let at = Attempt::unbounded();
        let stream = connect(cluster, &session, resolver, &at).await?;
        let judge = |response: Response<Incoming>| async move {
            let _ = head.send(());
            match response.status().as_u16() {
                200 => tracing::debug!("{name}: watching"),
                410 => return Ok(Ended::Gone),
                403 => return Ok(Ended::Forbidden),
                status => {
                    let failure = format!("status {status} from the API server to the watch");
                    return Ok(Ended::Refused(failure.into()));
                }
            }
            Ok(events(response.into_body(), span, bound, handle).await)
        };
        roundtrip(stream, request, judge, &at).await
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

/// One line of a watch stream (an object's, or the webhook's node watch).
#[derive(Deserialize)]
pub struct Event<'a> {
    /// ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// The object, read by whoever knows its shape.
    #[serde(borrow)]
    pub object: &'a RawValue,
}

/// Reads the stream line by line, no line kept past [`MAX_ANSWER`], each handed to `handle`,
/// until it ends: the server ends it after `span`; one still open past the attempt's `bound`
/// beyond that has gone silent (a dropped connection, a stuck proxy). A quiet object's stream
/// may end with no event (a server that sends no bookmarks); one that ends with none before
/// half its span is broken.
async fn events<B>(
    mut body: B,
    span: Duration,
    bound: Duration,
    mut handle: impl FnMut(&[u8]) -> Option<Ended>,
) -> Ended
where
    B: hyper::body::Body<Data = hyper::body::Bytes> + Unpin,
    B::Error: std::error::Error + 'static,
{
    let head = Instant::now();
    let until = head + span + bound;
    let mut line: Vec<u8> = Vec::new();
    let mut heard = false;
    loop {
        let data = match timeout_at(until, body.frame()).await {
            Err(_) => {
                let failure = "the watch went silent past its timeoutSeconds";
                return Ended::Broke(failure.to_string().into());
            }
            Ok(None) if heard || head.elapsed() >= span / 2 => return Ended::Resume,
            Ok(None) => return Ended::Broke("the API server ended the watch at once".into()),
            Ok(Some(Err(e))) => return Ended::Broke(broken(&e)),
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
            if let Some(ended) = handle(&line) {
                return ended;
            }
            line = Vec::new();
        }
    }
}

/// Why a stream broke. A read that timed out is TCP keepalive's verdict: the API server (or
/// the path to it) vanished without closing the connection.
fn broken(e: &(dyn std::error::Error + 'static)) -> Failure {
    let mut cause = Some(e);
    while let Some(error) = cause {
        let io = error.downcast_ref::<std::io::Error>();
        if io.is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut) {
            let failure = "the API server stopped answering: the watch's connection timed out \
                           (no reply to TCP keepalive)";
            return failure.to_string().into();
        }
        cause = error.source();
    }
    format!("the watch broke: {}", describe_error(e)).into()
}

/// Judges one event into the feed; `Some` ends the watch.
fn event(line: &[u8], reader: &Reader) -> Option<Ended> {
    let Reader {
        target, ns, feed, ..
    } = *reader;
    let unexpected = || {
        let failure = "unexpected watch event from the API server".to_string();
        Some(Ended::Broke(failure.into()))
    };
    let Ok(event) = serde_json::from_slice::<Event>(line) else {
        return unexpected();
    };
    let object = event.object.get().as_bytes();
    if matches!(event.kind, "ADDED" | "MODIFIED" | "DELETED") {
        let Ok(Identity { metadata }) = serde_json::from_slice(object) else {
            return unexpected();
        };
        if let Some(other) = stray(reader, &metadata) {
            if !reader.stray_told.swap(true, Ordering::Relaxed) {
                let name = reader.name;
                tracing::warn!(
                    target = name,
                    "{name}: ignored an event about {other}, which the watch did not ask for \
                     (the API server, or a proxy, does not apply the watch's selector)"
                );
            }
            return None;
        }
    }
    let changed = match (event.kind, &target.object) {
        ("ADDED" | "MODIFIED" | "DELETED", Object::Many(many)) => {
            let deleted = event.kind == "DELETED";
            list_item(many, object).and_then(|(name, item)| {
                let item = (name, (!deleted).then_some(item));
                feed.item(version(object), item, |items| judge_list(many, ns, items))
            })
        }
        ("ADDED" | "MODIFIED", Object::One(one)) => {
            feed.event(version(object), judge(one, object));
            Ok(())
        }
        ("DELETED", Object::One(_)) => {
            feed.event(version(object), Err(absent(target, ns)));
            Ok(())
        }
        ("BOOKMARK", _) => {
            if let Some(version) = version(object) {
                feed.state().version = Some(version);
            }
            Ok(())
        }
        ("ERROR", _) => return Some(error_event(object, "the watch")),
        (other, _) => {
            let failure = format!("unexpected watch event {}", clip(other));
            return Some(Ended::Broke(failure.into()));
        }
    };
    changed.err().map(Ended::Broke)
}

/// Who an event's object is: what tells the object (or the list's items) the watch asked for
/// from any other.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Identity {
    metadata: Named,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Named {
    name: String,
    namespace: String,
    /// Absent: the server did not say, and a list's item is taken as its selector's.
    labels: Option<BTreeMap<String, String>>,
}

/// `Some(which object it is)` when an event is about an object the watch did not ask for:
/// another name or namespace, or (for a list) labels its selector does not pick. A server or
/// proxy that ignores the watch's selector must not decide the target.
fn stray(reader: &Reader, named: &Named) -> Option<String> {
    let ns = reader.ns;
    let asked = match reader.query {
        Get(name) => named.name == *name,
        List(wanted) => named
            .labels
            .as_ref()
            .map_or(true, |labels| selector::matches(wanted, labels)),
    };
    let plural = &reader.resource.plural;
    let other = format!(
        "{plural}/{}{}",
        clip(&named.name),
        in_namespace(&clip(&named.namespace))
    );
    (!asked || named.namespace != ns).then_some(other)
}

/// An `ERROR` event's object.
#[derive(Default, Deserialize)]
#[serde(default)]
struct WatchError {
    code: u16,
    message: String,
}

/// How an `ERROR` event ends `what` (a watch): 410 Gone asks for a fresh list, any other status
/// is the API server's refusal, its message cut as all peer text is.
pub fn error_event(object: &[u8], what: &str) -> Ended {
    let status: WatchError = serde_json::from_slice(object).unwrap_or_default();
    if status.code == 410 {
        return Ended::Gone;
    }
    let failure = format!(
        "{what} failed: status {} from the API server: {}",
        status.code,
        clip(&status.message)
    );
    Ended::Refused(failure.into())
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
    let version = versioned.metadata.resource_version;
    usable(version)
}

/// A `resourceVersion` fit to watch from: not empty, and at most [`MAX_VERSION`] long.
pub fn usable(version: String) -> Option<String> {
    match version.len() {
        0 => None,
        n if n > MAX_VERSION => {
            tracing::debug!("a resourceVersion of {n} bytes from the API server: not used");
            None
        }
        _ => Some(version),
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use hyper::body::{Body, Bytes, Frame};

    use super::*;
    use crate::kind::k8s::target::{Object, One};

    /// A stream whose head came, then nothing: a dropped connection no RST told of.
    struct Silent;

    impl Body for Silent {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Pending
        }
    }

    /// A stream that ends, with no event, when its sleep is over.
    struct EndsAfter(Pin<Box<tokio::time::Sleep>>);

    impl Body for EndsAfter {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            self.0.as_mut().poll(cx).map(|()| None)
        }
    }

    fn quiet_end(after: Duration) -> EndsAfter {
        EndsAfter(Box::pin(tokio::time::sleep(after)))
    }

    const SPAN: Duration = Duration::from_secs(WATCH_SECONDS);

    /// Reads `body` as a watch of Job `migrate` asked to end after [`SPAN`].
    async fn read<B>(body: B) -> Ended
    where
        B: Body<Data = Bytes> + Unpin,
        B::Error: std::error::Error + 'static,
    {
        let target = K8sTarget {
            object: Object::One(One::Job("migrate".into())),
            namespace: None,
        };
        let feed = Feed::default();
        let query = Get("migrate");
        let reader = Reader {
            name: "k8s://job/migrate",
            target: &target,
            resource: &crate::kind::k8s::job::JOBS,
            query: &query,
            ns: "shop",
            feed: &feed,
            stray_told: AtomicBool::new(false),
        };
        let handle = |line: &[u8]| event(line, &reader);
        events(body, SPAN, Duration::from_secs(2), handle).await
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_stream_ended_late_resumes_and_one_ended_early_is_broken() {
        assert!(matches!(read(quiet_end(SPAN)).await, Ended::Resume));
        assert!(matches!(read(quiet_end(SPAN / 2)).await, Ended::Resume));
        let Ended::Broke(failure) = read(quiet_end(SPAN / 3)).await else {
            panic!("a stream ended early with no event taken as a normal end");
        };
        assert_eq!(
            failure.to_string(),
            "the API server ended the watch at once"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_still_open_past_its_span_and_bound_is_given_up() {
        let started = Instant::now();
        let ended = read(Silent).await;
        let Ended::Broke(failure) = ended else {
            panic!("not given up as broken");
        };
        assert_eq!(
            failure.to_string(),
            "the watch went silent past its timeoutSeconds"
        );
        assert_eq!(started.elapsed(), SPAN + Duration::from_secs(2));
    }
}
