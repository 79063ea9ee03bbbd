//! `k8s://` targets: Jobs, pods, Services and Deployments, read from the API server of the pod
//! readygate runs in: a GET (of the object, or of the list a selector picks), then a watch
//! whose events the attempts judge without a request of their own; no kubectl.

mod cluster;
mod credential;
mod deployment;
pub mod exec;
mod job;
pub mod kubeconfig;
mod list;
pub mod nodes;
mod object;
mod pod;
pub mod request;
mod selector;
mod service;
pub mod target;
mod watch;

use std::borrow::Cow;

pub use cluster::Cluster;
pub use target::{K8sTarget, Many, Object, One};
pub use watch::{Feed, Watcher};

use super::url_parts::TargetUrl;
use super::Kind;
use crate::error::Failure;
use crate::net::resolve::Resolver;
use crate::runtime::Attempt;
use list::{Item, Items};
use request::Query::{self, Get, List};
use request::{fetch_body, Resource};

/// Parses a `k8s://` URL.
pub fn parse(url: &TargetUrl) -> Result<Kind, String> {
    target::parse(url.rest).map(Kind::K8s)
}

/// What an attempt says: ready, or why not, and whether it ever can be.
pub type Judgement = Result<(), Failure>;

/// One attempt on `target`, against `cluster`: the last state `feed`'s watch saw while it keeps
/// it current, else one GET within `at`, its answer judged (and the watch started from it).
pub async fn check(
    target: &K8sTarget,
    cluster: &Cluster,
    feed: &Feed,
    resolver: &Resolver,
    at: &Attempt,
) -> Judgement {
    if let Some(verdict) = feed.current() {
        return verdict;
    }
    let ns = namespace(target, cluster);
    let (resource, query) = source(target);
    let body = fetch_body(cluster, resource, ns, &query, resolver, at).await;
    let (verdict, version, items) = match (body, &target.object) {
        (Err(miss), _) => (Err(miss), None, None),
        // No such object yet: it is watched from now on, so its creation is seen at once.
        (Ok(None), Object::One(_)) => (Err(absent(target, ns)), Some(String::new()), None),
        (Ok(None), Object::Many(_)) => (Err(absent(target, ns)), None, None),
        (Ok(Some(body)), Object::One(one)) => (judge(one, &body), watch::version(&body), None),
        (Ok(Some(body)), Object::Many(many)) => match read_list(many, &body) {
            Ok((version, items)) => (judge_list(many, ns, &items), version, Some(items)),
            Err(failure) => (Err(failure), None, None),
        },
    };
    feed.listed(version, &verdict, items);
    verdict
}

/// The namespace `target` reads in: its own `?namespace=`, else the pod's.
fn namespace<'a>(target: &'a K8sTarget, cluster: &'a Cluster) -> &'a str {
    target.namespace.as_deref().unwrap_or(&cluster.namespace)
}

/// What `target` reads: one object by name, or the list a label selector picks.
fn source(target: &K8sTarget) -> (Resource, Query<'_>) {
    match &target.object {
        Object::One(One::Job(name)) => (job::JOBS, Get(name)),
        Object::One(One::Pod(name)) => (pod::PODS, Get(name)),
        Object::One(One::Deployment(name)) => (deployment::DEPLOYMENTS, Get(name)),
        Object::Many(Many::Pods(selector)) => (pod::PODS, List(Cow::Borrowed(selector))),
        Object::Many(Many::Service(name)) => {
            let selector = format!("kubernetes.io/service-name={name}");
            (service::SLICES, List(Cow::Owned(selector)))
        }
    }
}

/// Why `target` is not ready when its object (or collection) is not there: the GET's 404, or
/// a watched object deleted.
fn absent(target: &K8sTarget, ns: &str) -> Failure {
    let why = match &target.object {
        Object::One(One::Job(name)) => format!("no job {name} in {ns} (yet)"),
        Object::One(One::Pod(name)) => format!("no pod {name} in {ns} (yet)"),
        Object::One(One::Deployment(name)) => format!("no deployment {name} in {ns} (yet)"),
        Object::Many(Many::Pods(_)) => format!("the API server has no pods in {ns}"),
        Object::Many(Many::Service(_)) => service::UNSERVED.to_string(),
    };
    Failure::Text(why)
}

/// The readiness rules of `one`'s kind applied to its JSON (a GET's answer, or a watch
/// event's object).
fn judge(one: &One, body: &[u8]) -> Judgement {
    match one {
        One::Job(_) => job::judge(&object::parse(body)?),
        One::Pod(_) => pod::judge_one(&object::parse(body)?),
        One::Deployment(_) => deployment::judge(&object::parse(body)?),
    }
}

/// A list answer of `many`'s kind: its version and items.
fn read_list(many: &Many, body: &[u8]) -> Result<(Option<String>, Items), Failure> {
    match many {
        Many::Pods(_) => list::read::<pod::Pod>(body),
        Many::Service(_) => list::read::<service::Slice>(body),
    }
}

/// One object of `many`'s list, from a watch event: its name and item.
fn list_item(many: &Many, object: &[u8]) -> Result<(String, Item), Failure> {
    match many {
        Many::Pods(_) => list::one::<pod::Pod>(object),
        Many::Service(_) => list::one::<service::Slice>(object),
    }
}

/// The readiness rules of `many`'s kind applied to the items of its list.
fn judge_list(many: &Many, ns: &str, items: &Items) -> Judgement {
    match many {
        Many::Pods(selector) => pod::judge_all(items, ns, selector),
        Many::Service(name) => service::judge(items, ns, name),
    }
}
