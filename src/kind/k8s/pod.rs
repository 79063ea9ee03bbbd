//! `k8s://pod/NAME`: ready when the pod is `Ready`. `k8s://pods?selector=LABELS`: ready when
//! at least one pod matches, and every pod that matches is `Ready`.

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::list::{Item, Items, Listed};
use super::object::{clip, conditions, true_condition, why, ApiObject, StatusCondition};
use super::request::Resource;
use crate::error::Failure;

pub(super) const PODS: Resource = Resource::namespaced("", "v1", "pods");

/// A v1 Pod, read as far as its status.
pub(super) type Pod = ApiObject<IgnoredAny, PodStatus>;

#[derive(Default, Deserialize)]
#[serde(default)]
pub(super) struct PodStatus {
    /// `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    phase: String,
    #[serde(deserialize_with = "conditions")]
    conditions: Vec<StatusCondition>,
}

impl PodStatus {
    fn ready(&self) -> bool {
        true_condition(&self.conditions, "Ready").is_some()
    }

    /// Why the pod is not ready: its `Ready` condition's reason, else its phase.
    fn unready_because(&self) -> String {
        let ready = self.conditions.iter().find(|c| c.kind == "Ready");
        match (
            ready.map(why).filter(|w| !w.is_empty()),
            &*clip(&self.phase),
        ) {
            (Some(why), "") => why,
            (Some(why), phase) => format!("{phase}, {why}"),
            (None, "") => "no Ready condition yet".into(),
            (None, phase) => format!("phase {phase}"),
        }
    }
}

pub(super) fn judge_one(pod: &Pod) -> Result<(), Failure> {
    match pod.status.ready() {
        true => Ok(()),
        false => Err(format!("pod not ready: {}", pod.status.unready_because()).into()),
    }
}

impl Listed for Pod {
    fn name(&self) -> &str {
        &self.metadata.name
    }

    fn item(&self) -> Item {
        let ready = self.status.ready();
        Item {
            ready: ready.into(),
            total: 1,
            why: if ready {
                String::new()
            } else {
                self.status.unready_because()
            },
        }
    }
}

pub(super) fn judge_all(pods: &Items, namespace: &str, selector: &str) -> Result<(), Failure> {
    let unready: Vec<(&String, &Item)> = pods.iter().filter(|(_, pod)| pod.ready == 0).collect();
    let (total, ready) = (pods.len(), pods.len() - unready.len());
    Err(match unready.as_slice() {
        _ if total == 0 => format!("no pod matches {selector} in {namespace} (yet)"),
        [] => return Ok(()),
        [(name, pod)] => format!(
            "{ready} of {total} pods ready; {} is not: {}",
            clip(name),
            pod.why
        ),
        many => {
            let names: Vec<String> = many.iter().take(3).map(|(name, _)| clip(name)).collect();
            let mut names = names.join(", ");
            if many.len() > 3 {
                names += &format!(" and {} more", many.len() - 3);
            }
            format!("{ready} of {total} pods ready; not ready: {names}")
        }
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::super::list::read;
    use super::super::object::parse;
    use super::*;

    fn unready(name: &str) -> String {
        format!(
            r#"{{"metadata":{{"name":"{name}"}},"status":{{"phase":"Running","conditions":[
                 {{"type":"Ready","status":"False","reason":"ContainersNotReady"}}]}}}}"#
        )
    }

    #[test]
    fn a_pending_pod_many_unready_pods_and_null_items() {
        let pending = parse(r#"{"status":{"phase":"Pending"}}"#).unwrap();
        assert_eq!(
            judge_one(&pending),
            Err("pod not ready: phase Pending".into())
        );
        let many = [1, 2, 3, 4, 5].map(|i| unready(&format!("p{i}"))).join(",");
        let many = format!(r#"{{"kind":"PodList","items":[{many}]}}"#);
        let (_, many) = read::<Pod>(many.as_bytes()).unwrap();
        let shown = "0 of 5 pods ready; not ready: p1, p2, p3 and 2 more";
        assert_eq!(judge_all(&many, "ns", "app=web"), Err(shown.into()));
        let (_, null) = read::<Pod>(br#"{"items":null}"#).unwrap();
        let none = "no pod matches x in ns (yet)";
        assert_eq!(judge_all(&null, "ns", "x"), Err(none.into()));
    }
}
