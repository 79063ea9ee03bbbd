//! A pod in real containers: played by `podman kube play`, or driven in the order the kubelet
//! starts one where podman cannot play the manifest (podman rejects init containers with
//! probes or hooks, and has no Jobs): init containers one at a time, each to its end; a
//! built-in sidecar started, its postStart hook run and its startupProbe exec'd every
//! periodSeconds until it passes, before anything after it starts; regular containers in
//! order, each postStart hook run to its end before the next one starts. As the kubelet does,
//! it gives containers their Secrets' values and expands `$(VAR)` in commands and arguments,
//! and can mount a service account with the API server's address. Every pod gets its own
//! network namespace with loopback only (`--network none`), or, to reach a stand-in API server,
//! the host's (which serves on 127.0.0.1 only). Each step goes on a timeline that the tests
//! check and print.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use super::images;
use super::manifest::{Container, EnvValue, Manifest, Probe};
use super::sandbox::{podman, podman_ok, run_within, sandbox, Finished, PODMAN_LIMIT};

/// The kind of node the pod lands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kubelet {
    /// 1.29+: an init container with `restartPolicy: Always` is a built-in sidecar.
    BuiltInSidecars,
    /// Before 1.28: an init container's `restartPolicy` and `startupProbe` are ignored, so it
    /// runs once to its end like any init container.
    NoBuiltInSidecars,
}

/// How long an init container may take to finish.
const INIT_LIMIT: Duration = Duration::from_secs(60);

/// Something to do once, when a given container holds the pod.
type OnHeld = Box<dyn FnOnce(&mut Pod)>;

/// Where the kubelet mounts a pod's service account.
const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// A pod of one manifest; removed with its volumes when dropped.
pub struct Pod {
    pub name: String,
    manifest: Manifest,
    started: Instant,
    /// Each step with the seconds since the pod was made.
    timeline: Vec<(f64, String)>,
    /// Containers started that the manifest does not name (services outside the pod).
    extras: Vec<String>,
    /// `(secret, key, value)`: the Secrets the pod's environment may name.
    secrets: Vec<(String, String, String)>,
    /// The service account folder and the API server's port on 127.0.0.1.
    service_account: Option<(PathBuf, u16)>,
    /// A container, and what to do when it first holds the pod.
    when_held: Option<(String, OnHeld)>,
}

impl Pod {
    /// An empty pod for `manifest`, named `NAME-SUFFIX`, with its emptyDir volumes, in a network
    /// namespace of its own with loopback only.
    pub fn new(manifest: &Manifest, suffix: &str) -> Pod {
        Pod::with_network(manifest, suffix, "none")
    }

    /// As `new`, in the host's network namespace (`host`) or a new one (`none`).
    pub fn with_network(manifest: &Manifest, suffix: &str, network: &str) -> Pod {
        provide_images(manifest);
        let pod = Pod::bare(&format!("{}-{suffix}", manifest.name), manifest, network);
        for volume in &manifest.empty_dirs {
            let volume = pod.volume(volume);
            let _ = podman(&["volume", "rm", "--force", &volume]);
            podman_ok(&["volume", "create", &volume]);
        }
        pod
    }

    /// Creates the pod itself, after removing any leftover of the same name.
    fn bare(name: &str, manifest: &Manifest, network: &str) -> Pod {
        let _ = podman(&["pod", "rm", "--force", "--time", "0", name]);
        podman_ok(&["pod", "create", "--name", name, "--network", network]);
        Pod::named(name, manifest)
    }

    fn named(name: &str, manifest: &Manifest) -> Pod {
        Pod {
            name: name.to_string(),
            manifest: manifest.clone(),
            started: Instant::now(),
            timeline: Vec::new(),
            extras: Vec::new(),
            secrets: Vec::new(),
            service_account: None,
            when_held: None,
        }
    }

    /// A pod with no manifest, for the image's own cases.
    pub fn empty(name: &str) -> Pod {
        images::built();
        let manifest = Manifest {
            file: "(no manifest)".into(),
            text: String::new(),
            kind: "Pod".into(),
            name: name.into(),
            replicas: 1,
            init_containers: Vec::new(),
            containers: Vec::new(),
            empty_dirs: Vec::new(),
        };
        Pod::bare(name, &manifest, "none")
    }

