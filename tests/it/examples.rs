//! `examples/`: every manifest parses as YAML, says in its header what it shows and which
//! Kubernetes version it needs, is linked from the README's Recipes, and every readygate
//! command line in it — a container's `command` + `args`, a probe's or hook's `exec.command`
//! whose argv[0] ends in `readygate` — is accepted by the real binary, so the docs cannot
//! drift from the CLI.
//!
//! Each command line runs as it would in its container, with the container's `env`, but so it
//! can neither wait, exec nor touch anything outside a temporary folder: the container's
//! volume mounts are mapped into that folder, `READYGATE_DISABLED=true` skips all waiting, and
//! `-- COMMAND` becomes `-- true`. A command line that does not parse exits 2 at once; one that
//! does either finishes with another status or is still running (a legacy sidecar in its grace
//! period) when the test stops it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use yaml_rust2::{Yaml, YamlLoader};

use crate::support::{readygate, Running, TempDir};

/// How long a command line may take to either exit or log that it runs: generous, as a
/// loaded machine can stall a process for seconds.
const SETTLE_LIMIT: Duration = Duration::from_secs(30);

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn examples() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/ exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        // Not a manifest: it names the image for all of them (scripts/check-deploy.sh).
        .filter(|path| !path.ends_with("kustomization.yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "examples missing: {files:?}");
    files
}

/// One readygate command line found in a manifest, with what its container gives it.
#[derive(Debug)]
pub(crate) struct Invocation {
    /// `file: container (where)`, for messages.
    pub(crate) origin: String,
    /// argv, argv[0] being readygate.
    pub(crate) argv: Vec<String>,
    /// The container's `env` entries with a literal value.
    pub(crate) env: Vec<(String, String)>,
    /// The container's volume mount paths.
    pub(crate) mounts: Vec<String>,
}

fn strings(yaml: &Yaml) -> Vec<String> {
    yaml.as_vec()
        .map(|items| {
            items
                .iter()
                .map(|item| match item {
                    Yaml::String(s) | Yaml::Real(s) => s.clone(),
                    Yaml::Integer(n) => n.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    other => panic!("not a scalar in a command: {other:?}"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every `exec.command` under `yaml` (probes and lifecycle hooks), with where it was found.
fn exec_commands(yaml: &Yaml, at: &str, found: &mut Vec<(String, Vec<String>)>) {
    match yaml {
        Yaml::Hash(hash) => {
            for (key, value) in hash {
                let key = key.as_str().unwrap_or("?");
                let here = format!("{at}.{key}");
                if key == "exec" {
                    found.push((here.clone(), strings(&value["command"])));
                }
                exec_commands(value, &here, found);
            }
        }
        Yaml::Array(items) => items.iter().for_each(|item| exec_commands(item, at, found)),
        _ => {}
    }
}

/// Every container (a mapping with `name` and `image`) anywhere in the document.
fn containers<'a>(yaml: &'a Yaml, found: &mut Vec<&'a Yaml>) {
    match yaml {
        Yaml::Hash(hash) => {
            if yaml["name"].as_str().is_some() && yaml["image"].as_str().is_some() {
                found.push(yaml);
            }
            hash.values().for_each(|value| containers(value, found));
        }
        Yaml::Array(items) => items.iter().for_each(|item| containers(item, found)),
        _ => {}
    }
}

pub(crate) fn invocations(file: &Path, documents: &[Yaml]) -> Vec<Invocation> {
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let mut found = Vec::new();
    for document in documents {
        let mut all = Vec::new();
        containers(document, &mut all);
        for container in all {
            let container_name = container["name"].as_str().unwrap();
            let env = container["env"]
                .as_vec()
                .into_iter()
                .flatten()
                // A Secret's value (valueFrom) gets a stand-in: the command line is checked.
                .filter_map(|e| {
                    let value = e["value"].as_str().unwrap_or("from-a-secret");
                    Some((e["name"].as_str()?.into(), value.into()))
                })
                .collect::<Vec<_>>();
            let mounts = container["volumeMounts"]
                .as_vec()
                .into_iter()
                .flatten()
                .map(|m| m["mountPath"].as_str().expect("mountPath").to_string())
                .collect::<Vec<_>>();
            let mut argvs = vec![(
                "command + args".to_string(),
                [strings(&container["command"]), strings(&container["args"])].concat(),
            )];
            exec_commands(container, "", &mut argvs);
            for (at, argv) in argvs {
                if argv.first().is_some_and(|a| a.ends_with("readygate")) {
                    found.push(Invocation {
                        origin: format!("{name}: {container_name} ({at})"),
                        argv,
                        env: env.clone(),
                        mounts: mounts.clone(),
                    });
                }
            }
        }
    }
    found
}

/// The argument as seen inside the temporary folder standing for the container's file system.
fn sandboxed(arg: &str, mounts: &[String], sandbox: &Path) -> String {
    for mount in mounts {
        for prefix in ["", "file://"] {
            let rooted = format!("{prefix}{mount}");
            if arg == rooted || arg.starts_with(&format!("{rooted}/")) {
                return format!("{prefix}{}{}", sandbox.display(), &arg[prefix.len()..]);
            }
        }
    }
    arg.to_string()
}

/// Runs one command line as described in the module header; its exit code, or `None` if it
/// logged that it runs (an INFO line: its command line was accepted) before exiting, or did
/// neither within [`SETTLE_LIMIT`].
pub(crate) fn run(invocation: &Invocation, sandbox: &Path) -> (Option<i32>, String) {
    let mut args: Vec<String> = invocation.argv[1..]
        .iter()
        .map(|arg| sandboxed(arg, &invocation.mounts, sandbox))
        .collect();
    if let Some(dashes) = args.iter().position(|a| a == "--") {
        args.truncate(dashes + 1);
        args.push("true".into());
    }
    for mount in &invocation.mounts {
        std::fs::create_dir_all(format!("{}{mount}", sandbox.display())).unwrap();
    }
    let mut running = Running::spawn(
        readygate(&args)
            .envs(invocation.env.iter().map(|(k, v)| (k, v)))
            .env("READYGATE_DISABLED", "true")
            // `serve` listens on a free loopback port, not the manifest's (unless it names one).
            .env("READYGATE_LISTEN", "127.0.0.1:0")
            .current_dir(sandbox),
    );
    crate::support::events::poll_until(SETTLE_LIMIT, Duration::from_millis(5), || {
        !running.is_running() || running.said(" INFO ")
    });
    if running.is_running() {
        // Dropped: killed.
        return (None, String::new());
    }
    let outcome = running.finish();
    (outcome.code.or(Some(-1)), outcome.stderr)
}

#[test]
fn every_example_parses_and_says_what_it_shows_and_what_it_needs() {
    for file in examples() {
        let text = std::fs::read_to_string(&file).unwrap();
        let documents = YamlLoader::load_from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not YAML: {e}", file.display()));
        assert!(!documents.is_empty(), "{}: empty", file.display());
        for document in &documents {
            for key in ["apiVersion", "kind"] {
                assert!(
                    document[key].as_str().is_some(),
                    "{}: no {key}",
                    file.display()
                );
            }
            assert!(
                document["metadata"]["name"].as_str().is_some(),
                "{}: no metadata.name",
                file.display()
            );
        }
        let header: String = text
            .lines()
            .take_while(|line| line.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            header.lines().count() >= 3,
            "{}: no header comment",
            file.display()
        );
        assert!(
            header.contains("# Needs") && header.contains("Kubernetes"),
            "{}: the header must say which Kubernetes version it needs",
            file.display()
        );
        assert!(
            !invocations(&file, &documents).is_empty(),
            "{}: no readygate command line found",
            file.display()
        );
    }
}

#[test]
fn every_readygate_command_line_in_the_examples_is_accepted_by_the_cli() {
    let mut checked = 0;
    for file in examples() {
        let text = std::fs::read_to_string(&file).unwrap();
        let documents = YamlLoader::load_from_str(&text).unwrap();
        // One folder per manifest: its containers share their volumes, as in the pod.
        let sandbox = TempDir::new();
        for invocation in invocations(&file, &documents) {
            let (code, stderr) = run(&invocation, &sandbox.0);
            eprintln!("{}: {code:?}", invocation.origin);
            assert!(
                code == Some(0) || code.is_none(),
                "{}: {:?} exited {code:?}: {stderr}",
                invocation.origin,
                invocation.argv
            );
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} command lines found");
}

#[test]
fn the_readme_recipes_link_every_example() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let recipes = readme
        .split("\n## Recipes")
        .nth(1)
        .expect("README has a ## Recipes section");
    let recipes = recipes.split("\n## ").next().unwrap();
    for file in examples() {
        let link = format!("(examples/{})", file.file_name().unwrap().to_string_lossy());
        assert!(recipes.contains(&link), "Recipes do not link {link}");
    }
}

#[test]
fn a_command_line_the_cli_rejects_is_caught() {
    // The check above is only worth something if a wrong command line fails it.
    let manifest = "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers:\n    \
                    - name: app\n      image: app\n      command: [/shared/readygate, wait, \
                    --timout, 5s, tcp://db:5432, --, /app/server]\n";
    let documents = YamlLoader::load_from_str(manifest).unwrap();
    let found = invocations(Path::new("bad.yaml"), &documents);
    assert_eq!(found.len(), 1);
    let sandbox = TempDir::new();
    let (code, stderr) = run(&found[0], &sandbox.0);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--timout"), "{stderr}");
}

/// `--timeout` of a `wait` command line (its default, 60 s, if absent), in seconds.
fn wait_timeout(argv: &[String]) -> Option<u64> {
    if argv.get(1).map(String::as_str) != Some("wait") {
        return None;
    }
    let Some(at) = argv.iter().position(|a| a == "--timeout") else {
        return Some(60);
    };
    let value = &argv[at + 1];
    let (number, unit) = value.split_at(value.trim_end_matches(char::is_alphabetic).len());
    let number: u64 = number.parse().expect("a --timeout in whole units");
    Some(match unit {
        "" | "s" => number,
        "m" => number * 60,
        "h" => number * 3600,
        other => panic!("--timeout unit {other} is not handled here"),
    })
}

/// Every pod spec (a mapping with `containers`) anywhere in the document.
fn pod_specs<'a>(yaml: &'a Yaml, found: &mut Vec<&'a Yaml>) {
    match yaml {
        Yaml::Hash(hash) => {
            if yaml["containers"].as_vec().is_some() {
                found.push(yaml);
            }
            hash.values().for_each(|value| pod_specs(value, found));
        }
        Yaml::Array(items) => items.iter().for_each(|item| pod_specs(item, found)),
        _ => {}
    }
}

/// A `wait` that the kubelet stops first (a startupProbe out of failures, the pod's
/// activeDeadlineSeconds) dies with exit 143 and its reason only in `logs --previous`: every
/// example gives readygate the shorter deadline, so that its reason is the container's message.
#[test]
fn every_wait_in_the_examples_ends_before_the_kubelet_stops_it() {
    let mut checked = 0;
    for file in examples() {
        let text = std::fs::read_to_string(&file).unwrap();
        let documents = YamlLoader::load_from_str(&text).unwrap();
        let mut specs = Vec::new();
        for document in &documents {
            pod_specs(document, &mut specs);
        }
        for spec in specs {
            let pod_deadline = spec["activeDeadlineSeconds"].as_i64();
            let all = [&spec["initContainers"], &spec["containers"]];
            for container in all.into_iter().filter_map(Yaml::as_vec).flatten() {
                let argv = [strings(&container["command"]), strings(&container["args"])].concat();
                if !argv.first().is_some_and(|a| a.ends_with("readygate")) {
                    continue;
                }
                let Some(timeout) = wait_timeout(&argv) else {
                    continue;
                };
                let origin = format!(
                    "{}: {}",
                    file.display(),
                    container["name"].as_str().unwrap()
                );
                let probe = &container["startupProbe"];
                if !probe.is_badvalue() {
                    let period = probe["periodSeconds"].as_i64().unwrap_or(10) as u64;
                    let failures = probe["failureThreshold"].as_i64().unwrap_or(3) as u64;
                    assert!(
                        timeout < period * failures,
                        "{origin}: --timeout {timeout}s is not shorter than the startupProbe's {period}s x {failures}"
                    );
                }
                if let Some(deadline) = pod_deadline {
                    assert!(
                        (timeout as i64) < deadline,
                        "{origin}: --timeout {timeout}s is not shorter than activeDeadlineSeconds {deadline}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 4, "only {checked} waits found");
}

/// What the Pod Security `restricted` level asks of one pod spec, and requests and limits on
/// every container; the faults found, as `container: what`. The real API server's admission
/// judges the same manifests in tests/kubelet; this names a fault without a cluster.
fn restricted_faults(spec: &Yaml) -> Vec<String> {
    let pod = &spec["securityContext"];
    let mut faults = Vec::new();
    let all = [&spec["initContainers"], &spec["containers"]];
    for container in all.into_iter().filter_map(Yaml::as_vec).flatten() {
        let name = container["name"].as_str().unwrap_or("?");
        let own = &container["securityContext"];
        let either = |key: &str| {
            if own[key].is_badvalue() {
                pod[key].clone()
            } else {
                own[key].clone()
            }
        };
        if either("runAsNonRoot").as_bool() != Some(true) {
            faults.push(format!("{name}: runAsNonRoot is not true"));
        }
        if either("seccompProfile")["type"].as_str() != Some("RuntimeDefault") {
            faults.push(format!("{name}: seccompProfile is not RuntimeDefault"));
        }
        if either("runAsUser").as_i64() == Some(0) {
            faults.push(format!("{name}: runAsUser is 0"));
        }
        if own["allowPrivilegeEscalation"].as_bool() != Some(false) {
            faults.push(format!("{name}: allowPrivilegeEscalation is not false"));
        }
        if !strings(&own["capabilities"]["drop"]).contains(&"ALL".to_owned()) {
            faults.push(format!("{name}: capabilities.drop lacks ALL"));
        }
        let resources = &container["resources"];
        for (kind, key) in [
            ("requests", "cpu"),
            ("requests", "memory"),
            ("limits", "memory"),
        ] {
            if resources[kind][key].is_badvalue() {
                faults.push(format!("{name}: no resources.{kind}.{key}"));
            }
        }
    }
    faults
}

/// Every pod of the examples would be admitted in a namespace that enforces Pod Security
/// `restricted` (unless its header says `# Pod Security: baseline` and why), with requests and
/// limits on every container.
#[test]
fn every_example_pod_is_restricted_and_sized() {
    let mut checked = 0;
    for file in examples() {
        let text = std::fs::read_to_string(&file).unwrap();
        let baseline = text.contains("\n# Pod Security: baseline");
        let documents = YamlLoader::load_from_str(&text).unwrap();
        let mut specs = Vec::new();
        for document in &documents {
            pod_specs(document, &mut specs);
        }
        for spec in specs {
            let faults: Vec<String> = restricted_faults(spec)
                .into_iter()
                .filter(|fault| !baseline || fault.contains("resources"))
                .collect();
            assert!(faults.is_empty(), "{}: {faults:#?}", file.display());
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} pod specs found");
}

#[test]
fn a_pod_that_is_not_restricted_is_caught() {
    // The check above is only worth something if a pod without the settings fails it.
    let manifest = "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers:\n    \
                    - name: app\n      image: app\n";
    let documents = YamlLoader::load_from_str(manifest).unwrap();
    let faults = restricted_faults(&documents[0]["spec"]);
    for expected in [
        "runAsNonRoot",
        "seccompProfile",
        "allowPrivilegeEscalation",
        "capabilities",
        "resources.limits.memory",
    ] {
        assert!(
            faults.iter().any(|fault| fault.contains(expected)),
            "{expected} not caught: {faults:?}"
        );
    }
}

#[test]
fn the_kustomization_lists_every_example() {
    let text = std::fs::read_to_string(root().join("examples/kustomization.yaml")).unwrap();
    let documents = YamlLoader::load_from_str(&text).unwrap();
    let listed: Vec<&str> = documents[0]["resources"]
        .as_vec()
        .expect("resources")
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    let mut present: Vec<String> = examples()
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    present.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(
        sorted, present,
        "examples/kustomization.yaml must list every example once"
    );
}
