//! One manifest document: find its pod templates by kind (a Pod, the workloads' templates,
//! a CronJob's job template, a List's items) and inject each. A document that is not a
//! Kubernetes object is an error naming it.

use super::annotations;
use super::pod::{self, Injection};
use super::tree::Node;
use crate::text::peer_text;

/// The workload kinds whose pod template is at `spec.template`.
const TEMPLATED: &[&str] = &[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "ReplicationController",
    "Job",
];

/// Injects into `document`, the `index`th (from 1) of its stream; the error names the
/// document (index, kind and name) and the field at fault.
pub fn inject(document: &mut Node, index: usize, injection: &Injection) -> Result<(), String> {
    object(document, injection)
        .map_err(|fault| format!("document {index}{}: {fault}", describe(document)))
}

/// ` (Deployment web)`, or less when the document lacks them.
fn describe(document: &Node) -> String {
    let kind = document.get("kind").and_then(Node::as_str);
    let name = (document.get("metadata"))
        .and_then(|metadata| {
            metadata
                .get("name")
                .or_else(|| metadata.get("generateName"))
        })
        .and_then(Node::as_str);
    // Both are the manifest's: shown on one line, cut to size.
    let (kind, name) = (kind.map(peer_text), name.map(peer_text));
    match (kind, name) {
        (Some(kind), Some(name)) => format!(" ({kind} {name})"),
        (Some(kind), None) => format!(" ({kind})"),
        _ => String::new(),
    }
}

/// Injects into one object (a List's items each in turn).
fn object(object: &mut Node, injection: &Injection) -> Result<(), String> {
    if !matches!(object, Node::Map(_)) {
        return Err("not a Kubernetes object (not a mapping)".into());
    }
    for field in ["apiVersion", "kind"] {
        if object
            .get(field)
            .and_then(Node::as_str)
            .map_or(true, str::is_empty)
        {
            return Err(format!("not a Kubernetes object: no {field}"));
        }
    }
    let kind = object
        .get("kind")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_string();
    if kind == "List" || kind.ends_with("List") {
        let Some(Node::Seq(items)) = object.get_mut("items") else {
            return match object.get("items") {
                None => Ok(()),
                Some(node) if node.is_null() => Ok(()),
                Some(_) => Err("items: not a list".into()),
            };
        };
        for (index, item) in items.iter_mut().enumerate() {
            object_in(item, injection)
                .map_err(|e| format!("items[{index}]{}: {e}", describe(item)))?;
        }
        return Ok(());
    }
    object_in(object, injection)
}

/// Injects into one object that is not a List.
fn object_in(object: &mut Node, injection: &Injection) -> Result<(), String> {
    if !matches!(object, Node::Map(_)) || object.get("kind").and_then(Node::as_str).is_none() {
        return Err("not a Kubernetes object: no kind".into());
    }
    let kind = object
        .get("kind")
        .and_then(Node::as_str)
        .unwrap_or_default();
    let path: &[&str] = match kind {
        "Pod" => &[],
        "CronJob" => &["spec", "jobTemplate", "spec", "template"],
        kind if TEMPLATED.contains(&kind) => &["spec", "template"],
        _ => return Ok(()),
    };
    let mut at = String::new();
    let mut template = &mut *object;
    for key in path {
        at = join(&at, key);
        template = match template.get_mut(key) {
            Some(node @ Node::Map(_)) => node,
            // A template still to be filled in (a kustomize base, say): nothing to inject into.
            None => return Ok(()),
            Some(_) => return Err(format!("{at}: not a mapping")),
        };
    }
    let annotations_at = join(&join(&at, "metadata"), "annotations");
    let wanted = annotations::read(
        template
            .get("metadata")
            .and_then(|metadata| metadata.get("annotations")),
        &annotations_at,
    )?;
    let spec_at = join(&at, "spec");
    match template.get_mut("spec") {
        Some(spec) => pod::inject(spec, &wanted, injection, &spec_at),
        None if wanted.is_empty() && injection.sidecar.is_none() => Ok(()),
        None => Err(format!("{spec_at}: missing")),
    }
}

/// `a.b`, or `b` when `a` is empty.
fn join(path: &str, key: &str) -> String {
    match path.is_empty() {
        true => key.to_string(),
        false => format!("{path}.{key}"),
    }
}