    /// Plays `manifest` with `podman kube play`, adding `restartPolicy: OnFailure`: with the
    /// default, Always, podman 4.3 restarts the finished init container, cannot remove it
    /// then, and never starts the pod's containers.
    pub fn play(manifest: &Manifest) -> Pod {
        assert_eq!(
            manifest.kind, "Pod",
            "{}: only Pods can be played",
            manifest.file
        );
        provide_images(manifest);
        let spec_lines = manifest.text.lines().filter(|l| *l == "spec:").count();
        assert_eq!(
            spec_lines, 1,
            "{}: one top-level spec expected",
            manifest.file
        );
        let text = manifest
            .text
            .replacen("\nspec:\n", "\nspec:\n  restartPolicy: OnFailure\n", 1);
        let path = sandbox().join(&manifest.file);
        std::fs::write(&path, text).unwrap();
        let _ = podman(&["pod", "rm", "--force", "--time", "0", &manifest.name]);
        let mut pod = Pod::named(&manifest.name, manifest);
        let played = podman(&["kube", "play", "--network", "none", path.to_str().unwrap()]);
        pod.step(format!("podman kube play: exit {}", played.code));
        if played.code != 0 {
            pod.fail(&format!("podman kube play failed:\n{}", played.output()));
        }
        pod
    }

    /// Gives the pod a Secret's key, for `valueFrom.secretKeyRef`.
    pub fn secret(&mut self, secret: &str, key: &str, value: &str) {
        self.secrets.push((secret.into(), key.into(), value.into()));
    }

    /// Mounts `dir` as the pod's service account and points `KUBERNETES_SERVICE_HOST` and
    /// `_PORT` at 127.0.0.1:`port`, as the kubelet does for the cluster's API server.
    pub fn service_account(&mut self, dir: PathBuf, port: u16) {
        self.service_account = Some((dir, port));
    }

    /// Runs `then` once, when `container` first holds the pod: its startupProbe fails, or, an
    /// init container, it is still running once started. The driver fails if it never does.
    pub fn when_held(&mut self, container: &str, then: impl FnOnce(&mut Pod) + 'static) {
        self.when_held = Some((container.into(), Box::new(then)));
    }

    /// Whether a `when_held` action waits for `container`.
    fn awaits_hold_by(&self, container: &str) -> bool {
        let awaited = self.when_held.as_ref().map(|(name, _)| name.as_str());
        awaited == Some(container)
    }

    /// Runs the `when_held` action if `container` is the one it waits for.
    fn held(&mut self, container: &str) {
        if self.awaits_hold_by(container) {
            let (_, then) = self.when_held.take().unwrap();
            self.step(format!("{container} holds the pod"));
            then(self);
        }
    }

    /// Starts a container the manifest does not name, in the pod's network (a service that
    /// would be elsewhere in a cluster): `run_args` are `podman run`'s, from the options on.
    pub fn start_extra(&mut self, name: &str, run_args: &[&str]) {
        let container = self.container(name);
        let mut command = vec!["run", "--detach", "--pod", &self.name, "--name", &container];
        command.extend(run_args);
        podman_ok(&command);
        self.extras.push(name.to_string());
        self.step(format!("start {name} (not in the manifest)"));
    }

    /// Starts the pod as the kubelet does; returns once the last container has started.
    pub fn drive(&mut self, kubelet: Kubelet) {
        let manifest = self.manifest.clone();
        for init in &manifest.init_containers {
            let sidecar = init.sidecar && kubelet == Kubelet::BuiltInSidecars;
            self.create(init, sidecar);
            self.start(&init.name);
            if !sidecar {
                if self.awaits_hold_by(&init.name) {
                    // An init container holds the pod while it runs.
                    if self.state(&init.name).0 != "running" {
                        self.fail(&format!("{} ended at once: it held nothing", init.name));
                    }
                    self.held(&init.name);
                }
                let code = self.wait_exit(&init.name, INIT_LIMIT);
                if code != 0 {
                    self.fail(&format!("init container {} failed", init.name));
                }
                continue;
            }
            if let Some(hook) = &init.post_start {
                self.post_start(&init.name, hook);
            }
            if let Some(probe) = &init.startup_probe {
                self.probe_until_started(&init.name, probe);
            }
        }
        for container in &manifest.containers {
            self.create(container, false);
            self.start(&container.name);
            if let Some(hook) = &container.post_start {
                self.post_start(&container.name, hook);
            }
        }
        if let Some((name, _)) = &self.when_held {
            self.fail(&format!("{name} never held the pod"));
        }
    }

