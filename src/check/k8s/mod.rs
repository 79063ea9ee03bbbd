//! `k8s://` targets: Jobs, pods, Services and Deployments, read from the API server of the pod
//! readygate runs in (one GET per attempt, no watch, no kubectl).

mod cluster;
mod deployment;
mod job;
mod object;
mod pod;
mod request;
mod service;

pub use crate::target::k8s::{K8sTarget, Object};
pub use cluster::Cluster;

use crate::engine::Miss;
use crate::error::Failure;

/// One attempt on `target`, against `cluster`.
pub async fn check(target: &K8sTarget, cluster: &Cluster) -> Result<(), Miss<Failure>> {
    let namespace = target.namespace.as_deref().unwrap_or(&cluster.namespace);
    match &target.object {
        Object::Job(name) => job::check(cluster, namespace, name).await,
        Object::Pod(name) => pod::check_one(cluster, namespace, name).await,
        Object::Pods(selector) => pod::check_all(cluster, namespace, selector).await,
        Object::Service(name) => service::check(cluster, namespace, name).await,
        Object::Deployment(name) => deployment::check(cluster, namespace, name).await,
    }
}
