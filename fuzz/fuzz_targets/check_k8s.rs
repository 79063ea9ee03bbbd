//! `check::k8s`'s target parser, which `Target::parse` calls for `k8s://`.

#[path = "../../src/check/k8s/selector.rs"]
mod selector;
#[path = "../../src/check/k8s/target.rs"]
mod target;

pub use target::{parse, K8sTarget};
