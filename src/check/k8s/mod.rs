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
use request::fetch;
use request::Query::{Get, List};

/// One attempt on `target`, against `cluster`: one GET, its answer judged.
pub async fn check(target: &K8sTarget, cluster: &Cluster) -> Result<(), Miss<Failure>> {
    let ns = target.namespace.as_deref().unwrap_or(&cluster.namespace);
    let absent = |kind: &str, name: &str| format!("no {kind} {name} in {ns} (yet)");
    match &target.object {
        Object::Job(name) => {
            let job = fetch(cluster, job::JOBS, ns, Get(name), || absent("job", name)).await?;
            job::judge(&job)
        }
        Object::Pod(name) => {
            let pod = fetch(cluster, pod::PODS, ns, Get(name), || absent("pod", name)).await?;
            pod::judge_one(&pod).map_err(Miss::NotYet)
        }
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
        Object::Deployment(name) => {
            let absent = || absent("deployment", name);
            let deployment = fetch(cluster, deployment::DEPLOYMENTS, ns, Get(name), absent).await?;
            deployment::judge(&deployment).map_err(Miss::NotYet)
        }
    }
}
