//! The verdict from the findings: built-in sidecars work everywhere, or what stands in the
//! way (the API server, a webhook, some nodes) and the fix: the affinity strategy over the
//! user's node label, the universal pair, or turning the gate on.

use std::collections::BTreeMap;

use serde::Serialize;

use super::findings::{Admission, Node, Server};
use super::version::{minor, skew_problem};

/// What `doctor` concludes.
#[derive(Debug, Serialize)]
pub struct Verdict {
    /// `works-everywhere`, `fix-api-server`, `fix-admission`, `affinity`, `universal-pair`,
    /// `fix-nodes` or `incomplete`.
    pub verdict: &'static str,
    /// What to do, in a sentence or two.
    pub fix: String,
    /// What stands in the way of built-in sidecars (or of a supported cluster).
    pub problems: Vec<String>,
    /// Checks that could not be made, and why.
    pub failed: Vec<String>,
    /// Nodes grouped by `--node-label`'s value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Group>,
}

/// The nodes that share a value of `--node-label`.
#[derive(Debug, Serialize)]
pub struct Group {
    /// The label's value; `None`: nodes without the label.
    pub value: Option<String>,
    pub nodes: Vec<String>,
    /// `Some(true)`: built-in sidecars on all of them; `None`: some do, some do not (or not known).
    pub sidecars: Option<bool>,
}

/// Judges the findings; `label` is `--node-label`.
pub fn judge(
    server: &Server,
    nodes: &Result<Vec<Node>, String>,
    admission: &Admission,
    label: Option<&str>,
) -> Verdict {
    let (mut problems, mut failed) = (Vec::new(), Vec::new());
    if server.gate.sidecars.is_none() {
        failed.push(format!("API server: {}", note(&server.gate.note)));
    }
    let nodes: &[Node] = match nodes {
        Ok(nodes) => nodes,
        Err(why) => {
            failed.push(why.clone());
            &[]
        }
    };
    let mut lacking = Vec::new();
    for node in nodes {
        match node.gate.sidecars {
            Some(false) => lacking.push(node),
            None => failed.push(format!("node {}: {}", node.name, note(&node.gate.note))),
            Some(true) => {}
        }
        if let Some(problem) = node.skew.and_then(skew_problem) {
            problems.push(format!("node {} ({}): {problem}", node.name, node.kubelet));
        }
    }
    if admission.restart_policy_survived.is_none() {
        failed.push(format!("admission: {}", note(&admission.note)));
    }
    let groups = label.map(|_| group(nodes)).unwrap_or_default();
    let (verdict, fix) = if server.gate.sidecars == Some(false) {
        problems.push(format!(
            "the API server ({}) lacks built-in sidecars: {}",
            server.version,
            note(&server.gate.note)
        ));
        let fix = "turn SidecarContainers on in the API server (1.28) or upgrade it to 1.29 or \
                   later; until then run sidecars as regular containers"
            .to_string();
        ("fix-api-server", fix)
    } else if admission.restart_policy_survived == Some(false) {
        problems.push(format!(
            "restartPolicy: Always did not survive admission of a pod CREATE in namespace {}: {}",
            admission.namespace,
            note(&admission.note)
        ));
        admission_fix(admission)
    } else if !lacking.is_empty() {
        let names: Vec<String> = lacking
            .iter()
            .map(|n| format!("{} ({})", n.name, n.kubelet))
            .collect();
        problems.push(format!(
            "nodes without built-in sidecars: {}",
            names.join(", ")
        ));
        nodes_fix(&lacking, &groups, label)
    } else if !failed.is_empty() {
        let fix = "make the checks that failed possible (see failed), then run doctor again";
        ("incomplete", fix.to_string())
    } else {
        let fix = "none needed: use built-in sidecars (an init container with restartPolicy: \
                   Always) on every node";
        ("works-everywhere", fix.to_string())
    };
    Verdict {
        verdict,
        fix,
        problems,
        failed,
        groups,
    }
}

/// The process's exit status for a verdict: 0 fine, 1 a problem found, 3 a check failed.
pub fn status(verdict: &Verdict) -> u8 {
    match (verdict.problems.is_empty(), verdict.failed.is_empty()) {
        (false, _) => 1,
        (true, false) => 3,
        (true, true) => 0,
    }
}

