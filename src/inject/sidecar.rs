//! `--sidecar CONTAINER.yaml --mode …`: a sidecar author's container, added to every pod in
//! one of three forms: a built-in sidecar, a regular container, or the universal pair that
//! works on nodes with and without built-in sidecars (examples/universal-sidecar.yaml).

use crate::cli::SidecarMode;

use super::shared;
use super::tree::{map_of, Node};

/// How long the legacy half waits for the native half to say it runs.
const GRACE: &str = "10s";

/// The form the sidecar is added in (`--mode`, or what `auto` chose).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Native,
    Legacy,
    Universal,
}

impl Mode {
    /// Its name on the command line and in the log.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Native => "native",
            Mode::Legacy => "legacy",
            Mode::Universal => "universal",
        }
    }
}

/// The sidecar container of `--sidecar`, validated once.
#[derive(Debug, Clone)]
pub struct Sidecar {
    /// The container as written in the file.
    pub container: Node,
    /// Its name.
    pub name: String,
    pub mode: Mode,
}

/// Where each copy of the sidecar goes.
pub struct Placed {
    /// Into `initContainers`, ahead of the pod's own.
    pub init: Option<Node>,
    /// Into `containers`, first.
    pub regular: Option<Node>,
    /// Whether it needs readygate in the shared folder.
    pub needs_binary: bool,
}

impl Sidecar {
    /// Reads the container of `--sidecar` from `node`; `asked` is `--mode`. With `auto` it is
    /// added as the universal pair until the cluster says otherwise (and so needs what the
    /// pair needs).
    pub fn new(container: Node, asked: SidecarMode) -> Result<Sidecar, String> {
        let mode = match asked {
            SidecarMode::Native => Mode::Native,
            SidecarMode::Legacy => Mode::Legacy,
            SidecarMode::Universal | SidecarMode::Auto => Mode::Universal,
        };
        if !matches!(container, Node::Map(_)) {
            return Err("not a container (a mapping with a name and an image)".into());
        }
        let name = (container.get("name").and_then(Node::as_str))
            .filter(|name| !name.is_empty())
            .ok_or("the container has no name")?
            .to_string();
        let has_command =
            matches!(container.get("command"), Some(Node::Seq(items)) if !items.is_empty());
        if !matches!(container.get("volumeMounts"), None | Some(Node::Seq(_))) {
            return Err("volumeMounts: not a list".into());
        }
        if mode == Mode::Universal && !has_command {
            let asked = if asked == SidecarMode::Auto {
                "auto"
            } else {
                "universal"
            };
            return Err(format!(
                "--mode {asked} wraps the container's command: give it a command (the image's \
                 entrypoint is not known here)"
            ));
        }
        Ok(Sidecar {
            container,
            name,
            mode,
        })
    }

    /// The same sidecar, added as `mode`.
    pub fn with_mode(&self, mode: Mode) -> Sidecar {
        Sidecar {
            mode,
            ..self.clone()
        }
    }

    fn native_name(&self) -> String {
        format!("{}-native", self.name)
    }

    fn legacy_name(&self) -> String {
        format!("{}-legacy", self.name)
    }

    /// The copies of the sidecar to add.
    pub fn place(&self) -> Placed {
        match self.mode {
            Mode::Native => {
                let mut init = self.container.clone();
                init.set("restartPolicy", Node::string("Always"));
                Placed {
                    init: Some(init),
                    regular: None,
                    needs_binary: false,
                }
            }
            Mode::Legacy => Placed {
                init: None,
                regular: Some(self.container.clone()),
                needs_binary: false,
            },
            Mode::Universal => Placed {
                init: Some(self.native()),
                regular: Some(self.legacy()),
                needs_binary: true,
            },
        }
    }

    /// The state file both halves share.
    fn state(&self) -> String {
        format!("{}/{}-state", shared::MOUNT, self.name)
    }

    /// The universal pair's built-in half: `readygate sidecar native`, started once its
    /// state says `native`.
    fn native(&self) -> Node {
        let state = self.state();
        let mut command = vec![shared::BINARY, "sidecar", "native", "--state", &state, "--"];
        let wrapped = command_of(&self.container);
        command.extend(wrapped.iter().map(String::as_str));
        let mut container = self.wrapped(&self.native_name(), command);
        container.set("restartPolicy", Node::string("Always"));
        let file = format!("file://{state}");
        let probe = [shared::BINARY, "probe", "--contains", "native", &file];
        container.set(
            "startupProbe",
            map_of([
                ("exec", map_of([("command", Node::strings(probe))])),
                ("periodSeconds", Node::plain("1")),
                ("failureThreshold", Node::plain("30")),
            ]),
        );
        container
    }

    /// The universal pair's regular half: `readygate sidecar legacy`, which stands by when the
    /// built-in half runs.
    fn legacy(&self) -> Node {
        let state = self.state();
        let mut command = vec![
            shared::BINARY,
            "sidecar",
            "legacy",
            "--state",
            &state,
            "--grace",
            GRACE,
            "--",
        ];
        let wrapped = command_of(&self.container);
        command.extend(wrapped.iter().map(String::as_str));
        self.wrapped(&self.legacy_name(), command)
    }

    /// The container renamed, running `command` (its own command and args after `--`), with
    /// the shared folder mounted.
    fn wrapped(&self, name: &str, command: Vec<&str>) -> Node {
        let mut container = self.container.clone();
        container.set("name", Node::string(name));
        container.set("command", Node::strings(command));
        container.remove("args");
        container.remove("startupProbe");
        // A mapping whose volumeMounts is a list (checked in `new`): the mount cannot fail.
        let _ = shared::mount_into(&mut container);
        container
    }
}

/// The container's command then its args (what the kubelet runs), as strings.
fn command_of(container: &Node) -> Vec<String> {
    let strings = |key| match container.get(key) {
        Some(Node::Seq(items)) => items
            .iter()
            .filter_map(Node::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    let mut command: Vec<String> = strings("command");
    command.extend(strings("args"));
    command
}
