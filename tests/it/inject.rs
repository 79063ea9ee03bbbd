//! `readygate inject`: manifests in, injected manifests out, as a user pipes them. Golden files
//! under tests/inject/ hold what each stream must become; every example of examples/ comes out
//! byte for byte (it has no annotations) and, given a sidecar, round-trips through the tree and
//! the emitter with every value kept; injecting twice is injecting once, and a pod the
//! cluster has defaulted and extended since is left as it is; bad input writes
//! nothing and exits 2 naming the document and field; what inject writes runs.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use yaml_rust2::{Yaml, YamlLoader};

use crate::support::run::{Outcome, RunExt};
use crate::support::{readygate_cluster, TempDir};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn golden(name: &str) -> PathBuf {
    root().join("tests/inject").join(name)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `readygate inject ARGS` with `stdin` on its standard input.
fn inject_stdin(args: &[&str], stdin: &str) -> Outcome {
    let mut command = readygate_cluster(["inject"].iter().chain(args));
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = std::time::Instant::now();
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let text = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        // readygate may refuse the stream before reading it all.
        let _ = input.write_all(text.as_bytes());
    });
    let outcome = crate::support::run::finish(child, started);
    writer.join().unwrap();
    outcome
}

/// `readygate inject ARGS`, which must succeed; its stdout.
fn inject(args: &[&str]) -> String {
    let outcome = readygate_cluster(["inject"].iter().chain(args)).outcome();
    outcome.expect_code(0);
    assert_eq!(outcome.stderr, "", "{outcome:#?}");
    outcome.stdout
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The golden streams: each input, with its options, becomes its golden output.
#[test]
fn golden_streams() {
    let proxy = golden("proxy.yaml");
    let cases: &[(&str, &[&str], &str)] = &[
        ("annotations.in.yaml", &[], "annotations.out.yaml"),
        (
            "annotations.in.yaml",
            &["--output", "patch"],
            "annotations.patch",
        ),
        ("list.in.json", &[], "list.out.json"),
        (
            "workloads.in.yaml",
            &["--sidecar", path(&proxy), "--mode", "native"],
            "workloads.native.yaml",
        ),
        (
            "workloads.in.yaml",
            &["--sidecar", path(&proxy), "--mode", "legacy"],
            "workloads.legacy.yaml",
        ),
        (
            "workloads.in.yaml",
            &["--sidecar", path(&proxy), "--mode", "universal"],
            "workloads.universal.yaml",
        ),
    ];
    for (input, options, expected) in cases {
        let mut args: Vec<&str> = options.to_vec();
        let input = golden(input);
        args.push(path(&input));
        let written = inject(&args);
        assert_eq!(
            written,
            read(&golden(expected)),
            "inject {args:?} differs from {expected}"
        );
        // The same stream through stdin.
        let piped = inject_stdin(options, &read(&input));
        piped.expect_code(0);
        assert_eq!(piped.stdout, written, "stdin and FILE differ for {input:?}");
        // Injecting twice is injecting once.
        if !options.contains(&"patch") {
            let again = inject_stdin(options, &written);
            again.expect_code(0);
            assert_eq!(again.stdout, written, "a second inject changed {expected}");
        }
    }
}

/// The universal pair inject writes is the one examples/universal-sidecar.yaml writes by hand:
/// the same containers, commands, probe and mounts, once the folder's name is the example's.
#[test]
fn universal_pair_is_the_examples() {
    let example =
        &YamlLoader::load_from_str(&read(&root().join("examples/universal-sidecar.yaml"))).unwrap()
            [0];
    // The example's pod without the pair: its securityContext and its app.
    let pod = r#"apiVersion: v1
kind: Pod
metadata:
  name: universal-sidecar
spec:
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: app
      image: busybox:1.36
      command: ["sh", "-c", "exec sleep 3600"]
      securityContext:
        allowPrivilegeEscalation: false
        capabilities:
          drop: [ALL]
      resources:
        requests: { cpu: 10m, memory: 16Mi }
        limits: { memory: 32Mi }
"#;
    let dir = TempDir::new();
    let sidecar = dir.join("proxy.yaml");
    let proxy = r#"name: proxy
image: nginxinc/nginx-unprivileged:1.27
command: [nginx, -g, "daemon off;"]
securityContext:
  runAsUser: 101
  runAsGroup: 101
  allowPrivilegeEscalation: false
  capabilities:
    drop: [ALL]
resources:
  requests: { cpu: 50m, memory: 32Mi }
  limits: { memory: 64Mi }
"#;
    std::fs::write(&sidecar, proxy).unwrap();
    let outcome = inject_stdin(&["--sidecar", path(&sidecar), "--mode", "universal"], pod);
    outcome.expect_code(0);
    let renamed = (outcome.stdout)
        .replace("/readygate-shared/proxy-state", "/shared/sidecar-state")
        .replace("readygate-shared", "shared")
        .replace("readygate-install", "install-readygate");
    let injected = &YamlLoader::load_from_str(&renamed).unwrap()[0];
    assert_eq!(
        unordered(injected),
        unordered(example),
        "inject's universal pair:\n{renamed}"
    );
}

/// `yaml` with every mapping's keys sorted: for comparing content, not layout.
fn unordered(yaml: &Yaml) -> Yaml {
    match yaml {
        Yaml::Hash(map) => {
            let mut entries: Vec<(Yaml, Yaml)> =
                map.iter().map(|(k, v)| (k.clone(), unordered(v))).collect();
            entries.sort();
            Yaml::Hash(entries.into_iter().collect())
        }
        Yaml::Array(items) => Yaml::Array(items.iter().map(unordered).collect()),
        other => other.clone(),
    }
}

fn examples() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "{files:?}");
    files
}

