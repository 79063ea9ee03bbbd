//! `kind::k8s`'s target parser and label selectors.

#[path = "../../src/kind/k8s/selector.rs"]
mod selector;
#[path = "../../src/kind/k8s/target.rs"]
pub mod target;
