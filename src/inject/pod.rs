//! One pod spec, injected: the sidecar, the startup probes and the wait for dependencies, each
//! added in place of an earlier injection of the same name unless that one already holds it
//! (with whatever the API server or other webhooks added to it), so injecting an injected pod
//! changes nothing. Nothing is changed unless the whole pod can be.

use super::annotations::Wanted;
use super::probe::startup_probe;
use super::shared;
use super::sidecar::Sidecar;
use super::tree::{position_by_name, upsert, Node};

/// The init container that waits for `readygate.dev/wait-for`.
pub const WAITER: &str = "readygate-wait";

/// What is added to every pod, whatever its annotations.
#[derive(Clone)]
pub struct Injection {
    /// readygate's own image, for the wait and install init containers.
    pub image: String,
    /// `--sidecar` and its mode.
    pub sidecar: Option<Sidecar>,
    /// `--mode auto`: the sidecar's mode is the cluster's, chosen before it is added.
    pub auto: bool,
}

impl Injection {
    /// The same injection with the sidecar added as `mode`.
    pub fn with_mode(&self, mode: super::sidecar::Mode) -> Injection {
        Injection {
            image: self.image.clone(),
            sidecar: self.sidecar.as_ref().map(|s| s.with_mode(mode)),
            auto: false,
        }
    }
}

/// Injects `wanted` and the sidecar into `spec`, a pod spec at field path `at`.
pub fn inject(
    spec: &mut Node,
    wanted: &Wanted,
    injection: &Injection,
    at: &str,
) -> Result<(), String> {
    if wanted.is_empty() && injection.sidecar.is_none() {
        return Ok(());
    }
    if !matches!(spec, Node::Map(_)) {
        return Err(format!("{at}: not a mapping"));
    }
    let mut pod = spec.clone();
    let mut needs_binary = false;
    {
        let (init, regular) = lists(&mut pod, at)?;
        if let Some(sidecar) = &injection.sidecar {
            // A copy moves between the lists when the mode changes.
            let placed = sidecar.place();
            if let Some(container) = placed.init {
                remove_named(regular, &name_of(&container));
                upsert(init, container, 0);
            }
            if let Some(container) = placed.regular {
                remove_named(init, &name_of(&container));
                upsert(regular, container, 0);
            }
            needs_binary |= placed.needs_binary;
        }
        for (name, target) in &wanted.startup_probes {
            let container = find(init, regular, name).ok_or_else(|| {
                let name = crate::text::peer_text(name);
                format!(
                    "{}[{}{name}]: no container named \"{name}\" in {at}",
                    wanted.at,
                    super::annotations::STARTUP_PROBE
                )
            })?;
            let (probe, binary) = startup_probe(target);
            container.ensure("startupProbe", probe);
            if binary {
                shared::mount_into(container)
                    .map_err(|e| format!("{at}: container {name:?}: {e}"))?;
            }
            needs_binary |= binary;
        }
        if !wanted.wait_for.is_empty() {
            upsert(init, waiter(&injection.image, wanted), usize::MAX);
        }
        if needs_binary {
            upsert(init, shared::installer(&injection.image), 0);
        }
    }
    if needs_binary {
        let volumes = pod
            .entry("volumes", Node::Seq(Vec::new()))
            .ok_or_else(|| format!("{at}.volumes: not a list"))?;
        if let Node::Seq(volumes) = volumes {
            upsert(volumes, shared::volume(), usize::MAX);
        }
    }
    // An empty initContainers made for nothing stays out.
    if matches!(pod.get("initContainers"), Some(Node::Seq(items)) if items.is_empty())
        && spec.get("initContainers").is_none()
    {
        pod.remove("initContainers");
    }
    *spec = pod;
    Ok(())
}

/// The pod's init containers and containers, each a list of mappings (made when missing).
fn lists<'a>(
    pod: &'a mut Node,
    at: &str,
) -> Result<(&'a mut Vec<Node>, &'a mut Vec<Node>), String> {
    for key in ["initContainers", "containers"] {
        let list = pod
            .entry(key, Node::Seq(Vec::new()))
            .ok_or_else(|| format!("{at}.{key}: not a list"))?;
        if let Node::Seq(items) = list {
            if let Some(index) = items.iter().position(|item| !matches!(item, Node::Map(_))) {
                return Err(format!("{at}.{key}[{index}]: not a container"));
            }
        }
    }
    let Node::Map(entries) = pod else {
        return Err(format!("{at}: not a mapping"));
    };
    let mut init = None;
    let mut regular = None;
    for (key, value) in entries.iter_mut() {
        match (key.as_str(), value) {
            (Some("initContainers"), Node::Seq(items)) => init = Some(items),
            (Some("containers"), Node::Seq(items)) => regular = Some(items),
            _ => {}
        }
    }
    init.zip(regular)
        .ok_or_else(|| format!("{at}: no containers"))
}

/// The container named `name`, among the init containers then the containers.
fn find<'a>(init: &'a mut [Node], regular: &'a mut [Node], name: &str) -> Option<&'a mut Node> {
    if let Some(index) = position_by_name(init, name) {
        return init.get_mut(index);
    }
    let index = position_by_name(regular, name)?;
    regular.get_mut(index)
}

/// A container's name.
fn name_of(container: &Node) -> String {
    container
        .get("name")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Removes the item named `name` from `list`, if there.
fn remove_named(list: &mut Vec<Node>, name: &str) {
    if let Some(index) = position_by_name(list, name) {
        list.remove(index);
    }
}

/// The init container that runs `readygate wait` for the annotated targets.
fn waiter(image: &str, wanted: &Wanted) -> Node {
    let mut command = vec!["/readygate".to_string(), "wait".to_string()];
    if let Some(timeout) = &wanted.wait_timeout {
        command.extend(["--timeout".to_string(), timeout.clone()]);
    }
    command.extend(wanted.wait_for.iter().cloned());
    super::tree::map_of([
        ("name", Node::string(WAITER)),
        ("image", Node::string(image)),
        ("command", Node::strings(command)),
        ("securityContext", shared::restricted()),
        ("resources", shared::resources()),
    ])
}
