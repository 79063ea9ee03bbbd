//! `k8s://` targets: Jobs, pods, Services and Deployments, read from the API server of the pod
//! readygate runs in: a GET, then (for one named Job, pod or Deployment) a watch whose events
//! the attempts judge without a request of their own; no kubectl.

mod cluster;
mod deployment;
mod job;
mod object;
mod pod;
mod request;
mod selector;
mod service;
pub mod target;
mod watch;

pub use cluster::Cluster;
pub use target::{K8sTarget, Object};
pub use watch::{Feed, Watcher};

use crate::engine::Miss;
use crate::error::Failure;
use request::Query::{Get, List};
use request::{fetch, fetch_body, Resource};

/// What an attempt says: ready, or why not, and whether it ever can be.
pub type Verdict = Result<(), Miss<Failure>>;

/// One attempt on `target`, against `cluster`: the watched object's last state when `feed`
/// keeps it current, else one GET, its answer judged (and the watch started from it).
pub async fn check(target: &K8sTarget, cluster: &Cluster, feed: &Feed) -> Verdict {
    if let Some(verdict) = feed.current() {
        return verdict;
    }
    let ns = target.namespace.as_deref().unwrap_or(&cluster.namespace);
    let absent = |kind: &str, name: &str| format!("no {kind} {name} in {ns} (yet)");
    if let Some((resource, kind, name)) = watched(target) {
        let body = fetch_body(cluster, resource, ns, Get(name), || absent(kind, name)).await;
        let (verdict, version) = match body {
            Ok(body) => (judge(target, &body), watch::version(&body)),
            Err(miss) => (Err(miss), None),
        };
        feed.listed(version, &verdict);
        return verdict;
    }
    match &target.object {
        Object::Pods(selector) => {
            let absent = || format!("the API server has no pods in {ns}");
            let pods = fetch(cluster, pod::PODS, ns, List(selector), absent).await?;
            pod::judge_all(&pods, ns, selector).map_err(Miss::NotYet)
        }
        Object::Service(name) => {
            let selector = format!("kubernetes.io/service-name={name}");
            let absent = || service::UNSERVED.to_string();
            let slices = fetch(cluster, service::SLICES, ns, List(&selector), absent).await?;
            service::judge(&slices, ns, name).map_err(Miss::NotYet)
        }
        Object::Job(_) | Object::Pod(_) | Object::Deployment(_) => unreachable!("watched"),
    }
}

/// The resource, kind and name of a target that names one object, which a watch follows.
fn watched(target: &K8sTarget) -> Option<(Resource, &'static str, &str)> {
    match &target.object {
        Object::Job(name) => Some((job::JOBS, "job", name)),
        Object::Pod(name) => Some((pod::PODS, "pod", name)),
        Object::Deployment(name) => Some((deployment::DEPLOYMENTS, "deployment", name)),
        Object::Pods(_) | Object::Service(_) => None,
    }
}

/// The readiness rules of `target`'s kind applied to one object's JSON (a GET's answer, or
/// a watch event's object).
fn judge(target: &K8sTarget, body: &[u8]) -> Verdict {
    match &target.object {
        Object::Job(_) => job::judge(&object::parse(body)?),
        Object::Pod(_) => pod::judge_one(&object::parse(body)?).map_err(Miss::NotYet),
        Object::Deployment(_) => deployment::judge(&object::parse(body)?).map_err(Miss::NotYet),
        Object::Pods(_) | Object::Service(_) => unreachable!("not watched"),
    }
}