/// Every example comes out byte for byte (none has readygate annotations), its patch empty;
/// given a sidecar, each pod is rewritten and every value of the example survives the trip.
#[test]
fn every_example_round_trips() {
    let dir = TempDir::new();
    let sidecar = dir.join("extra.yaml");
    std::fs::write(&sidecar, "name: extra\nimage: extra:1\n").unwrap();
    for example in examples() {
        let text = read(&example);
        assert_eq!(inject(&[path(&example)]), text, "{example:?} changed");
        let patches = inject(&["--output", "patch", path(&example)]);
        assert!(
            patches.lines().all(|line| line == "[]"),
            "{example:?}: {patches}"
        );

        let written = inject(&["--sidecar", path(&sidecar), path(&example)]);
        let before = YamlLoader::load_from_str(&text).unwrap();
        let mut after = YamlLoader::load_from_str(&written).unwrap();
        let mut rewritten = 0;
        for document in &mut after {
            rewritten += usize::from(remove_container(document, "extra"));
        }
        assert_eq!(
            after, before,
            "{example:?} lost or changed a value:\n{written}"
        );
        let pods = before
            .iter()
            .filter(|d| d["kind"].as_str() == Some("Pod"))
            .count();
        assert!(
            rewritten >= pods,
            "{example:?}: {rewritten} rewritten of {pods} pods"
        );
    }
}

/// Removes the init container `name` from the document's pod spec (wherever the kind keeps
/// it); whether there was one.
fn remove_container(document: &mut Yaml, name: &str) -> bool {
    let Yaml::Hash(map) = document else {
        return false;
    };
    let mut found = false;
    for (key, value) in map.iter_mut() {
        if key.as_str() == Some("initContainers") {
            if let Yaml::Array(items) = value {
                let before = items.len();
                items.retain(|item| item["name"].as_str() != Some(name));
                found = items.len() < before;
            }
        } else {
            found |= remove_container(value, name);
        }
    }
    // An initContainers made only for the sidecar goes too.
    let empty = Yaml::String("initContainers".into());
    if matches!(map.get(&empty), Some(Yaml::Array(items)) if items.is_empty()) {
        map.remove(&empty);
    }
    found
}

