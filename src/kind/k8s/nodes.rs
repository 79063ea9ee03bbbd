//! The cluster's nodes and their kubelets' versions, which `--mode auto` chooses the sidecar's
//! form by: listed once (`inject`), or listed then kept current by a watch that reads its
//! stream as a target's watch does (`webhook`), so that no admission waits on a request.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hyper::Method;
use serde::Deserialize;
use tokio::time::{sleep, Instant};

use super::cluster::Cluster;
use super::object::clip;
use super::request::{call, refused, unauthorized};
use super::watch::{error_event, once, usable, version, Ended, Event, Pace};
use crate::engine::{Backoff, Schedule};
use crate::error::Failure;
use crate::net::resolve::Resolver;
use crate::runtime::Attempt;
use crate::text::percent::encode_query_value;

/// Nodes asked for per page: a page of full Node objects (their image lists) stays well under
/// the answer's cap.
const PAGE: usize = 50;

/// Most nodes kept: past Kubernetes' largest supported clusters.
const MAX_NODES: usize = 20_000;

/// The longest kubelet version kept (`v1.30.2-eks-1234`): real ones are short.
const MAX_VERSION: usize = 64;

/// The watch's `timeoutSeconds`, and the spread added at random.
const WATCH_SECONDS: u64 = 240;

/// How often the nodes are listed again when the watch is refused (no `watch` on nodes).
const POLL: Duration = Duration::from_secs(60);

/// How failed lists and watches are spaced.
const SCHEDULE: Schedule = Schedule {
    label: "node watch",
    first: Duration::from_secs(1),
    max: Duration::from_secs(30),
    growth: (2, 1),
    steady: 0,
};

/// Each node's kubelet version, by node name.
pub type Kubelets = BTreeMap<String, String>;

