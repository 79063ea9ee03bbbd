//! `k8s://` targets: Jobs, pods, Services and Deployments, read from the API server of the pod
//! readygate runs in (one GET per attempt, no watch, no kubectl).

mod cluster;
mod deployment;
mod job;
mod object;
mod pod;
mod request;
mod selector;
mod service;
mod target;

pub use cluster::Cluster;
pub use target::{parse, K8sTarget, Object};

use crate::engine::Miss;

/// One attempt on `target`, against `cluster`.
pub async fn check(target: &K8sTarget, cluster: &Cluster) -> Result<(), Miss> {
    let namespace = target.namespace.as_deref().unwrap_or(&cluster.namespace);
    match &target.object {
        Object::Job(name) => job::check(cluster, namespace, name).await,
        Object::Pod(name) => pod::check_one(cluster, namespace, name).await,
        Object::Pods(selector) => pod::check_all(cluster, namespace, selector).await,
        Object::Service(name) => service::check(cluster, namespace, name).await,
        Object::Deployment(name) => deployment::check(cluster, namespace, name).await,
    }
}