    /// A Job's end: waits for every regular container to exit, then (built-in sidecars) stops
    /// the sidecars as the kubelet does. Returns each regular container's exit status.
    pub fn complete_job(&mut self, kubelet: Kubelet, limit: Duration) -> Vec<(String, i32)> {
        let manifest = self.manifest.clone();
        let codes = manifest
            .containers
            .iter()
            .map(|c| (c.name.clone(), self.wait_exit(&c.name, limit)))
            .collect();
        if kubelet == Kubelet::BuiltInSidecars {
            for sidecar in manifest.init_containers.iter().filter(|c| c.sidecar) {
                podman_ok(&["stop", "--time", "5", &self.container(&sidecar.name)]);
                self.step(format!(
                    "stop {} (the Job's containers are done)",
                    sidecar.name
                ));
            }
        }
        codes
    }

    fn create(&mut self, c: &Container, sidecar: bool) {
        let name = self.container(&c.name);
        let mut args: Vec<String> = ["create", "--pod", &self.name, "--name", &name]
            .map(String::from)
            .to_vec();
        if sidecar {
            // restartPolicy: Always, as the kubelet restarts a built-in sidecar.
            args.extend(["--restart".into(), "always".into()]);
        }
        for mount in &c.mounts {
            let ro = if mount.read_only { ":ro" } else { "" };
            args.push("--volume".into());
            args.push(format!("{}:{}{ro}", self.volume(&mount.volume), mount.path));
        }
        let mut env = Vec::new();
        if let Some((dir, port)) = &self.service_account {
            args.push("--volume".into());
            args.push(format!("{}:{SERVICE_ACCOUNT_DIR}:ro", dir.display()));
            env.push((
                "KUBERNETES_SERVICE_HOST".to_string(),
                "127.0.0.1".to_string(),
            ));
            env.push(("KUBERNETES_SERVICE_PORT".to_string(), port.to_string()));
        }
        for (name, value) in &c.env {
            let value = match value {
                EnvValue::Literal(value) => value.clone(),
                EnvValue::Secret { name: secret, key } => self
                    .secrets
                    .iter()
                    .find(|(s, k, _)| s == secret && k == key)
                    .map(|(_, _, value)| value.clone())
                    .unwrap_or_else(|| self.fail(&format!("no Secret {secret} key {key} given"))),
            };
            env.push((name.clone(), value));
        }
        for (name, value) in &env {
            args.push("--env".into());
            args.push(format!("{name}={value}"));
        }
        if !c.command.is_empty() {
            // `command` replaces the image's ENTRYPOINT and drops its CMD, as in Kubernetes.
            args.push("--entrypoint".into());
            let command: Vec<String> = c.command.iter().map(|a| expand(a, &env)).collect();
            args.push(json_array(&command));
        }
        args.push(c.image.clone());
        args.extend(c.args.iter().map(|a| expand(a, &env)));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        podman_ok(&args);
    }

    fn start(&mut self, name: &str) {
        podman_ok(&["start", &self.container(name)]);
        self.step(format!("start {name}"));
    }

    fn post_start(&mut self, name: &str, hook: &[String]) {
        let run = self.exec(name, hook, Duration::from_secs(120));
        self.step(format!(
            "postStart {name}: exit {}{}",
            run.code,
            last_line(&run)
        ));
        if run.code != 0 {
            self.fail(&format!("the postStart hook of {name} failed"));
        }
    }

    fn probe_until_started(&mut self, name: &str, probe: &Probe) {
        for _ in 0..probe.failure_threshold {
            let run = self.exec(name, &probe.command, Duration::from_secs(30));
            self.step(format!(
                "startupProbe {name}: exit {}{}",
                run.code,
                last_line(&run)
            ));
            if run.code == 0 {
                return;
            }
            self.held(name);
            // The kubelet's probe period: this paces the probe, it synchronises nothing.
            thread::sleep(probe.period);
        }
        self.fail(&format!("the startupProbe of {name} never passed"));
    }

