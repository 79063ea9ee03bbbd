//! Every node: its kubelet's version, its `SidecarContainers` gate through the API server's
//! node proxy (judged by version where `nodes/proxy` is not granted or the node does not
//! answer), the skew from the API server, and the value of the label that groups it.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use hyper::Method;
use serde::Deserialize;
use tokio::time::Instant;

use super::ask::{Answer, Asker};
use super::findings::Node;
use super::version::{minor, skew};
use crate::text::percent::encode_query_value;

/// Nodes asked for per page: a page of full Node objects stays well under the answer's cap.
const PAGE: usize = 100;
/// Nodes whose metrics are read at once.
const AT_ONCE: usize = 16;
/// The longest one node's metrics are waited for: a node that is down must not take the run.
const PER_NODE: Duration = Duration::from_secs(10);

#[derive(Deserialize)]
struct NodeList {
    #[serde(default)]
    metadata: ListMeta,
    #[serde(default)]
    items: Vec<NodeObject>,
}

#[derive(Default, Deserialize)]
struct ListMeta {
    #[serde(default, rename = "continue")]
    next: Option<String>,
}

#[derive(Deserialize)]
struct NodeObject {
    metadata: NodeMeta,
    #[serde(default)]
    status: NodeStatus,
}

#[derive(Deserialize)]
struct NodeMeta {
    name: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NodeStatus {
    #[serde(default)]
    node_info: NodeInfo,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NodeInfo {
    #[serde(default)]
    kubelet_version: String,
}

/// Every node, judged; `Err`: the nodes could not be listed, and why.
pub async fn check(
    asker: &Asker<'_>,
    server: Option<(u32, u32)>,
    label: Option<&str>,
) -> Result<Vec<Node>, String> {
    let listed = list(asker).await?;
    let mut nodes = Vec::with_capacity(listed.len());
    for chunk in listed.chunks(AT_ONCE) {
        let checks = chunk.iter().map(|node| one(asker, node, server, label));
        nodes.extend(join_all(checks.collect()).await);
    }
    Ok(nodes)
}

/// Lists the nodes, page by page.
async fn list(asker: &Asker<'_>) -> Result<Vec<NodeObject>, String> {
    let mut nodes = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let mut path = format!("/api/v1/nodes?limit={PAGE}");
        if let Some(token) = &next {
            path.push_str(&format!("&continue={}", encode_query_value(token)));
        }
        let page = match asker.json(Method::GET, &path, None).await {
            Answer::Ok(body) => serde_json::from_slice::<NodeList>(&body)
                .map_err(|e| format!("unexpected node list from the API server: {e}"))?,
            Answer::Forbidden(_) => {
                let who = &asker.cluster.who;
                return Err(format!(
                    "listing nodes refused: grant list on nodes to {who}"
                ));
            }
            Answer::NotFound => return Err("the API server has no /api/v1/nodes".into()),
            Answer::Failed(why) => return Err(format!("listing nodes: {why}")),
        };
        nodes.extend(page.items);
        next = page.metadata.next.filter(|token| !token.is_empty());
        if next.is_none() {
            return Ok(nodes);
        }
    }
}

/// One node, judged.
async fn one(
    asker: &Asker<'_>,
    node: &NodeObject,
    server: Option<(u32, u32)>,
    label: Option<&str>,
) -> Node {
    let name = &node.metadata.name;
    let kubelet = node.status.node_info.kubelet_version.clone();
    let version = minor(&kubelet);
    let path = format!("/api/v1/nodes/{name}/proxy/metrics");
    let end = Instant::now() + PER_NODE;
    let grant = "get on nodes/proxy";
    let gate = super::gate::read(asker, &path, grant, version, end).await;
    Node {
        name: name.clone(),
        skew: server.zip(version).and_then(|(s, k)| skew(s, k)),
        kubelet,
        label: label.and_then(|label| node.metadata.labels.get(label).cloned()),
        gate,
    }
}

/// Runs `futures` together on this task and gives their outputs in order.
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
