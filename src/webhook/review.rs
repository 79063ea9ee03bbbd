//! One admission: the API server's `admission.k8s.io/v1` AdmissionReview in, its answer out.
//! A Pod CREATE gets the JSON Patch `inject` would apply; anything else is allowed as it is. The
//! review is typed at the edge (what is not read is skipped, within serde_json's depth bound);
//! the pod itself is read into inject's ordered tree.

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::inject::sidecar::Mode;
use crate::inject::{pod_patch, Injection, Node};

/// The review the API server sends.
#[derive(Deserialize)]
struct Review {
    #[serde(rename = "apiVersion")]
    api_version: String,
    kind: String,
    request: Option<Request>,
}

/// Its request: who is admitted, and the object.
#[derive(Deserialize)]
struct Request {
    uid: String,
    kind: GroupVersionKind,
    #[serde(rename = "subResource", default)]
    sub_resource: Option<String>,
    operation: String,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    object: Option<Node>,
}

#[derive(Deserialize)]
struct GroupVersionKind {
    #[serde(default)]
    group: String,
    kind: String,
}

/// The answer to a review.
#[derive(Serialize)]
struct Answer<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    kind: &'a str,
    response: Response<'a>,
}

#[derive(Serialize)]
struct Response<'a> {
    uid: &'a str,
    allowed: bool,
    #[serde(rename = "patchType", skip_serializing_if = "Option::is_none")]
    patch_type: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
}

/// Why a pod is refused, as the API server shows it to whoever created it.
#[derive(Serialize)]
struct Status {
    code: u16,
    message: String,
}

/// What was decided, for the log: names only, never the pod's contents.
pub struct Decision {
    /// `namespace/name` (or the generateName, or the request's uid).
    pub pod: String,
    /// `mutated`, `unchanged`, `skipped` (not a Pod CREATE) or `refused`.
    pub verdict: &'static str,
    /// With `--mode auto`: the sidecar's form chosen for this pod.
    pub mode: Option<Mode>,
}

/// Answers the review in `body`: the answer's JSON, or why the body is not a review (the
/// HTTP answer is then 400, which the API server treats as a failed call). With `--mode auto`,
/// `choose` gives the sidecar's form for the pod's node (`spec.nodeName`, when bound).
pub fn answer(
    body: &[u8],
    injection: &Injection,
    choose: impl FnOnce(Option<&str>) -> Mode,
) -> Result<(Vec<u8>, Decision), String> {
    // serde_json's messages may quote the body: only the kind of fault and where.
    let review: Review = serde_json::from_slice(body).map_err(|e| {
        let fault = match e.classify() {
            serde_json::error::Category::Io | serde_json::error::Category::Eof => "cut short",
            serde_json::error::Category::Syntax => "not JSON",
            serde_json::error::Category::Data => "not of the review's shape",
        };
        format!(
            "not an AdmissionReview: {fault} at line {}, column {}",
            e.line(),
            e.column()
        )
    })?;
    if review.kind != "AdmissionReview" || review.api_version != "admission.k8s.io/v1" {
        return Err("not an admission.k8s.io/v1 AdmissionReview".into());
    }
    let request = review
        .request
        .ok_or("an AdmissionReview without a request")?;
    let pod = name_of(&request);
    let is_pod_create = request.kind.group.is_empty()
        && request.kind.kind == "Pod"
        && request.operation == "CREATE"
        && request
            .sub_resource
            .as_deref()
            .unwrap_or_default()
            .is_empty();
    let mut mode = None;
    let (response, verdict) = match (is_pod_create, &request.object) {
        (true, Some(object)) => {
            match pod_patch(object, &chosen(object, injection, choose, &mut mode)) {
                Ok(Some(patch)) => (allow(&request.uid, Some(patch)), "mutated"),
                Ok(None) => (allow(&request.uid, None), "unchanged"),
                Err(message) => (refuse(&request.uid, message), "refused"),
            }
        }
        _ => (allow(&request.uid, None), "skipped"),
    };
    let answer = Answer {
        api_version: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response,
    };
    let json = serde_json::to_vec(&answer).map_err(|e| e.to_string())?;
    Ok((json, Decision { pod, verdict, mode }))
}

/// The injection for this pod: as given, or with `--mode auto` the form `choose` gives for
/// its node, said in `mode`.
fn chosen<'a>(
    pod: &Node,
    injection: &'a Injection,
    choose: impl FnOnce(Option<&str>) -> Mode,
    mode: &mut Option<Mode>,
) -> std::borrow::Cow<'a, Injection> {
    if !injection.auto || injection.sidecar.is_none() {
        return std::borrow::Cow::Borrowed(injection);
    }
    let node = pod
        .get("spec")
        .and_then(|spec| spec.get("nodeName"))
        .and_then(Node::as_str)
        .filter(|node| !node.is_empty());
    let form = choose(node);
    *mode = Some(form);
    std::borrow::Cow::Owned(injection.with_mode(form))
}

/// An answer that admits the pod, with the patch if any.
fn allow(uid: &str, patch: Option<String>) -> Response<'_> {
    let patch = patch.map(|patch| base64::engine::general_purpose::STANDARD.encode(patch));
    Response {
        uid,
        allowed: true,
        patch_type: patch.as_ref().map(|_| "JSONPatch"),
        patch,
        status: None,
    }
}

/// An answer that refuses the pod: its readygate annotations are invalid, as `inject` would
/// say (the pod's creator reads it; the log does not).
fn refuse(uid: &str, message: String) -> Response<'_> {
    let message = message.replacen("document 1", "readygate", 1);
    Response {
        uid,
        allowed: false,
        patch_type: None,
        patch: None,
        status: Some(Status { code: 400, message }),
    }
}

/// `namespace/name` of the request's object, its generateName when it has no name yet.
fn name_of(request: &Request) -> String {
    let metadata = request
        .object
        .as_ref()
        .and_then(|object| object.get("metadata"));
    let generated = metadata
        .and_then(|m| m.get("generateName"))
        .and_then(Node::as_str)
        .map(|prefix| format!("{prefix}*"));
    let name = (request.name.clone().filter(|name| !name.is_empty()))
        .or(generated)
        .unwrap_or_else(|| format!("uid {}", request.uid));
    match request.namespace.as_deref().filter(|ns| !ns.is_empty()) {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name,
    }
}