    /// The kubelet's `httpGet` probe: a GET from the node into the pod's network namespace (its
    /// loopback: the pod has no other address here), by curl: the status (0 when nothing
    /// answered) and the body.
    pub fn http_get(&self, port: u16, path: &str) -> (u16, String) {
        let infra = podman_ok(&[
            "pod",
            "inspect",
            "--format",
            "{{.InfraContainerID}}",
            &self.name,
        ]);
        let pid = podman_ok(&["inspect", "--format", "{{.State.Pid}}", &infra]);
        let url = format!("http://127.0.0.1:{port}{path}");
        let args = [
            "--target",
            &pid,
            "--net",
            "curl",
            "--silent",
            "--max-time",
            "5",
            "--user-agent",
            "kube-probe/1.29",
            "--write-out",
            "\n%{http_code}",
            &url,
        ];
        let run = run_within("nsenter", &args, Duration::from_secs(30))
            .unwrap_or_else(|| self.fail(&format!("GET {url} in the pod hung")));
        let (body, status) = run.stdout.rsplit_once('\n').unwrap_or(("", &run.stdout));
        (status.trim().parse().unwrap_or(0), body.to_string())
    }

    /// `podman exec` in one of the pod's containers, as the kubelet runs probes and hooks.
    pub fn exec(&self, name: &str, argv: &[String], limit: Duration) -> Finished {
        let container = self.container(name);
        let mut args = vec!["exec", container.as_str()];
        args.extend(argv.iter().map(String::as_str));
        run_within("podman", &args, limit).unwrap_or_else(|| {
            self.fail(&format!(
                "`podman {}` took more than {limit:?}",
                args.join(" ")
            ))
        })
    }

    /// Waits for a container to exit and returns its status.
    pub fn wait_exit(&mut self, name: &str, limit: Duration) -> i32 {
        let container = self.container(name);
        let Some(waited) = run_within("podman", &["wait", &container], limit) else {
            self.fail(&format!("{name} did not exit within {limit:?}"))
        };
        let code = waited
            .stdout
            .trim()
            .parse()
            .unwrap_or_else(|_| self.fail(&format!("podman wait {name}: {}", waited.output())));
        self.step(format!("exit {name}: {code}"));
        code
    }

    /// Waits until a container's log holds `text`, notes that line, and returns the log.
    pub fn wait_for_log(&mut self, name: &str, text: &str, limit: Duration) -> String {
        let mut log = String::new();
        // Each look runs `podman logs`: five a second are enough.
        let every = Duration::from_millis(200);
        let logged = crate::support::events::poll_until(limit, every, || {
            log = self.logs(name);
            log.contains(text)
        });
        match log.lines().find(|line| line.contains(text)) {
            Some(line) if logged.is_some() => {
                self.step(format!("log {name}: {}", line.trim()));
                log
            }
            _ => self.fail(&format!("{name} did not log {text:?} within {limit:?}")),
        }
    }

    /// A container's output so far, stdout and stderr.
    pub fn logs(&self, name: &str) -> String {
        podman(&["logs", &self.container(name)]).output()
    }

    /// A container's state: `running`, `exited`, ... and its restart count.
    pub fn state(&self, name: &str) -> (String, u32) {
        let format = "{{.State.Status}} {{.RestartCount}}";
        let out = podman_ok(&["inspect", "--format", format, &self.container(name)]);
        let (status, restarts) = out.split_once(' ').unwrap_or((&out, "0"));
        (status.to_string(), restarts.parse().unwrap_or(0))
    }

    /// A file in one of the pod's emptyDir volumes, read from the host.
    pub fn volume_file(&self, volume: &str, path: &str) -> Option<String> {
        let format = "{{.Mountpoint}}";
        let mountpoint = podman_ok(&[
            "volume",
            "inspect",
            "--format",
            format,
            &self.volume(volume),
        ]);
        std::fs::read_to_string(PathBuf::from(mountpoint).join(path)).ok()
    }

