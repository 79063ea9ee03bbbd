//! `k8s://KIND/NAME`, `k8s://TYPE.VERSION[.GROUP]/NAME?condition=…&jsonpath=…` and
//! `k8s://pods?selector=LABELS`, each with an optional `?namespace=NS`: read once, at parse
//! time, into a [`K8sTarget`].

use super::jsonpath::JsonPath;
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
    /// A StatefulSet (apps/v1): rolled out, as `kubectl rollout status` judges.
    StatefulSet(String),
    /// A DaemonSet (apps/v1): rolled out, as `kubectl rollout status` judges.
    DaemonSet(String),
    /// Any resource, custom ones included, by type, version and group: a condition's status
    /// and a JSON path's value, as `kubectl wait --for` judges.
    Any(Box<AnyObject>),
}

/// An object of any resource, and what makes it ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnyObject {
    /// As written: the kind (`Certificate`), its plural (`certificates`) or singular name,
    /// which discovery maps to the resource.
    pub type_name: String,
    /// `v1`, `v1beta2`…
    pub version: String,
    /// Empty for the core group.
    pub group: String,
    pub name: String,
    /// `?condition=TYPE[=STATUS]`: the condition's type, and the status it must have (`True`
    /// unless given).
    pub condition: Option<(String, String)>,
    /// `?jsonpath=PATH[=VALUE]`: a field that must be set (to VALUE, if given).
    pub jsonpath: Option<(JsonPath, Option<String>)>,
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
const KINDS: &str = "job, pod, pods, service, deployment, statefulset, daemonset, or \
                     TYPE.VERSION.GROUP for any other";

/// Parses what follows `k8s://`.
pub fn parse(rest: &str) -> Result<K8sTarget, String> {
    if rest.contains('#') {
        return Err("a k8s:// target has no #fragment".into());
    }
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (kind, name) = path.split_once('/').unwrap_or((path, ""));
    let (mut namespace, mut selector) = (None, None);
    let (mut condition, mut jsonpath) = (None, None);
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value)?;
        let slot = match key {
            "namespace" => &mut namespace,
            "selector" => &mut selector,
            "condition" => &mut condition,
            "jsonpath" => &mut jsonpath,
            _ => {
                return Err(format!(
                    "unknown parameter {} (expected namespace, selector, condition or jsonpath)",
                    quoted(key)
                ))
            }
        };
        if slot.replace(value).is_some() {
            return Err(format!("{key} given twice"));
        }
    }
    namespace.as_deref().map(namespace_name).transpose()?;
    if kind.contains('.') {
        if selector.is_some() {
            return Err("?selector= is for k8s://pods only".into());
        }
        let any = any_object(kind, name, condition, jsonpath)?;
        let object = Object::One(One::Any(Box::new(any)));
        return Ok(K8sTarget { object, namespace });
    }
    if condition.is_some() || jsonpath.is_some() {
        return Err(format!(
            "?condition= and ?jsonpath= are for k8s://TYPE.VERSION.GROUP/NAME targets \
             ({kind} is judged by its own rules)"
        ));
    }
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
        "statefulset" => |name| Object::One(One::StatefulSet(name)),
        "daemonset" => |name| Object::One(One::DaemonSet(name)),
        "" => return Err(format!("missing kind ({KINDS})")),
        _ => return Err(format!("unknown kind {} (expected {KINDS})", quoted(kind))),
    };
    if name.is_empty() {
        return Err(format!("missing {kind} name (k8s://{kind}/NAME)"));
    }
    if selector.is_some() {
        return Err("?selector= is for k8s://pods only".into());
    }
    object_name(name)?;
    let object = object(name.to_string());
    Ok(K8sTarget { object, namespace })
}

/// An object's name: a DNS subdomain, as the API requires of most kinds (a Service's is a
/// stricter label, which this accepts too).
fn object_name(name: &str) -> Result<(), String> {
    if name.len() > 253 || !name.split('.').all(|label| lower_label(label, 253)) {
        return Err(format!(
            "invalid object name {} (lower-case letters, digits, '-' and '.')",
            quoted(name)
        ));
    }
    Ok(())
}