fn note(note: &Option<String>) -> &str {
    note.as_deref().unwrap_or("not known")
}

/// The fix for a webhook that drops the sidecar's restart policy.
fn admission_fix(admission: &Admission) -> (&'static str, String) {
    let fix = match admission.suspects.as_slice() {
        [] => "no mutating webhook matches pod CREATE there: look for another admission \
               controller or policy engine that rewrites pods"
            .to_string(),
        suspects => {
            let named: Vec<String> = suspects
                .iter()
                .map(|s| format!("{} (in {})", s.webhook, s.configuration))
                .collect();
            format!(
                "upgrade the mutating webhook that drops it (one built on a Kubernetes client \
                 older than 1.28), or exclude this namespace from it; suspects: {}",
                named.join(", ")
            )
        }
    };
    ("fix-admission", fix)
}

/// The nodes grouped by the label's value.
fn group(nodes: &[Node]) -> Vec<Group> {
    let mut groups: BTreeMap<Option<String>, Group> = BTreeMap::new();
    for node in nodes {
        let entry = groups.entry(node.label.clone()).or_insert_with(|| Group {
            value: node.label.clone(),
            nodes: Vec::new(),
            sidecars: node.gate.sidecars,
        });
        entry.nodes.push(node.name.clone());
        if entry.sidecars != node.gate.sidecars {
            entry.sidecars = None;
        }
    }
    groups.into_values().collect()
}

/// The fix for some nodes without built-in sidecars.
fn nodes_fix(lacking: &[&Node], groups: &[Group], label: Option<&str>) -> (&'static str, String) {
    // Before 1.28 the kubelet ignores the field: the universal pair takes its legacy path.
    // From 1.28 with the gate off it rejects the pod, the universal pair's too.
    let legacy_path = lacking
        .iter()
        .all(|n| minor(&n.kubelet).is_some_and(|v| v < (1, 28)));
    let values = |on: bool| -> Vec<String> {
        groups
            .iter()
            .filter(|g| g.sidecars == Some(on))
            .map(|g| g.value.clone().unwrap_or_else(|| "(no label)".into()))
            .collect()
    };
    let (good, bad) = (values(true), values(false));
    let clean = !groups.is_empty() && groups.iter().all(|g| g.sidecars.is_some());
    let good_labelled: Vec<&String> = groups
        .iter()
        .filter(|g| g.sidecars == Some(true))
        .filter_map(|g| g.value.as_ref())
        .collect();
    if let (Some(label), true, false) = (label, clean, good_labelled.is_empty()) {
        let values = good_labelled
            .iter()
            .map(|v| format!("\"{v}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let other = match legacy_path {
            true => format!(
                "; or inject the universal pair (readygate sidecar native|legacy), which also \
                 runs on the nodes in {}",
                bad.join(", ")
            ),
            false => format!(
                "; or turn SidecarContainers on on the nodes in {}",
                bad.join(", ")
            ),
        };
        let fix = format!(
            "affinity: give pods with built-in sidecars a nodeAffinity \
             requiredDuringSchedulingIgnoredDuringExecution term {{key: {label}, operator: In, \
             values: [{values}]}} (built-in sidecars in {}){other}",
            good.join(", ")
        );
        return ("affinity", fix);
    }
    let grouping = match label {
        None => {
            "; or label the nodes by pool and run doctor with --node-label for the affinity fix"
        }
        Some(_) => "",
    };
    if legacy_path {
        let fix = format!(
            "inject the universal pair (readygate sidecar native|legacy, as \
             examples/universal-sidecar.yaml does): a built-in sidecar where the kubelet has \
             them, a regular container on the others{grouping}"
        );
        return ("universal-pair", fix);
    }
    let fix = format!(
        "turn SidecarContainers on (or upgrade to 1.29 or later) on the nodes listed: a kubelet \
         of 1.28 or later with the gate off rejects pods with built-in sidecars, the universal \
         pair's too{grouping}"
    );
    ("fix-nodes", fix)
}