/// Bad input: exit 2, a line naming the document (index, kind, name) and field, and nothing
/// on stdout, even when good documents came first.
#[test]
fn bad_input_writes_nothing() {
    let good = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ok\n  annotations:\n    \
                readygate.dev/wait-for: db:5432\nspec:\n  containers: [{name: a, image: b}]\n---\n";
    let pod = |annotations: &str, spec: &str| {
        format!(
            "{good}apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  annotations:\n{annotations}\n\
             spec:\n{spec}\n"
        )
    };
    let containers = "  containers: [{name: app, image: b}]";
    let cases: Vec<(String, &str)> = vec![
        (
            pod("    readygate.dev/wait-for: \"postgres//db:5432\"", containers),
            "document 2 (Pod bad): metadata.annotations[readygate.dev/wait-for]: invalid target \"postgres//db:5432\"",
        ),
        (
            pod("    readygate.dev/wait-for: db:5432, http://", containers),
            "document 2 (Pod bad): metadata.annotations[readygate.dev/wait-for]: invalid target \"http://\"",
        ),
        (
            pod("    readygate.dev/wait-for: db:5432\n    readygate.dev/wait-timeout: soon", containers),
            "document 2 (Pod bad): metadata.annotations[readygate.dev/wait-timeout]: invalid duration",
        ),
        (
            pod("    readygate.dev/startup-probe.proxy: tcp://127.0.0.1:1", containers),
            "document 2 (Pod bad): metadata.annotations[readygate.dev/startup-probe.proxy]: no container named \"proxy\"",
        ),
        (
            pod("    readygate.dev/wait_for: db:5432", containers),
            "document 2 (Pod bad): metadata.annotations[readygate.dev/wait_for]: unknown annotation",
        ),
        (
            pod("    readygate.dev/wait-for: db:5432", "  containers: {app: x}"),
            "document 2 (Pod bad): spec.containers: not a list",
        ),
        (format!("{good}kind: Pod\nmetadata: {{name: x}}\n"), "document 2 (Pod x): not a Kubernetes object: no apiVersion"),
        (format!("{good}- a\n- b\n"), "document 2: not a Kubernetes object (not a mapping)"),
        (format!("{good}a: [\n"), "document 2: not YAML"),
        (format!("{good}a: 1\na: 2\n"), "document 2: duplicate key \"a\""),
        (
            "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\
             \"Pod\",\"metadata\":{\"name\":\"p\",\"annotations\":{\"readygate.dev/wait-for\":\
             \"tcp://:0\"}},\"spec\":{\"containers\":[]}}]}"
                .into(),
            "document 1 (List): items[0] (Pod p): metadata.annotations[readygate.dev/wait-for]: invalid target",
        ),
        ("{\"apiVersion\": \"v1\", ".into(), "document 1: not JSON"),
        // The manifest's own names and keys, shown on one line.
        (
            pod("    \"readygate.dev/wait\\nfor\": db:5432", containers),
            "document 2 (Pod bad): metadata.annotations[readygate.dev/wait\\nfor]: unknown annotation",
        ),
        (
            format!("{good}kind: \"Pod\\r\"\nmetadata: {{name: \"a\\nb\"}}\n"),
            "document 2 (Pod\\r a\\nb): not a Kubernetes object: no apiVersion",
        ),
        (
            pod("    \"readygate.dev/startup-probe.x\\u2028y\": tcp://127.0.0.1:1", containers),
            "[readygate.dev/startup-probe.x\\u{2028}y]: no container named \"x\\u{2028}y\"",
        ),
    ];
    for (stream, error) in cases {
        let outcome = inject_stdin(&[], &stream);
        outcome.expect_code(2).expect_stderr(error);
        assert_eq!(outcome.stdout, "", "wrote on bad input: {outcome:#?}");
        assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
        assert!(!outcome.stderr.contains("panicked"), "{outcome:#?}");
    }
}

