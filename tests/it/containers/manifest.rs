//! An `examples/` manifest read into what the kubelet acts on: each workload's pod (a Pod, or a
//! Job's or Deployment's template) with its containers in order, their commands, environment,
//! mounts, startup probes and postStart hooks. Anything else that would change
//! the start order (an httpGet startup probe, a preStop hook, ...) panics, so that a new example
//! is never driven half-understood. Readiness and liveness probes are left out: they set the
//! pod's Ready condition or restart a container, and order nothing at start-up.

use std::path::Path;
use std::time::Duration;

use yaml_rust2::{Yaml, YamlLoader};

/// One workload of a manifest, and its pod.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// File name under `examples/`.
    pub file: String,
    /// The file's text.
    pub text: String,
    /// `Pod`, `Job` or `Deployment`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// A Deployment's `replicas`; 1 otherwise.
    pub replicas: u32,
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
    pub env: Vec<(String, EnvValue)>,
    pub mounts: Vec<Mount>,
    /// An init container with `restartPolicy: Always`: a built-in sidecar.
    pub sidecar: bool,
    pub startup_probe: Option<Probe>,
    pub post_start: Option<Vec<String>>,
}

/// An environment variable's value: literal, or a key of a Secret.
#[derive(Debug, Clone)]
pub enum EnvValue {
    Literal(String),
    Secret { name: String, key: String },
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

/// Reads `examples/FILE`, which must hold one workload.
pub fn load(file: &str) -> Manifest {
    let mut workloads = load_all(file);
    assert_eq!(workloads.len(), 1, "{file}: one workload expected");
    workloads.remove(0)
}

/// Reads every workload of `examples/FILE`; the other objects (a ServiceAccount, RBAC rules)
/// set up the API server, not a pod, and are left out.
pub fn load_all(file: &str) -> Vec<Manifest> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{file}: {err}"));
    let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|err| panic!("{file}: {err}"));
    docs.iter()
        .filter_map(|doc| workload(file, &text, doc))
        .collect()
}

fn workload(file: &str, text: &str, doc: &Yaml) -> Option<Manifest> {
    let kind = string(&doc["kind"]);
    let spec = match kind.as_str() {
        "Pod" => &doc["spec"],
        "Job" | "Deployment" => &doc["spec"]["template"]["spec"],
        "ServiceAccount" | "Role" | "RoleBinding" | "ClusterRole" | "ClusterRoleBinding" => {
            return None
        }
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
    Some(Manifest {
        file: file.to_string(),
        name: string(&doc["metadata"]["name"]),
        replicas: integer(&doc["spec"]["replicas"], 1) as u32,
        kind,
        init_containers: containers("initContainers"),
        containers: containers("containers"),
        empty_dirs,
        text: text.to_string(),
    })
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
            .map(|e| (string(&e["name"]), env_value(file, e)))
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

fn env_value(file: &str, env: &Yaml) -> EnvValue {
    let secret = &env["valueFrom"]["secretKeyRef"];
    if !secret.is_badvalue() {
        return EnvValue::Secret {
            name: string(&secret["name"]),
            key: string(&secret["key"]),
        };
    }
    assert!(
        env["valueFrom"].is_badvalue(),
        "{file}: only literal and Secret values are driven: {env:?}"
    );
    EnvValue::Literal(string(&env["value"]))
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
