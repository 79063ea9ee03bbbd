//! `k8s://` targets: Jobs, pods, Services, Deployments, StatefulSets, DaemonSets and any other
//! resource by its conditions, read from the API server of the pod readygate runs in (or a
//! kubeconfig's): a GET (of the object, or of the list a selector picks), then a watch whose
//! events the attempts judge without a request of their own; no kubectl.

mod any;
mod cluster;
mod credential;
mod daemonset;
mod deployment;
mod discovery;
pub mod exec;
mod job;
mod jsonpath;
pub mod kubeconfig;
mod list;
pub mod nodes;
mod object;
mod pod;
pub mod request;
mod selector;
mod service;
mod statefulset;
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
    let resource = match (resource(target, feed), &target.object) {
        (Some(resource), _) => resource,
        (None, Object::One(One::Any(any))) => {
            let found = discovery::find(any, cluster, resolver, at).await?;
            feed.found(found.clone());
            found
        }
        (None, _) => return Err(Failure::Text("no resource for this target".into())),
    };
    let ns = namespace(target, cluster, &resource);
    let query = query(target);
    let body = fetch_body(cluster, &resource, ns, &query, resolver, at).await;
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

/// The namespace `target` reads in: its own `?namespace=`, else the pod's (or the context's);
/// empty for a resource outside namespaces.
fn namespace<'a>(target: &'a K8sTarget, cluster: &'a Cluster, resource: &Resource) -> &'a str {
    match resource.namespaced {
        true => target.namespace.as_deref().unwrap_or(&cluster.namespace),
        false => "",
    }
}

/// The resource `target` reads; `None` for one of any type until discovery has named it.
fn resource(target: &K8sTarget, feed: &Feed) -> Option<Resource> {
    Some(match &target.object {
        Object::One(One::Job(_)) => job::JOBS,
        Object::One(One::Pod(_)) | Object::Many(Many::Pods(_)) => pod::PODS,
        Object::One(One::Deployment(_)) => deployment::DEPLOYMENTS,
        Object::One(One::StatefulSet(_)) => statefulset::STATEFULSETS,
        Object::One(One::DaemonSet(_)) => daemonset::DAEMONSETS,
        Object::One(One::Any(_)) => return feed.resource(),
        Object::Many(Many::Service(_)) => service::SLICES,
    })
}

/// What `target` asks of its resource: one object by name, or the list a label selector picks.
fn query(target: &K8sTarget) -> Query<'_> {
    match &target.object {
        Object::One(one) => Get(name(one)),
        Object::Many(Many::Pods(selector)) => List(Cow::Borrowed(selector)),
        Object::Many(Many::Service(name)) => {
            List(Cow::Owned(format!("kubernetes.io/service-name={name}")))
        }
    }
}

/// The name of one object.
fn name(one: &One) -> &str {
    match one {
        One::Job(name)
        | One::Pod(name)
        | One::Deployment(name)
        | One::StatefulSet(name)
        | One::DaemonSet(name) => name,
        One::Any(any) => &any.name,
    }
}

/// Why `target` is not ready when its object (or collection) is not there: the GET's 404, or
/// a watched object deleted.
fn absent(target: &K8sTarget, ns: &str) -> Failure {
    let at = request::in_namespace(ns);
    let why = match &target.object {
        Object::One(one) => {
            let kind = match one {
                One::Job(_) => "job",
                One::Pod(_) => "pod",
                One::Deployment(_) => "deployment",
                One::StatefulSet(_) => "statefulset",
                One::DaemonSet(_) => "daemonset",
                One::Any(any) => &any.type_name,
            };
            format!("no {kind} {}{at} (yet)", name(one))
        }
        Object::Many(Many::Pods(_)) => format!("the API server has no pods{at}"),
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
        One::StatefulSet(_) => statefulset::judge(&object::parse(body)?),
        One::DaemonSet(_) => daemonset::judge(&object::parse(body)?),
        One::Any(any) => any::judge(any, body),
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