/// A document whose node begins on its `---` line (`--- {kind: Pod, …}`) is written once when
/// injected, and the stream written is injected again as it is.
#[test]
fn a_node_on_the_separator_line_is_written_once() {
    let stream = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n\
                  --- {apiVersion: v1, kind: Pod, metadata: {name: p, annotations: \
                  {readygate.dev/wait-for: \"db:5432\"}}, spec: {containers: [{name: a, image: b}]}}\n\
                  --- # the last\napiVersion: v1\nkind: Pod\nmetadata:\n  name: q\n  annotations:\n    \
                  readygate.dev/wait-for: db:5432\nspec: {containers: [{name: a, image: b}]}\n";
    let once = inject_stdin(&[], stream);
    once.expect_code(0);
    let documents = YamlLoader::load_from_str(&once.stdout).expect("the stream written is YAML");
    assert_eq!(documents.len(), 3, "{}", once.stdout);
    for (document, name) in documents[1..].iter().zip(["p", "q"]) {
        assert_eq!(
            document["metadata"]["name"].as_str(),
            Some(name),
            "{}",
            once.stdout
        );
        let init = document["spec"]["initContainers"].as_vec().unwrap();
        assert_eq!(init[0]["name"].as_str(), Some("readygate-wait"));
    }
    assert!(
        once.stdout.contains("\n--- # the last\n"),
        "{}",
        once.stdout
    );
    let twice = inject_stdin(&[], &once.stdout);
    twice.expect_code(0);
    assert_eq!(twice.stdout, once.stdout);
}

/// A comment line holding a lone CR (a line break to YAML) is not kept above an injected
/// document as a comment: what follows the CR is a field of the document, written once.
#[test]
fn a_carriage_return_ends_a_comment() {
    let stream = "# a note\rextra: 1\r\napiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: \
                  {readygate.dev/wait-for: \"db:5432\"}}\nspec: {containers: [{name: a, image: b}]}\n";
    let once = inject_stdin(&[], stream);
    once.expect_code(0);
    let twice = inject_stdin(&[], &once.stdout);
    twice.expect_code(0);
    assert_eq!(twice.stdout, once.stdout);
}

/// A JSON pod injected once gets an empty patch when injected again: a value of the sidecar
/// read from YAML (`name: proxy`) is the same as the pod's (`"name": "proxy"`), also when the
/// sidecar is put back whole because the pod's startup-probe annotation gave it another probe.
#[test]
fn an_injected_json_pod_gets_an_empty_patch() {
    let dir = TempDir::new();
    let proxy = dir.join("proxy.yaml");
    std::fs::write(
        &proxy,
        "name: proxy\nimage: p:1\ncommand: [/proxy]\nstartupProbe: {tcpSocket: {port: 1}}\n",
    )
    .unwrap();
    for (mode, probed) in [
        ("native", "proxy"),
        ("legacy", "proxy"),
        ("universal", "proxy-native"),
    ] {
        let pod = format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p","annotations":{{"readygate.dev/wait-for":"db:5432","readygate.dev/startup-probe.{probed}":"http://127.0.0.1:2/ready"}}}},"spec":{{"containers":[{{"name":"app","image":"a:1"}}]}}}}"#
        );
        let options = ["--sidecar", path(&proxy), "--mode", mode];
        let once = inject_stdin(&options, &pod);
        once.expect_code(0);
        let patch = inject_stdin(
            &[&options[..], &["--output", "patch"]].concat(),
            &once.stdout,
        );
        patch.expect_code(0);
        assert_eq!(patch.stdout, "[]\n", "--mode {mode}");
    }
}

/// A second file that is bad stops the first from being written too; a missing file and a
/// sidecar without a name are usage errors.
#[test]
fn bad_files_write_nothing() {
    let dir = TempDir::new();
    let good = golden("workloads.in.yaml");
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    readygate.dev/wait-for: \"\"\nspec: {containers: []}\n").unwrap();
    let outcome = readygate_cluster(["inject", path(&good), path(&bad)]).outcome();
    outcome.expect_code(2).expect_stderr(
        "bad.yaml: document 1 (Pod p): metadata.annotations[readygate.dev/wait-for]: no target",
    );
    assert_eq!(outcome.stdout, "");

    readygate_cluster(["inject", path(&dir.join("missing.yaml"))])
        .outcome()
        .expect_code(2)
        .expect_stderr("missing.yaml: no such file");

    let nameless = dir.join("nameless.yaml");
    std::fs::write(&nameless, "image: x\n").unwrap();
    readygate_cluster(["inject", "--sidecar", path(&nameless), path(&good)])
        .outcome()
        .expect_code(2)
        .expect_stderr("--sidecar")
        .expect_stderr("the container has no name");
    let no_command = dir.join("no-command.yaml");
    std::fs::write(&no_command, "name: proxy\nimage: x\n").unwrap();
    readygate_cluster([
        "inject",
        "--sidecar",
        path(&no_command),
        "--mode",
        "universal",
        path(&good),
    ])
    .outcome()
    .expect_code(2)
    .expect_stderr("give it a command");
}

/// Hostile streams end at once with a usage error: deep nesting, aliases that multiply, anchors
/// nested around a large node, many anchors and aliases, a very long flow sequence.
#[test]
fn hostile_streams_are_bounded() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (name, previous) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        laughs.push_str(&format!("{name}: &{name} [*{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}]\n"));
    }
    let deep_json = format!("{}{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
    // Anchors nested around a node of 700,000: each keeps a copy (tens of GB, uncounted, once).
    let mut nested = laughs.lines().take(5).collect::<Vec<_>>().join("\n");
    nested.push_str(&format!(
        "\nz: {}{}{}\n",
        (0..95).map(|i| format!("&z{i} [")).collect::<String>(),
        ["*e"; 7].join(","),
        "]".repeat(95)
    ));
    // A hundred thousand anchors, each alias to the first (quadratic, once, to look up).
    let aliases = format!("{}{}", "- &a x\n".repeat(100_000), "- *a\n".repeat(100_000))
        .replacen("&a", "&first", 1)
        .replace("*a", "*first");
    for stream in [deep, laughs, deep_json, nested, aliases] {
        let outcome = inject_stdin(&[], &stream);
        outcome
            .expect_code(2)
            .expect_faster_than(Duration::from_secs(10));
        assert_eq!(outcome.stdout, "");
        assert!(!outcome.stderr.contains("panicked"), "{outcome:#?}");
    }
}

