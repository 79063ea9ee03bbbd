//! An `examples/` manifest read into what the kubelet acts on: the pod's containers in order,
//! their commands, mounts, startup probes and postStart hooks. Anything else that would change
//! the start order (an httpGet startup probe, a preStop hook, ...) panics, so that a new example
//! is never driven half-understood. Readiness and liveness probes are left out: they set the
//! pod's Ready condition or restart a container, and order nothing at start-up.

use std::path::Path;
use std::time::Duration;

use yaml_rust2::{Yaml, YamlLoader};

/// One manifest's pod.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// File name under `examples/`.
    pub file: String,
    /// The file's text.
    pub text: String,
    /// `Pod` or `Job`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    pub init_containers: Vec<Container>,
    pub containers: Vec<Container>,
    /// The pod's `emptyDir` volumes.
    pub empty_dirs: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Container {
    pub name: String,
    pub image: String,
    /// Replaces the image's ENTRYPOINT (and drops its CMD) when not empty.
    pub command: Vec<String>,
    /// Replaces the image's CMD when not empty.
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub mounts: Vec<Mount>,
    /// An init container with `restartPolicy: Always`: a built-in sidecar.
    pub sidecar: bool,
    pub startup_probe: Option<Probe>,
    pub post_start: Option<Vec<String>>,
}

#[derive(Debug, Clone)]
pub struct Mount {
    pub volume: String,
    pub path: String,
    pub read_only: bool,
}

/// An exec startupProbe.
#[derive(Debug, Clone)]
pub struct Probe {
    pub command: Vec<String>,
    pub period: Duration,
    pub failure_threshold: u32,
}

/// Reads `examples/FILE`.
pub fn load(file: &str) -> Manifest {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{file}: {err}"));
    let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|err| panic!("{file}: {err}"));
    assert_eq!(docs.len(), 1, "{file}: one document expected");
    let doc = &docs[0];
    let kind = string(&doc["kind"]);
    let spec = match kind.as_str() {
        "Pod" => &doc["spec"],
        "Job" => &doc["spec"]["template"]["spec"],
        other => panic!("{file}: kind {other} is not driven yet (tests/containers/manifest.rs)"),
    };
    let containers = |key: &str| -> Vec<Container> {
        list(&spec[key])
            .iter()
            .map(|c| container(file, c))
            .collect()
    };
    let empty_dirs = list(&spec["volumes"])
        .iter()
        .map(|volume| {
            assert!(
                !volume["emptyDir"].is_badvalue(),
                "{file}: only emptyDir volumes are driven: {volume:?}"
            );
            string(&volume["name"])
        })
        .collect();
    Manifest {
        file: file.to_string(),
        name: string(&doc["metadata"]["name"]),
        kind,
        init_containers: containers("initContainers"),
        containers: containers("containers"),
        empty_dirs,
        text,
    }
}

fn container(file: &str, yaml: &Yaml) -> Container {
    let name = string(&yaml["name"]);
    let lifecycle = &yaml["lifecycle"];
    if let Some(hooks) = lifecycle.as_hash() {
        for key in hooks.keys() {
            assert_eq!(
                key.as_str(),
                Some("postStart"),
                "{file}: {name}: hook not driven"
            );
        }
    }
    let startup_probe = match &yaml["startupProbe"] {
        Yaml::BadValue => None,
        probe => {
            assert!(
                !probe["exec"].is_badvalue(),
                "{file}: {name}: only exec startup probes are driven"
            );
            Some(Probe {
                command: strings(&probe["exec"]["command"]),
                period: Duration::from_secs(integer(&probe["periodSeconds"], 10)),
                failure_threshold: integer(&probe["failureThreshold"], 3) as u32,
            })
        }
    };
    let post_start = match &lifecycle["postStart"] {
        Yaml::BadValue => None,
        hook => {
            assert!(
                !hook["exec"].is_badvalue(),
                "{file}: {name}: only exec hooks are driven"
            );
            Some(strings(&hook["exec"]["command"]))
        }
    };
    Container {
        image: string(&yaml["image"]),
        command: strings(&yaml["command"]),
        args: strings(&yaml["args"]),
        env: list(&yaml["env"])
            .iter()
            .map(|e| (string(&e["name"]), string(&e["value"])))
            .collect(),
        mounts: list(&yaml["volumeMounts"])
            .iter()
            .map(|m| Mount {
                volume: string(&m["name"]),
                path: string(&m["mountPath"]),
                read_only: m["readOnly"].as_bool().unwrap_or(false),
            })
            .collect(),
        sidecar: yaml["restartPolicy"].as_str() == Some("Always"),
        startup_probe,
        post_start,
        name,
    }
}

fn list(yaml: &Yaml) -> Vec<Yaml> {
    yaml.as_vec().cloned().unwrap_or_default()
}

fn string(yaml: &Yaml) -> String {
    match yaml {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(n) => n.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        other => panic!("a scalar was expected, not {other:?}"),
    }
}

fn strings(yaml: &Yaml) -> Vec<String> {
    list(yaml).iter().map(string).collect()
}

fn integer(yaml: &Yaml, default: u64) -> u64 {
    yaml.as_i64().map(|n| n as u64).unwrap_or(default)
}