/// `TYPE.VERSION[.GROUP]/NAME` with what makes it ready: a condition, a JSON path, or both.
fn any_object(
    kind: &str,
    name: &str,
    condition: Option<String>,
    jsonpath: Option<String>,
) -> Result<AnyObject, String> {
    let form = "TYPE.VERSION.GROUP, as certificates.v1.cert-manager.io or ConfigMap.v1";
    let (type_name, rest) = kind.split_once('.').unwrap_or((kind, ""));
    let (version, group) = rest.split_once('.').unwrap_or((rest, ""));
    if type_name.is_empty() || !type_name.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(format!("invalid type {} ({form})", quoted(type_name)));
    }
    if !api_version(version) {
        return Err(format!(
            "invalid version {} in {} ({form}; a version is v1, v1beta1, v2alpha3…)",
            quoted(version),
            quoted(kind)
        ));
    }
    if !group.is_empty() && (group.len() > 253 || !group.split('.').all(|l| lower_label(l, 63))) {
        return Err(format!("invalid API group {}", quoted(group)));
    }
    if name.is_empty() {
        return Err(format!("missing object name (k8s://{kind}/NAME)"));
    }
    object_name(name)?;
    let condition = condition
        .map(|text| {
            let (kind, status) = text.split_once('=').unwrap_or((&text, "True"));
            if kind.is_empty() || status.is_empty() || kind.chars().any(char::is_whitespace) {
                return Err(format!(
                    "invalid condition {} (TYPE or TYPE=STATUS, as Ready or Ready=False)",
                    quoted(&text)
                ));
            }
            Ok((kind.to_string(), status.to_string()))
        })
        .transpose()?;
    let jsonpath = jsonpath
        .map(|text| {
            let (path, value) = super::jsonpath::split(&text);
            let path = JsonPath::parse(path)?;
            // As kubectl: quotes around the value are not part of it.
            match value.map(|value| value.trim_matches(['\'', '"'])) {
                Some("") => Err(format!("an empty value in ?jsonpath={}", quoted(&text))),
                value => Ok((path, value.map(str::to_string))),
            }
        })
        .transpose()?;
    if condition.is_none() && jsonpath.is_none() {
        return Err(format!(
            "k8s://{kind}/{name} needs ?condition=TYPE[=STATUS] or ?jsonpath=PATH[=VALUE]: what \
             makes it ready"
        ));
    }
    Ok(AnyObject {
        type_name: type_name.to_string(),
        version: version.to_string(),
        group: group.to_string(),
        name: name.to_string(),
        condition,
        jsonpath,
    })
}

/// An API version as Kubernetes names them: `v1`, `v2beta1`, `v1alpha3`.
fn api_version(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('v') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (major, rest) = rest.split_at(digits);
    let minor = rest
        .strip_prefix("alpha")
        .or_else(|| rest.strip_prefix("beta"));
    !major.is_empty()
        && !major.starts_with('0')
        && match minor {
            None => rest.is_empty(),
            Some(n) => {
                !n.is_empty() && !n.starts_with('0') && n.bytes().all(|b| b.is_ascii_digit())
            }
        }
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
            ("statefulset/db", one(One::StatefulSet("db".into())), None),
            ("daemonset/agent", one(One::DaemonSet("agent".into())), None),
        ];
        for (text, object, namespace) in cases {
            let namespace = namespace.map(Into::into);
            assert_eq!(parse(text), Ok(K8sTarget { object, namespace }), "{text}");
        }
    }
}

#[cfg(test)]
mod any_tests {
    use super::*;

    fn any(text: &str) -> Result<AnyObject, String> {
        match parse(text)?.object {
            Object::One(One::Any(any)) => Ok(*any),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn type_version_group_condition_and_jsonpath() {
        let cert = any("certificates.v1.cert-manager.io/web?condition=Ready").unwrap();
        assert_eq!(
            (&*cert.type_name, &*cert.version, &*cert.group, &*cert.name),
            ("certificates", "v1", "cert-manager.io", "web")
        );
        assert_eq!(cert.condition, Some(("Ready".into(), "True".into())));
        let core = any("ConfigMap.v1/settings?jsonpath={.data.mode}=on&condition=X=False").unwrap();
        assert_eq!((&*core.group, &*core.version), ("", "v1"));
        assert_eq!(core.condition, Some(("X".into(), "False".into())));
        assert_eq!(core.jsonpath.unwrap().1.as_deref(), Some("on"));
        assert!(any("Widget.v2beta1.example.com/w?jsonpath=.status.phase").is_ok());
    }

    #[test]
    fn faults_are_named() {
        for (text, fault) in [
            (
                "certificates.cert-manager.io/web?condition=Ready",
                "invalid version \"cert-manager\"",
            ),
            ("certificates.v1.cert-manager.io/web", "needs ?condition="),
            (
                "certificates.v1.cert-manager.io/?condition=Ready",
                "missing object name",
            ),
            ("cert_x.v1/web?condition=Ready", "invalid type"),
            (
                "certificates.v1.Cert/web?condition=Ready",
                "invalid API group",
            ),
            ("certificates.v01/web?condition=Ready", "invalid version"),
            ("certificates.v1/web?condition==True", "invalid condition"),
            (
                "job/x?condition=Complete",
                "are for k8s://TYPE.VERSION.GROUP",
            ),
            ("c.v1/x?jsonpath=.a=", "an empty value"),
            ("c.v1/x?selector=a=b&condition=Ready", "for k8s://pods only"),
        ] {
            let error = parse(text).expect_err(text);
            assert!(error.contains(fault), "{text}: {error}");
        }
    }
}
