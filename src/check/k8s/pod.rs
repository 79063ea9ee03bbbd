//! `k8s://pod/NAME`: ready when the pod is `Ready`. `k8s://pods?selector=LABELS`: ready when
//! at least one pod matches, and every pod that matches is `Ready`.

use serde::Deserialize;

use super::object::{nullable, parse, some_names, true_condition, why, Condition};
use super::request::{get, Query};
use super::Cluster;
use crate::engine::Miss;
use crate::error::Failure;

/// The core v1 pods resource.
const PODS: (&str, &str, &str) = ("", "v1", "pods");

/// The parts of a v1 Pod that say whether it is ready.
#[derive(Deserialize)]
struct Pod {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    status: Status,
}

#[derive(Default, Deserialize)]
struct Metadata {
    #[serde(default)]
    name: String,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Status {
    /// `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`.
    phase: String,
    #[serde(deserialize_with = "nullable")]
    conditions: Vec<Condition>,
}

/// A v1 PodList.
#[derive(Deserialize)]
struct PodList {
    #[serde(default, deserialize_with = "nullable")]
    items: Vec<Pod>,
}

impl Pod {
    fn ready(&self) -> bool {
        true_condition(&self.status.conditions, "Ready").is_some()
    }

    /// Why the pod is not ready: its `Ready` condition's reason, else its phase.
    fn unready_because(&self) -> String {
        let ready = self.status.conditions.iter().find(|c| c.kind == "Ready");
        match (
            ready.map(why).filter(|w| !w.is_empty()),
            self.status.phase.as_str(),
        ) {
            (Some(why), "") => why,
            (Some(why), phase) => format!("{phase}, {why}"),
            (None, "") => "no Ready condition yet".into(),
            (None, phase) => format!("phase {phase}"),
        }
    }
}

/// One attempt on `k8s://pod/NAME`.
pub async fn check_one(
    cluster: &Cluster,
    namespace: &str,
    name: &str,
) -> Result<(), Miss<Failure>> {
    match get(cluster, &Query::get(PODS, namespace, name)).await? {
        Some(body) => judge_one(&parse(&body)?).map_err(Miss::NotYet),
        None => Err(Miss::NotYet(Failure::Protocol(format!(
            "no pod {name} in {namespace} (yet)"
        )))),
    }
}

/// One attempt on `k8s://pods?selector=LABELS`.
pub async fn check_all(
    cluster: &Cluster,
    namespace: &str,
    selector: &str,
) -> Result<(), Miss<Failure>> {
    let query = Query::list(PODS, namespace, selector);
    let body = get(cluster, &query).await?.ok_or_else(|| {
        Miss::NotYet(Failure::Protocol(format!(
            "the API server has no pods in {namespace}"
        )))
    })?;
    judge_all(&parse(&body)?, namespace, selector).map_err(Miss::NotYet)
}

fn judge_one(pod: &Pod) -> Result<(), Failure> {
    match pod.ready() {
        true => Ok(()),
        false => Err(Failure::Protocol(format!(
            "pod not ready: {}",
            pod.unready_because()
        ))),
    }
}

fn judge_all(list: &PodList, namespace: &str, selector: &str) -> Result<(), Failure> {
    let unready: Vec<&Pod> = list.items.iter().filter(|pod| !pod.ready()).collect();
    match (list.items.len(), unready.as_slice()) {
        (0, _) => Err(Failure::Protocol(format!(
            "no pod matches {selector} in {namespace} (yet)"
        ))),
        (_, []) => Ok(()),
        (total, [one]) => Err(Failure::Protocol(format!(
            "{} of {total} pods ready; {} is not: {}",
            total - 1,
            one.metadata.name,
            one.unready_because()
        ))),
        (total, many) => {
            let names: Vec<&str> = many.iter().map(|p| p.metadata.name.as_str()).collect();
            Err(Failure::Protocol(format!(
                "{} of {total} pods ready; not ready: {}",
                total - many.len(),
                some_names(&names)
            )))
        }
    }
}

#[cfg(test)]
mod tests {
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

    fn list(pods: &[String]) -> PodList {
        let json = format!(r#"{{"kind":"PodList","items":[{}]}}"#, pods.join(","));
        parse(json.as_bytes()).unwrap()
    }

    #[test]
    fn one_pod() {
        assert_eq!(
            judge_one(&parse(pod("a", true).as_bytes()).unwrap()),
            Ok(())
        );
        assert_eq!(
            judge_one(&parse(pod("a", false).as_bytes()).unwrap()),
            Err(
                "pod not ready: Running, ContainersNotReady: containers with unready \
                 status: [app]"
                    .into()
            )
        );
        let pending = r#"{"status":{"phase":"Pending"}}"#;
        assert_eq!(
            judge_one(&parse(pending.as_bytes()).unwrap()),
            Err("pod not ready: phase Pending".into())
        );
    }

    #[test]
    fn none_some_and_all_matching_pods() {
        let none = judge_all(&list(&[]), "ns", "app=web").unwrap_err();
        assert_eq!(none, Failure::from("no pod matches app=web in ns (yet)"));
        let some = list(&[pod("a", true), pod("b", false)]);
        let err = judge_all(&some, "ns", "app=web").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("1 of 2 pods ready; b is not: Running"),
            "{err}"
        );
        let many = list(&[1, 2, 3, 4, 5].map(|i| pod(&format!("p{i}"), false)));
        let err = judge_all(&many, "ns", "app=web").unwrap_err();
        assert_eq!(
            err,
            Failure::from("0 of 5 pods ready; not ready: p1, p2, p3 and 2 more")
        );
        let all = list(&[pod("a", true), pod("b", true)]);
        assert_eq!(judge_all(&all, "ns", "app=web"), Ok(()));
        let null: PodList = parse(br#"{"items":null}"#).unwrap();
        assert!(judge_all(&null, "ns", "x").is_err());
    }
}
