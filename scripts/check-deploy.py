"""Checks the rendered deploy/ overlays (scripts/check-deploy.sh renders them into WORK).

Every object must validate, strictly, against the Kubernetes API's schemas; the images: override
must reach every readygate container; volumes, ConfigMaps and the installer must be where the
containers that use them expect them; each overlay must do what its recipe says (the examples/
manifest of the same recipe); and the real binary must accept every readygate command line with
the environment its ConfigMaps give it (run in a network namespace of its own, so no attempt
leaves this machine). examples/ is checked for the first two (the test suite runs its command
lines). Usage: check-deploy.py READYGATE WORK OVERLAY...
"""

import os
import signal
import subprocess
import sys

import kubernetes_validate
import yaml

KUBERNETES = "1.32.0"
IMAGE = "ghcr.io/readygate/readygate:0.1.0"
PINNED = "registry.example.com/mirror/readygate@sha256:" + "0" * 64

failures = []


def fail(overlay, message):
    failures.append(f"{overlay}: {message}")


def load(path):
    with open(path) as file:
        return [doc for doc in yaml.safe_load_all(file) if doc]


def validate(overlay, docs):
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, KUBERNETES, strict=True)
        except Exception as err:  # the library's errors have no common base worth naming
            fail(overlay, f"{doc['kind']} {doc['metadata']['name']} is not valid: {err}")


def invocation(container):
    """The readygate argv a container runs (without the binary), if it runs readygate."""
    command = container.get("command") or []
    args = container.get("args") or []
    if command and command[0].endswith("/readygate"):
        return command[1:] + args
    if not command and container["image"] in (IMAGE, PINNED):
        return args
    return None


def environment(container, configmaps):
    env = {}
    for source in container.get("envFrom", []):
        env.update(configmaps[source["configMapRef"]["name"]])
    for variable in container.get("env", []):
        env[variable["name"]] = variable.get("value", "")
    return env


def run(overlay, readygate, argv, env):
    """readygate ARGV in a network namespace: a probe must end not ready (1), a wait must start
    waiting (its first attempt logged) and end by SIGTERM (143); 2 is a usage error."""
    env = {**env, "PATH": os.environ["PATH"], "READYGATE_VERBOSE": "true"}
    command = ["unshare", "--net", readygate] + argv
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if argv[0] == "wait":
        first = process.stderr.readline()
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
        err = first + err
        expected = 128 + signal.SIGTERM
    else:
        out, err = process.communicate(timeout=30)
        expected = 1
    if process.returncode != expected:
        fail(overlay, f"readygate {' '.join(argv)} with {env} exited {process.returncode}, not {expected}: {out}{err}")


def restricted(overlay, where, container, pod):
    """A readygate container is admitted at Pod Security "restricted" and sized, whatever the
    pod around it sets (pod-level settings count where the container sets none)."""
    own = container.get("securityContext", {})
    pod = pod or {}
    either = lambda key: own.get(key, pod.get(key))
    faults = []
    if either("runAsNonRoot") is not True:
        faults.append("runAsNonRoot is not true")
    if (either("seccompProfile") or {}).get("type") != "RuntimeDefault":
        faults.append("seccompProfile is not RuntimeDefault")
    if own.get("allowPrivilegeEscalation") is not False:
        faults.append("allowPrivilegeEscalation is not false")
    if "ALL" not in own.get("capabilities", {}).get("drop", []):
        faults.append("capabilities.drop lacks ALL")
    resources = container.get("resources", {})
    for kind, key in (("requests", "cpu"), ("requests", "memory"), ("limits", "memory")):
        if key not in resources.get(kind, {}):
            faults.append(f"no resources.{kind}.{key}")
    for fault in faults:
        fail(overlay, f"{where}: {fault}")


def check_pod(overlay, readygate, name, spec, configmaps, pinned, runs_lines):
    init = spec.get("initContainers", [])
    containers = init + spec.get("containers", [])
    volumes = {volume["name"] for volume in spec.get("volumes", [])}
    want = PINNED if pinned else IMAGE
    installers = {}
    for index, container in enumerate(containers):
        where = f"{name}/{container['name']}"
        if "readygate" in container["image"] and container["image"] != want:
            fail(overlay, f"{where} runs {container['image']}, not {want}")
        if "readygate" in container["image"]:
            restricted(overlay, where, container, spec.get("securityContext"))
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                fail(overlay, f"{where} mounts {mount['name']}, which is no volume")
        for source in container.get("envFrom", []) if configmaps is not None else []:
            if source["configMapRef"]["name"] not in configmaps:
                fail(overlay, f"{where} reads ConfigMap {source['configMapRef']['name']}, which is not rendered")
        argv = invocation(container)
        if argv and argv[0] == "install":
            installers[argv[1]] = index
    for index, container in enumerate(containers):
        where = f"{name}/{container['name']}"
        runs = [(container.get("command") or [None])[0]]
        probe = container.get("startupProbe", {}).get("exec", {}).get("command")
        if probe:
            runs.append(probe[0])
        for binary in filter(None, runs):
            folder = os.path.dirname(binary)
            # The image's own /readygate needs no installing.
            if not binary.endswith("/readygate") or binary == "/readygate":
                continue
            if folder not in installers:
                fail(overlay, f"{where} runs {binary}, which no init container installs")
            elif index < len(init) and installers[folder] > index:
                fail(overlay, f"{where} runs {binary} before the init container that installs it")
            mounted = [m["mountPath"] for m in container.get("volumeMounts", [])]
            if folder not in mounted:
                fail(overlay, f"{where} runs {binary} without mounting {folder}")
        if pinned or not runs_lines:
            continue
        env = environment(container, configmaps)
        argv = invocation(container)
        if argv and argv[0] != "install":
            run(overlay, readygate, argv, env)
        if probe:
            run(overlay, readygate, probe[1:], env)


