//! What `doctor` found, check by check: the shape both the table and the JSON report are made
//! from.

use serde::Serialize;

/// Whether built-in sidecars work on one component, and how that was learnt.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    /// `None`: not known (neither metrics nor a version to judge by).
    pub sidecars: Option<bool>,
    /// `metrics` (the `kubernetes_feature_enabled` gauge) or `version`.
    pub judged_by: &'static str,
    /// Why it was judged by version (a refused grant, an unreachable node), or what the version
    /// implies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The API server.
#[derive(Debug, Serialize)]
pub struct Server {
    pub version: String,
    #[serde(flatten)]
    pub gate: Gate,
}

/// One node.
#[derive(Debug, Serialize)]
pub struct Node {
    pub name: String,
    pub kubelet: String,
    /// Minor releases behind the API server.
    pub skew: Option<i64>,
    /// The value of `--node-label` on this node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(flatten)]
    pub gate: Gate,
}

/// A mutating webhook that may have changed the dry-run pod.
#[derive(Debug, Serialize)]
pub struct Suspect {
    pub configuration: String,
    pub webhook: String,
}

/// What admission did to a pod with a built-in sidecar.
#[derive(Debug, Serialize)]
pub struct Admission {
    pub namespace: String,
    /// `None`: the dry run failed (`note` says why).
    pub restart_policy_survived: Option<bool>,
    pub suspects: Vec<Suspect>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
