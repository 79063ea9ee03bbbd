//! `--mode auto`: the sidecar's form chosen from the kubelets' versions, by the rule of the
//! Kubernetes guide "Adopting Sidecar Containers" (check node compatibility at injection time).
//! A kubelet of 1.29 or later runs built-in sidecars (SidecarContainers is on by default); one
//! before 1.28 ignores `restartPolicy` on an init container, so the universal pair takes its
//! legacy path there; a 1.28 kubelet has the gate off by default and rejects a built-in sidecar,
//! the pair's too, so only a regular container runs on it. The API server is never newer than
//! a kubelet allows (the version skew policy), so the nodes decide. A gate turned off by hand
//! on a newer kubelet is not seen here: `doctor` reads it from the node's metrics.

use super::sidecar::Mode;
use crate::kind::k8s::nodes::minor;

/// The form that runs on a node with this kubelet version; one that cannot be read is taken
/// as an old one (the pair).
pub fn on_node(kubelet: &str) -> Mode {
    match minor(kubelet) {
        Some((1, m)) if m >= 29 => Mode::Native,
        Some((major, _)) if major > 1 => Mode::Native,
        Some((1, 28)) => Mode::Legacy,
        _ => Mode::Universal,
    }
}

/// The form that runs on every node: native when all have built-in sidecars, legacy when one
/// is a 1.28 kubelet, else the universal pair (also with no node known).
pub fn across<'a>(kubelets: impl IntoIterator<Item = &'a String>) -> Mode {
    let mut any = false;
    let mut form = Mode::Native;
    for kubelet in kubelets {
        any = true;
        match on_node(kubelet) {
            Mode::Legacy => return Mode::Legacy,
            Mode::Universal => form = Mode::Universal,
            Mode::Native => {}
        }
    }
    if any {
        form
    } else {
        Mode::Universal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn across_of(versions: &[&str]) -> Mode {
        let owned: Vec<String> = versions.iter().map(|v| v.to_string()).collect();
        across(&owned)
    }

    #[test]
    fn native_only_where_every_kubelet_has_built_in_sidecars() {
        assert_eq!(across_of(&["v1.34.1", "v1.29.0-eks-1"]), Mode::Native);
        assert_eq!(across_of(&["v1.34.1", "v1.27.9"]), Mode::Universal);
        assert_eq!(across_of(&["v1.34.1", "v1.27.9", "v1.28.3"]), Mode::Legacy);
        assert_eq!(across_of(&["garbage"]), Mode::Universal);
        assert_eq!(across_of(&[]), Mode::Universal);
        assert_eq!(on_node("v1.29.3+k3s1"), Mode::Native);
        assert_eq!(on_node("v1.28.15"), Mode::Legacy);
    }
}