#[derive(Deserialize)]
struct NodeList {
    #[serde(default)]
    metadata: ListMeta,
    #[serde(default)]
    items: Option<Vec<NodeObject>>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ListMeta {
    resource_version: String,
    #[serde(rename = "continue")]
    next: Option<String>,
}

/// What is read of a Node.
#[derive(Default, Deserialize)]
#[serde(default)]
struct NodeObject {
    metadata: NodeMeta,
    status: NodeStatus,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct NodeMeta {
    name: String,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct NodeStatus {
    node_info: NodeInfo,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct NodeInfo {
    kubelet_version: String,
}

impl NodeObject {
    /// The node's name and kubelet version, cut to what is kept.
    fn entry(self) -> (String, String) {
        let mut kubelet = self.status.node_info.kubelet_version;
        if kubelet.len() > MAX_VERSION {
            kubelet = clip(&kubelet);
        }
        (self.metadata.name, kubelet)
    }
}

/// `v1.34.1`, `v1.30.2-eks-1234`, `v1.29.3+k3s1`: major and minor.
pub fn minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.trim().trim_start_matches('v').split('.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}

/// Lists every node, page by page, by `end`: their kubelets and the version a watch of them
/// starts from.
pub async fn list(
    cluster: &Cluster,
    resolver: &Resolver,
    end: Instant,
) -> Result<(Option<String>, Kubelets), Failure> {
    let mut kubelets = Kubelets::new();
    let mut next: Option<String> = None;
    loop {
        let mut path = format!("/api/v1/nodes?limit={PAGE}");
        if let Some(token) = &next {
            path.push_str(&format!("&continue={}", encode_query_value(token)));
        }
        let at = Attempt::until(end);
        let asked = call(cluster, Method::GET, path, None, resolver, &at);
        let (status, body) = match tokio::time::timeout_at(end, asked).await {
            Err(_) => return Err("no answer from the API server to the node list in time".into()),
            Ok(answer) => answer?,
        };
        let page: NodeList = match status {
            200 => serde_json::from_slice(&body)
                .map_err(|e| format!("unexpected node list from the API server: {e}"))?,
            401 => return Err(unauthorized(cluster)),
            403 => {
                let who = &cluster.who;
                return Err(format!("listing nodes refused: grant list on nodes to {who}").into());
            }
            _ => return Err(refused(status, &body)),
        };
        for node in page.items.unwrap_or_default() {
            if kubelets.len() == MAX_NODES {
                return Err(format!("more than {MAX_NODES} nodes").into());
            }
            let (name, kubelet) = node.entry();
            kubelets.insert(name, kubelet);
        }
        next = page.metadata.next.filter(|token| !token.is_empty());
        if next.is_none() {
            return Ok((usable(page.metadata.resource_version), kubelets));
        }
    }
}

/// The nodes the webhook knows, current while the watch runs; `None` until the first list.
#[derive(Default)]
pub struct NodeCache {
    state: Mutex<CacheState>,
}

#[derive(Default)]
struct CacheState {
    kubelets: Option<Kubelets>,
    /// Changes with every change of the nodes: what a decision made from them is kept by.
    generation: u64,
}

impl NodeCache {
    fn state(&self) -> MutexGuard<'_, CacheState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the nodes were listed at least once.
    pub fn ready(&self) -> bool {
        self.state().kubelets.is_some()
    }

    /// `f` of the nodes (`None` before the first list) and their generation.
    pub fn with<R>(&self, f: impl FnOnce(Option<&Kubelets>, u64) -> R) -> R {
        let state = self.state();
        f(state.kubelets.as_ref(), state.generation)
    }

    fn replace(&self, kubelets: Kubelets) {
        let mut state = self.state();
        state.kubelets = Some(kubelets);
        state.generation += 1;
    }

    /// A node added or changed (`Some` version) or deleted; past [`MAX_NODES`] one more is
    /// not kept.
    fn change(&self, name: String, kubelet: Option<String>) {
        let mut state = self.state();
        let kubelets = state.kubelets.get_or_insert_with(Kubelets::new);
        let changed = match kubelet {
            None => kubelets.remove(&name).is_some(),
            Some(kubelet) if kubelets.len() < MAX_NODES || kubelets.contains_key(&name) => {
                kubelets.insert(name, kubelet.clone()).as_ref() != Some(&kubelet)
            }
            Some(_) => false,
        };
        if changed {
            state.generation += 1;
        }
    }
}

/// Keeps `cache` current for as long as the task runs: a list, then a watch from its version,
/// again after the watch breaks (spaced by a back-off); a list every minute where the watch
/// is refused.
pub async fn follow(cluster: Arc<Cluster>, resolver: Arc<Resolver>, cache: Arc<NodeCache>) {
    let mut backoff = Backoff::new(SCHEDULE, fastrand::u64(..));
    let mut pace = Pace::new(SCHEDULE);
    let mut polling = false;
    let mut told = false;
    loop {
        let end = Instant::now() + cluster.attempt_timeout;
        let from = match list(&cluster, &resolver, end).await {
            Ok((from, kubelets)) => {
                tracing::debug!(event = "nodes", "listed {} nodes", kubelets.len());
                cache.replace(kubelets);
                backoff.reset();
                told = false;
                from
            }
            Err(failure) => {
                if !told {
                    tracing::warn!(event = "nodes", "cannot list the nodes: {failure}");
                    told = true;
                }
                sleep(backoff.next_delay()).await;
                continue;
            }
        };
        let Some(mut from) = from.filter(|_| !polling) else {
            sleep(POLL).await;
            continue;
        };
        loop {
            pace.wait().await;
            let seconds = WATCH_SECONDS + fastrand::u64(..WATCH_SECONDS);
            let path = format!(
                "/api/v1/nodes?watch=1&resourceVersion={}&allowWatchBookmarks=true\
                 &timeoutSeconds={seconds}",
                encode_query_value(&from)
            );
            let span = Duration::from_secs(seconds);
            let started = Instant::now();
            let handle = |line: &[u8]| event(line, &cache, &mut from);
            let ended = once(&cluster, &resolver, path, "nodes", span, handle).await;
            pace.ended(started.elapsed(), span);
            match ended {
                Ended::Resume => continue,
                Ended::Gone => tracing::debug!(event = "nodes", "the watch's version is gone"),
                Ended::Forbidden => {
                    let who = &cluster.who;
                    tracing::warn!(
                        event = "nodes",
                        "watching nodes refused: listing them every minute instead — grant \
                         watch on nodes to {who}"
                    );
                    polling = true;
                }
                Ended::Refused(failure) | Ended::Broke(failure) => {
                    tracing::debug!(event = "nodes", "the node watch broke: {failure}");
                    sleep(backoff.next_delay()).await;
                }
            }
            break;
        }
    }
}

/// Reads one event into the cache, and the version to resume from into `from`; `Some` ends
/// the watch.
fn event(line: &[u8], cache: &NodeCache, from: &mut String) -> Option<Ended> {
    let unexpected = || Some(Ended::Broke("unexpected node watch event".into()));
    let Ok(event) = serde_json::from_slice::<Event>(line) else {
        return unexpected();
    };
    let object = event.object.get().as_bytes();
    match event.kind {
        "ADDED" | "MODIFIED" | "DELETED" => {
            let Ok(node) = serde_json::from_slice::<NodeObject>(object) else {
                return unexpected();
            };
            let (name, kubelet) = node.entry();
            cache.change(name, (event.kind != "DELETED").then_some(kubelet));
        }
        "BOOKMARK" => {}
        "ERROR" => return Some(error_event(object, "the node watch")),
        other => {
            let failure = format!("unexpected node watch event {}", clip(other));
            return Some(Ended::Broke(failure.into()));
        }
    }
    if let Some(version) = version(object) {
        *from = version;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_change_the_cache_and_the_version_to_resume_from() {
        let cache = NodeCache::default();
        cache.replace(Kubelets::new());
        let mut from = "1".to_string();
        let added = br#"{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"7"},
            "status":{"nodeInfo":{"kubeletVersion":"v1.27.3"}}}}"#;
        assert!(event(added, &cache, &mut from).is_none());
        assert_eq!(from, "7");
        cache.with(|nodes, generation| {
            assert_eq!(nodes.unwrap()["a"], "v1.27.3");
            assert_eq!(generation, 2);
        });
        let deleted =
            br#"{"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"8"}}}"#;
        assert!(event(deleted, &cache, &mut from).is_none());
        cache.with(|nodes, _| assert!(nodes.unwrap().is_empty()));
        let gone = br#"{"type":"ERROR","object":{"code":410,"message":"too old"}}"#;
        assert!(matches!(event(gone, &cache, &mut from), Some(Ended::Gone)));
        assert!(matches!(
            event(b"{", &cache, &mut from),
            Some(Ended::Broke(_))
        ));
    }
}
