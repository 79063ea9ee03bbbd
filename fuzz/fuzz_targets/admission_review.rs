//! Fuzzes the admission webhook's reading of a review, whose pod anyone who can create one
//! writes: the bytes are the request body, answered by the function the webhook calls, with a
//! sidecar and `--mode auto` (the form chosen from the pod's node, or from the input's length
//! when it has none, so that every form runs). An input starting with `P` is the pod object
//! only, sent in a Pod CREATE review, so that most runs reach inject. Never a panic; a body
//! refused is one line; an answer is an AdmissionReview for the request's uid, and its patch
//! is base64 of a JSON Patch that applies to the pod and leaves nothing to add when the
//! patched pod is reviewed again.

#![no_main]

mod common;
mod json_patch;
mod sidecar;

use base64::Engine;
use common::assert_one_line;
use libfuzzer_sys::fuzz_target;
use readygate::{admission_answer, Injection, SidecarForm, SidecarMode};
use serde::Deserialize;
use serde_json::Value;
use sidecar::injection;

/// The uid of the reviews made around a bare pod (`P…`).
const UID: &str = "fuzz-uid";

/// The forms `--mode auto` may choose.
const FORMS: [SidecarForm; 3] = [
    SidecarForm::Native,
    SidecarForm::Legacy,
    SidecarForm::Universal,
];

/// What the fuzz target reads of a review it sent, as the webhook reads it.
#[derive(Deserialize)]
struct Sent {
    request: Option<SentRequest>,
}

#[derive(Deserialize)]
struct SentRequest {
    uid: String,
    #[serde(default)]
    object: Value,
}

thread_local! {
    static INJECTION: Injection = injection(SidecarMode::Auto);
}

/// A Pod CREATE review of `object` (JSON text).
fn review_of(object: &[u8]) -> Vec<u8> {
    [
        format!(
            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"{UID}","kind":{{"group":"","version":"v1","kind":"Pod"}},"operation":"CREATE","namespace":"ns","object":"#
        )
        .as_bytes(),
        object,
        b"}}",
    ]
    .concat()
}

fuzz_target!(|input: &[u8]| {
    let body = match input.strip_prefix(b"P") {
        Some(object) => review_of(object),
        None => input.to_vec(),
    };
    INJECTION.with(|injection| {
        let choose = |node: Option<&str>| FORMS[node.map_or(input.len(), str::len) % 3];
        let (json, decision) = match admission_answer(&body, injection, choose) {
            Ok(answered) => answered,
            Err(reason) => return assert_one_line(&reason),
        };
        let sent: Sent = serde_json::from_slice(&body).expect("a review answered is a review");
        let sent = sent.request.expect("a review answered has a request");
        let answer: Value = serde_json::from_slice(&json).expect("the answer is JSON");
        assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(answer["kind"], "AdmissionReview");
        let response = &answer["response"];
        assert_eq!(response["uid"].as_str(), Some(sent.uid.as_str()));
        let allowed = response["allowed"].as_bool().expect("allowed is a boolean");
        assert_eq!(
            allowed,
            decision.verdict != "refused",
            "{}",
            decision.verdict
        );
        if !allowed {
            let message = response["status"]["message"]
                .as_str()
                .expect("a refusal says why");
            assert_one_line(message);
        }
        let Some(patch) = response.get("patch") else {
            assert_ne!(decision.verdict, "mutated");
            return;
        };
        assert_eq!(decision.verdict, "mutated");
        assert_eq!(response["patchType"], "JSONPatch");
        let patch = base64::engine::general_purpose::STANDARD
            .decode(patch.as_str().expect("the patch is a string"))
            .expect("the patch is base64");
        let patch: Value = serde_json::from_slice(&patch).expect("the patch is JSON");
        let ops = patch.as_array().expect("the patch is a JSON array");
        assert!(!ops.is_empty(), "an empty patch is sent as none");
        // Reviewed again once patched (the API server's reinvocation), with the same form: the
        // pod is left as it is.
        let mut pod = sent.object;
        json_patch::apply(&mut pod, ops).expect("the patch applies to the pod");
        let form = decision.mode.expect("--mode auto chose a form for a pod");
        let again = review_of(&serde_json::to_vec(&pod).expect("a pod is JSON"));
        let (json, decision) =
            admission_answer(&again, injection, |_| form).expect("the patched pod is a review");
        let answer: Value = serde_json::from_slice(&json).expect("the answer is JSON");
        assert_eq!(decision.verdict, "unchanged", "{answer}");
    });
});
