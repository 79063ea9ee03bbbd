//! The shared folder through which readygate reaches containers whose image lacks it: an
//! emptyDir, filled by an init container running `readygate install`, mounted where needed.

use super::tree::{map_of, upsert, Node};

/// The emptyDir volume's name.
pub const VOLUME: &str = "readygate-shared";
/// Where every container mounts it.
pub const MOUNT: &str = "/readygate-shared";
/// readygate inside it.
pub const BINARY: &str = "/readygate-shared/readygate";
/// The init container that installs it.
pub const INSTALLER: &str = "readygate-install";

/// The init container that copies readygate from `image` into the shared folder.
pub fn installer(image: &str) -> Node {
    map_of([
        ("name", Node::string(INSTALLER)),
        ("image", Node::string(image)),
        ("command", Node::strings(["/readygate", "install", MOUNT])),
        ("volumeMounts", Node::Seq(vec![mount()])),
        ("securityContext", restricted()),
        ("resources", resources()),
    ])
}

/// The securityContext of every container inject adds: what Pod Security "restricted" asks of
/// a container (the pod's own runAsNonRoot and seccomp are the pod's business), and a
/// read-only root, as readygate writes only to the shared folder.
pub fn restricted() -> Node {
    map_of([
        ("allowPrivilegeEscalation", Node::plain("false")),
        ("capabilities", map_of([("drop", Node::strings(["ALL"]))])),
        ("readOnlyRootFilesystem", Node::plain("true")),
    ])
}

/// The resources of every container inject adds, from the benchmarks' figures (a wait or an
/// install stays within a few MiB).
pub fn resources() -> Node {
    map_of([
        (
            "requests",
            map_of([
                ("cpu", Node::string("10m")),
                ("memory", Node::string("16Mi")),
            ]),
        ),
        ("limits", map_of([("memory", Node::string("32Mi"))])),
    ])
}

/// The volume mount of the shared folder.
pub fn mount() -> Node {
    map_of([
        ("name", Node::string(VOLUME)),
        ("mountPath", Node::string(MOUNT)),
    ])
}

/// Mounts the shared folder into `container` (once).
pub fn mount_into(container: &mut Node) -> Result<(), String> {
    let mounts = container
        .entry("volumeMounts", Node::Seq(Vec::new()))
        .ok_or("volumeMounts: not a list")?;
    if let Node::Seq(mounts) = mounts {
        upsert(mounts, mount(), usize::MAX);
    }
    Ok(())
}

/// The emptyDir volume itself.
pub fn volume() -> Node {
    map_of([("name", Node::string(VOLUME)), ("emptyDir", Node::map())])
}
