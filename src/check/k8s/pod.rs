//! `k8s://pod/NAME`: ready when the pod is `Ready`. `k8s://pods?selector=LABELS`: ready when
//! at least one pod matches, and every pod that matches is `Ready`.

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::object::{nullable, some_names, true_condition, why, Condition, List, Object};
use super::request::Resource;
use crate::error::Failure;

pub(super) const PODS: Resource = ("", "v1", "pods");

/// A v1 Pod, read as far as its status.
pub(super) type Pod = Object<IgnoredAny, Status>;

#[derive(Default, Deserialize)]
#[serde(default)]
pub(super) struct Status {
    /// `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    phase: String,
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<Condition>,
}

impl Status {
    fn ready(&self) -> bool {
        true_condition(&self.conditions, "Ready").is_some()
    }

    /// Why the pod is not ready: its `Ready` condition's reason, else its phase.
    fn unready_because(&self) -> String {
        let ready = self.conditions.iter().find(|c| c.kind == "Ready");
        match (ready.map(why).filter(|w| !w.is_empty()), &*self.phase) {
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

pub(super) fn judge_all(list: &List<Pod>, namespace: &str, selector: &str) -> Result<(), Failure> {
    let unready: Vec<&Pod> = list.items.iter().filter(|p| !p.status.ready()).collect();
    let (total, ready) = (list.items.len(), list.items.len() - unready.len());
    Err(match unready.as_slice() {
        _ if total == 0 => format!("no pod matches {selector} in {namespace} (yet)"),
        [] => return Ok(()),
        [one] => {
            let (name, why) = (&one.metadata.name, one.status.unready_because());
            format!("{ready} of {total} pods ready; {name} is not: {why}")
        }
        many => {
            let names: Vec<&str> = many.iter().map(|p| p.metadata.name.as_str()).collect();
            let names = some_names(&names);
            format!("{ready} of {total} pods ready; not ready: {names}")
        }
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::super::object::parse;
    use super::*;

    fn pod(name: &str, ready: bool) -> String {
        let status = if ready { "True" } else { "False" };
        format!(
            r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{name}","labels":{{"app":"web"}}}},
               "status":{{"phase":"Running","conditions":[
                 {{"type":"Initialized","status":"True"}},
                 {{"type":"Ready","status":"{status}","reason":"ContainersNotReady",
                   "message":"containers with unready status: [app]"}}]}}}}"#
        )
    }

    fn list(pods: &[String]) -> Result<(), Failure> {
        let json = format!(r#"{{"kind":"PodList","items":[{}]}}"#, pods.join(","));
        judge_all(&parse(json).unwrap(), "ns", "app=web")
    }

    fn one(json: &str) -> Result<(), Failure> {
        judge_one(&parse(json).unwrap())
    }

    #[test]
    fn one_pod() {
        assert_eq!(one(&pod("a", true)), Ok(()));
        let unready = "pod not ready: Running, ContainersNotReady: containers with unready \
                       status: [app]";
        assert_eq!(one(&pod("a", false)), Err(unready.into()));
        let pending = Err("pod not ready: phase Pending".into());
        assert_eq!(one(r#"{"status":{"phase":"Pending"}}"#), pending);
    }

    #[test]
    fn none_some_and_all_matching_pods() {
        let none = Err(Failure::from("no pod matches app=web in ns (yet)"));
        assert_eq!(list(&[]), none);
        let err = list(&[pod("a", true), pod("b", false)]).unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.starts_with("1 of 2 pods ready; b is not: Running"),
            "{err}"
        );
        let many = list(&[1, 2, 3, 4, 5].map(|i| pod(&format!("p{i}"), false)));
        let many_shown = "0 of 5 pods ready; not ready: p1, p2, p3 and 2 more";
        assert_eq!(many, Err(Failure::from(many_shown)));
        assert_eq!(list(&[pod("a", true), pod("b", true)]), Ok(()));
        let null: List<Pod> = parse(r#"{"items":null}"#).unwrap();
        assert!(judge_all(&null, "ns", "x").is_err());
    }
}