/// What inject writes runs: the wait init container's command line waits for a real listener
/// and the readygate startup probe's passes against it (readygate in place of /readygate).
#[test]
fn injected_commands_run() {
    let dir = TempDir::new();
    let ready = dir.join("ready");
    std::fs::write(&ready, "").unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let stream = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    \
         readygate.dev/wait-for: tcp://127.0.0.1:{port}\n    readygate.dev/wait-timeout: 10s\n    \
         readygate.dev/startup-probe.app: file://{}\nspec:\n  containers: [{{name: app, image: b}}]\n",
        ready.display()
    );
    let outcome = inject_stdin(&[], &stream);
    outcome.expect_code(0);
    let pod = &YamlLoader::load_from_str(&outcome.stdout).unwrap()[0];
    let init = pod["spec"]["initContainers"].as_vec().unwrap();
    let names: Vec<&str> = init.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["readygate-install", "readygate-wait"]);
    let argv = |list: &Yaml| -> Vec<String> {
        list.as_vec()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect()
    };
    let wait = argv(&init[1]["command"]);
    let probe = argv(&pod["spec"]["containers"][0]["startupProbe"]["exec"]["command"]);
    for command in [wait, probe] {
        let outcome = Command::new(env!("CARGO_BIN_EXE_readygate"))
            .args(&command[1..])
            .stdin(Stdio::null())
            .outcome();
        outcome.expect_code(0);
    }
    drop(listener);
}

/// `--output patch` counts documents as the manifests do (a document of comments only is one),
/// and writes nothing on bad input either.
#[test]
fn patch_errors_name_the_same_document() {
    let stream = "# only a comment\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  \
                  annotations:\n    readygate.dev/wait-for: \"x//y\"\nspec: {containers: [{name: a}]}\n";
    for options in [&[][..], &["--output", "patch"][..]] {
        let outcome = inject_stdin(options, stream);
        outcome
            .expect_code(2)
            .expect_stderr("document 2 (Pod p): metadata.annotations[readygate.dev/wait-for]");
        assert_eq!(outcome.stdout, "", "{options:?}");
    }
}

/// A pod as the cluster stores it after the webhook, the API server and a policy webhook had it
/// (tests/inject/admitted.yaml, kubectl's layout): injecting it again with the webhook's options
/// changes no byte and patches nothing. With its targets changed, the gate alone is replaced.
#[test]
fn an_admitted_pod_is_left_as_it_is() {
    let proxy = golden("proxy.yaml");
    let admitted = golden("admitted.yaml");
    let options = ["--sidecar", path(&proxy), "--mode", "universal"];
    let written = inject(&[&options[..], &[path(&admitted)]].concat());
    assert_eq!(written, read(&admitted), "inject changed the admitted pod");
    let patch = inject(&[&options[..], &["--output", "patch", path(&admitted)]].concat());
    assert_eq!(patch, "[]\n");

    let changed = read(&admitted).replace(
        "wait-for: postgres://db:5432 tcp://cache:6379",
        "wait-for: tcp://cache:6379",
    );
    let patched = inject_stdin(&[&options[..], &["--output", "patch"]].concat(), &changed);
    patched.expect_code(0);
    let ops: Vec<serde_json::Value> = serde_json::from_str(&patched.stdout).unwrap();
    let gate = "/spec/initContainers/2/";
    assert!(
        ops.iter()
            .all(|op| op["path"].as_str().unwrap().starts_with(gate)),
        "{ops:?}"
    );
    let command = serde_json::json!(["/readygate", "wait", "--timeout", "2m", "tcp://cache:6379"]);
    assert!(
        ops.iter().any(|op| op["op"] == "replace"
            && op["path"] == format!("{gate}command")
            && op["value"] == command),
        "{ops:?}"
    );
}
