//! Kubernetes versions as `doctor` judges them: the minor release that brought built-in
//! sidecars (`SidecarContainers`: alpha and off in 1.28, on by default from 1.29, locked on
//! from 1.33), and the skew the version policy allows between an API server and a kubelet.

pub use crate::kind::k8s::nodes::minor;

/// Whether a component of `version` has built-in sidecars by default, and why, when its
/// metrics cannot say.
pub fn sidecars_by_version(version: (u32, u32)) -> (bool, &'static str) {
    match version {
        (1, m) if m >= 33 => (true, "1.33+: SidecarContainers is locked on"),
        (1, m) if m >= 29 => (true, "1.29+: SidecarContainers is on by default"),
        (1, 28) => (false, "1.28: SidecarContainers is off unless turned on"),
        _ => (false, "before 1.28: no built-in sidecars"),
    }
}

/// Minor releases a kubelet is behind its API server (negative: ahead).
pub fn skew(server: (u32, u32), kubelet: (u32, u32)) -> Option<i64> {
    (server.0 == kubelet.0).then(|| i64::from(server.1) - i64::from(kubelet.1))
}

/// Why a skew is outside the version policy: a kubelet may be up to three minors older than
/// the API server, never newer.
pub fn skew_problem(skew: i64) -> Option<String> {
    match skew {
        s if s < 0 => Some(format!(
            "the kubelet is {} minor(s) newer than the API server",
            -s
        )),
        s if s > 3 => Some(format!(
            "the kubelet is {s} minors older than the API server (at most 3)"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_as_providers_spell_them() {
        assert_eq!(minor("v1.34.1"), Some((1, 34)));
        assert_eq!(minor("v1.30.2-eks-1234"), Some((1, 30)));
        assert_eq!(minor("v1.29.3+k3s1"), Some((1, 29)));
        assert_eq!(minor("1.28+"), Some((1, 28)));
        assert_eq!(minor("garbage"), None);
        assert!(sidecars_by_version((1, 29)).0);
        assert!(!sidecars_by_version((1, 28)).0);
        assert_eq!(skew((1, 30), (1, 27)), Some(3));
        assert!(skew_problem(4).is_some() && skew_problem(-1).is_some());
        assert!(skew_problem(3).is_none());
    }
}
