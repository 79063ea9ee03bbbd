//! `k8s://KIND/NAME` and `k8s://pods?selector=LABELS`, each with an optional `?namespace=NS`:
//! read once, at parse time, into a [`K8sTarget`].

use super::selector::{self, dns_label};
use crate::text::quoted;

/// What a target waits on: one object, read by name, or a list, read through a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Object {
    One(One),
    Many(Many),
}

/// One Kubernetes object, by name: a GET answers with it, a watch event carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum One {
    /// A Job (batch/v1): ready when `Complete`, never once `Failed`.
    Job(String),
    /// A Pod (v1): ready when `Ready`.
    Pod(String),
    /// A Deployment (apps/v1): rolled out and available.
    Deployment(String),
}

/// A list a label selector picks: a GET answers with the list, a watch event carries an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Many {
    /// The pods a label selector matches: at least one, and every one `Ready`.
    Pods(String),
    /// A Service, by its EndpointSlices: ready when one of them holds a ready endpoint.
    Service(String),
}

/// One parsed `k8s://` target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct K8sTarget {
    /// What to look at.
    pub object: Object,
    /// `?namespace=NS`; `None` is the pod's own namespace.
    pub namespace: Option<String>,
}

/// The kinds, as the error for an unknown one lists them.
const KINDS: &str = "job, pod, pods, service or deployment";

/// Parses what follows `k8s://`.
pub fn parse(rest: &str) -> Result<K8sTarget, String> {
    if rest.contains('#') {
        return Err("a k8s:// target has no #fragment".into());
    }
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (kind, name) = path.split_once('/').unwrap_or((path, ""));
    let (mut namespace, mut selector) = (None, None);
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value)?;
        let slot = match key {
            "namespace" => &mut namespace,
            "selector" => &mut selector,
            _ => {
                return Err(format!(
                    "unknown parameter {} (expected namespace or selector)",
                    quoted(key)
                ))
            }
        };
        if slot.replace(value).is_some() {
            return Err(format!("{key} given twice"));
        }
    }
    namespace.as_deref().map(namespace_name).transpose()?;
    let object: fn(String) -> Object = match kind {
        "pods" if !name.is_empty() => {
            return Err("k8s://pods takes no name: use k8s://pod/NAME".into())
        }
        "pods" => {
            let selector = selector.ok_or("k8s://pods needs ?selector=LABELS")?;
            selector::validate(&selector)?;
            let object = Object::Many(Many::Pods(selector));
            return Ok(K8sTarget { object, namespace });
        }
        "job" => |name| Object::One(One::Job(name)),
        "pod" => |name| Object::One(One::Pod(name)),
        "service" => |name| Object::Many(Many::Service(name)),
        "deployment" => |name| Object::One(One::Deployment(name)),
        "" => return Err(format!("missing kind ({KINDS})")),
        _ => return Err(format!("unknown kind {} (expected {KINDS})", quoted(kind))),
    };
    if name.is_empty() {
        return Err(format!("missing {kind} name (k8s://{kind}/NAME)"));
    }
    if selector.is_some() {
        return Err("?selector= is for k8s://pods only".into());
    }
    // A DNS subdomain, as the API requires of Jobs, Pods and Deployments (a Service's is a
    // stricter label, which this accepts too).
    if name.len() > 253 || !name.split('.').all(|label| lower_label(label, 253)) {
        return Err(format!(
            "invalid object name {} (lower-case letters, digits, '-' and '.')",
            quoted(name)
        ));
    }
    let object = object(name.to_string());
    Ok(K8sTarget { object, namespace })
}

/// Lower-case letters, digits and inner `-`, at most `max`: an RFC 1123 label.
fn lower_label(label: &str, max: usize) -> bool {
    dns_label(label, max) && !label.contains(|c: char| c.is_ascii_uppercase())
}

/// A namespace name: one DNS label (RFC 1123), at most 63 characters.
pub fn namespace_name(name: &str) -> Result<(), String> {
    match lower_label(name, 63) {
        true => Ok(()),
        false => Err(format!(
            "invalid namespace {} (lower-case letters, digits and '-', at most 63)",
            quoted(name)
        )),
    }
}

/// Decodes `%XX` escapes of a query value.
fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = crate::text::percent::decode_strict(text.as_bytes())
        .ok_or_else(|| format!("invalid %-escape in {}", quoted(text)))?;
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 once decoded", quoted(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_with_and_without_a_namespace() {
        let one = Object::One;
        let many = Object::Many;
        let cases = [
            ("job/db-migrate", one(One::Job("db-migrate".into())), None),
            (
                "pod/web-0?namespace=shop",
                one(One::Pod("web-0".into())),
                Some("shop"),
            ),
            ("service/db", many(Many::Service("db".into())), None),
            (
                "deployment/api.v2",
                one(One::Deployment("api.v2".into())),
                None,
            ),
            (
                "pods?selector=app%3Dweb,tier in (a, b)&namespace=x",
                many(Many::Pods("app=web,tier in (a, b)".into())),
                Some("x"),
            ),
            (
                "pods?selector=app=web",
                many(Many::Pods("app=web".into())),
                None,
            ),
        ];
        for (text, object, namespace) in cases {
            let namespace = namespace.map(Into::into);
            assert_eq!(parse(text), Ok(K8sTarget { object, namespace }), "{text}");
        }
    }
}