def recipe(overlay, spec):
    """What the overlay's recipe does, as its examples/ manifest does."""
    init = spec.get("initContainers", [])
    app = {c["name"]: c for c in spec["containers"]}.get("app")
    if overlay == "init-container-gate":
        gates = [c for c in init if (invocation(c) or [""])[0] == "wait"]
        if not gates:
            fail(overlay, "no init container runs readygate wait")
    elif overlay == "native-sidecar":
        sidecars = [c for c in init if c.get("restartPolicy") == "Always"]
        probes = [c.get("startupProbe", {}).get("exec", {}).get("command", []) for c in sidecars]
        if not any(p[:1] and p[0].endswith("/readygate") and p[1:2] == ["probe"] for p in probes):
            fail(overlay, "no built-in sidecar has a startupProbe that runs readygate probe")
    elif overlay == "examples":
        pass  # tests/it/examples.rs and tests/containers/ run these
    elif overlay == "install-and-wrap":
        argv = invocation(app) if app else None
        if not argv or argv[0] != "wait" or "--" not in argv or argv.index("--") == len(argv) - 1:
            fail(overlay, f"the app's command is not readygate wait … -- COMMAND: {app and app.get('command')}")
    else:
        fail(overlay, "an overlay this check does not know: say what its recipe must do here")


def only_the_named_workload(overlay, work, docs):
    """A deploy/ overlay changes the workload its target names, `web`, and nothing else: alone it
    renders its ConfigMap only; beside the user's manifests, their other Deployment comes out as
    it went in."""
    alone = [d["kind"] for d in load(f"{work}/{overlay}-alone.yaml")]
    if any(kind != "ConfigMap" for kind in alone):
        fail(overlay, f"alone, it renders {alone}: it must create nothing but its ConfigMap")
    theirs = {d["metadata"]["name"]: d for d in load(f"{work}/workload.yaml")}
    rendered = {d["metadata"]["name"]: d for d in docs if d["kind"] != "ConfigMap"}
    if sorted(rendered) != sorted(theirs):
        fail(overlay, f"renders {sorted(rendered)}, not the user's {sorted(theirs)}")
    if rendered.get("app") != theirs["app"]:
        fail(overlay, "changed the Deployment app, which its target does not name")
    if rendered.get("web") == theirs["web"]:
        fail(overlay, "left the Deployment web, which its target names, unchanged")


def doctor_rbac(overlay, docs):
    """The grants docs/cli.md says doctor needs, and no more."""
    roles = {d["metadata"]["name"]: d["rules"] for d in docs if d["kind"] == "ClusterRole"}
    granted = set()
    for rules in roles.values():
        for rule in rules:
            for verb in rule["verbs"]:
                for what in rule.get("resources", []) + rule.get("nonResourceURLs", []):
                    granted.add((verb, what))
    wanted = {("get", "/version"), ("get", "/metrics"), ("list", "nodes"), ("get", "nodes/proxy"),
              ("get", "namespaces"), ("list", "mutatingwebhookconfigurations"), ("create", "pods")}
    if granted != wanted:
        fail(overlay, f"doctor's roles grant {sorted(granted)}, not {sorted(wanted)}")
    bindings = [d for d in docs if d["kind"] == "RoleBinding" and d["roleRef"]["name"] == "readygate-doctor-dry-run"]
    if not bindings:
        fail(overlay, "pods create is not bound by a RoleBinding (one namespace only)")


def main():
    readygate, work, *overlays = sys.argv[1:]
    for path in overlays:
        overlay = os.path.basename(path.rstrip("/"))
        if path.startswith("deploy/"):
            only_the_named_workload(overlay, work, load(f"{work}/{overlay}.yaml"))
        for pinned in (False, True):
            rendered = f"{work}/{overlay}{'-pinned' if pinned else ''}.yaml"
            docs = load(rendered)
            validate(overlay, docs)
            if pinned and "ghcr.io/readygate" in open(rendered).read():
                fail(overlay, "the images: override left ghcr.io/readygate behind")
            configmaps = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d["kind"] == "ConfigMap"}
            workloads = [d for d in docs if d["kind"] in ("Pod", "Deployment", "StatefulSet", "DaemonSet", "Job")]
            if not workloads:
                fail(overlay, "renders no workload")
            for doc in workloads:
                if overlay != "examples" and doc["metadata"]["name"] != "web":
                    continue  # the user's other workload: only_the_named_workload
                spec = doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["template"]["spec"]
                # examples/ Secrets and Services are the cluster's, not rendered here.
                known = configmaps if overlay != "examples" else None
                check_pod(overlay, readygate, doc["metadata"]["name"], spec, known, pinned, overlay != "examples")
                recipe(overlay, spec)
        print(f"deploy: {overlay}: rendered, valid against Kubernetes {KUBERNETES}, checked")
    doctor = load(f"{work}/doctor-rbac.yaml")
    validate("doctor", doctor)
    doctor_rbac("doctor", doctor)
    print(f"deploy: doctor: rendered, valid against Kubernetes {KUBERNETES}, grants checked")
    for failure in failures:
        print(f"deploy: FAILED: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


main()