    /// Notes a step on the timeline.
    pub fn step(&mut self, what: String) {
        self.timeline
            .push((self.started.elapsed().as_secs_f64(), what));
    }

    /// The timeline's index of the first step that starts with `prefix`.
    pub fn position(&self, prefix: &str) -> usize {
        self.timeline
            .iter()
            .position(|(_, step)| step.starts_with(prefix))
            .unwrap_or_else(|| self.fail(&format!("no step {prefix:?} on the timeline")))
    }

    /// The timeline's steps that start with `prefix`.
    pub fn steps(&self, prefix: &str) -> Vec<&str> {
        self.timeline
            .iter()
            .map(|(_, step)| step.as_str())
            .filter(|step| step.starts_with(prefix))
            .collect()
    }

    /// Asserts that step `first` came before step `then`.
    pub fn assert_before(&self, first: &str, then: &str) {
        if self.position(first) >= self.position(then) {
            self.fail(&format!("{first:?} should come before {then:?}"));
        }
    }

    /// Prints what happened, for the test's output.
    pub fn print_timeline(&self) {
        println!("  {} ({}):", self.name, self.manifest.file);
        for (at, step) in &self.timeline {
            println!("    {at:6.2}s {step}");
        }
    }

    /// Fails the test with the timeline and every container's state and log.
    pub fn fail(&self, why: &str) -> ! {
        let mut report = format!("{}: {why}\ntimeline:\n", self.manifest.file);
        for (at, step) in &self.timeline {
            writeln!(report, "  {at:6.2}s {step}").unwrap();
        }
        let names = self
            .manifest
            .init_containers
            .iter()
            .chain(&self.manifest.containers)
            .map(|c| c.name.clone())
            .chain(self.extras.iter().cloned());
        for name in names {
            let container = self.container(&name);
            let state = podman(&[
                "inspect",
                "--format",
                "{{.State.Status}} {{.State.ExitCode}}",
                &container,
            ]);
            writeln!(report, "--- {name}: {}", state.output().trim()).unwrap();
            report.push_str(&self.logs(&name));
        }
        panic!("{report}");
    }

    fn container(&self, name: &str) -> String {
        format!("{}-{name}", self.name)
    }

    fn volume(&self, name: &str) -> String {
        format!("{}-{name}", self.name)
    }
}

impl Drop for Pod {
    fn drop(&mut self) {
        let _ = run_within(
            "podman",
            &["pod", "rm", "--force", "--time", "0", &self.name],
            PODMAN_LIMIT,
        );
        for volume in &self.manifest.empty_dirs {
            let volume = self.volume(volume);
            let _ = run_within(
                "podman",
                &["volume", "rm", "--force", &volume],
                PODMAN_LIMIT,
            );
        }
    }
}

/// Tags a stand-in (or readygate's image) under every image name the manifest uses.
fn provide_images(manifest: &Manifest) {
    for container in manifest.init_containers.iter().chain(&manifest.containers) {
        images::provide(&container.image);
    }
}

/// The kubelet's expansion of `$(VAR)` in a command or argument: a variable of the container's
/// environment is replaced by its value, any other reference stays as written, `$$` is `$`.
fn expand(text: &str, env: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("$$") {
            out.push('$');
            rest = after;
            continue;
        }
        let reference = rest
            .strip_prefix("$(")
            .and_then(|inner| inner.split_once(')'))
            .and_then(|(name, after)| Some((env.iter().find(|(n, _)| n == name)?, after)));
        match reference {
            Some(((_, value), after)) => {
                out.push_str(value);
                rest = after;
            }
            None => {
                out.push('$');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `podman --entrypoint` takes a JSON array for an argv.
fn json_array(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|item| {
            let escaped = item.replace('\\', "\\\\").replace('"', "\\\"");
            format!("\"{escaped}\"")
        })
        .collect();
    format!("[{}]", quoted.join(","))
}

/// ": LAST LINE" of a command's stdout, else of its stderr, if any: a probe's reason, a hook's
/// last log line.
fn last_line(run: &Finished) -> String {
    let last = |text: &str| {
        text.lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .map(|line| format!(": {}", line.trim()))
    };
    last(&run.stdout)
        .or_else(|| last(&run.stderr))
        .unwrap_or_default()
}
