"""Checks the rendered deploy/ overlays (scripts/check-deploy.sh renders them into WORK).

Every object must validate, strictly, against the Kubernetes API's schemas; the images: override
must reach every readygate container; volumes, ConfigMaps and the installer must be where the
containers that use them expect them; each overlay must do what its recipe says (the examples/
manifest of the same recipe); and the real binary must accept every readygate command line with
the environment its ConfigMaps give it (run in a network namespace of its own, so no attempt
leaves this machine). examples/ is checked for the first two (the test suite runs its command
lines). Usage: check-deploy.py READYGATE WORK OVERLAY...
"""

import base64
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


def k8s_wait_rbac(overlay, docs):
    """Only get and watch, each on objects by name: what k8s:// targets need."""
    for doc in docs:
        if doc["kind"] not in ("Role", "ClusterRole"):
            continue
        for rule in doc["rules"]:
            if sorted(rule["verbs"]) != ["get", "watch"] or not rule.get("resourceNames"):
                fail(overlay, f"{doc['kind']} {doc['metadata']['name']} grants {rule}, not get and watch by name")


# Kinds of cert-manager's CRDs, which kubernetes-validate has no schema for: checked by hand.
CERT_MANAGER = ("Certificate", "Issuer")


def check_webhook(name, docs, cluster, auto, source):
    """What the webhook's install must be, from kustomize or Helm: two restricted replicas
    behind a PodDisruptionBudget and a Service, a MutatingWebhookConfiguration that never
    blocks (Ignore) or its own namespace, a certificate that names the Service and reaches the
    pods and the caBundle, nodes list/watch granted only for auto, and a command line the real
    readygate-cluster accepts."""
    by_kind = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], []).append(doc)
    validate(name, [d for d in docs if d["kind"] not in CERT_MANAGER])
    one = lambda kind: (by_kind.get(kind) or [None])[0]
    deployment, service, pdb = one("Deployment"), one("Service"), one("PodDisruptionBudget")
    hook, account = one("MutatingWebhookConfiguration"), one("ServiceAccount")
    if None in (deployment, service, pdb, hook, account):
        return fail(name, f"renders {sorted(by_kind)}: a Deployment, Service, PodDisruptionBudget, ServiceAccount and MutatingWebhookConfiguration are needed")
    namespace = deployment["metadata"]["namespace"]
    pod = deployment["spec"]["template"]
    spec = pod["spec"]
    labels = pod["metadata"]["labels"]
    picks = lambda selector: all(labels.get(k) == v for k, v in selector.items())
    if deployment["spec"]["replicas"] < 2:
        fail(name, "fewer than two replicas")
    if not picks(pdb["spec"]["selector"]["matchLabels"]) or pdb["spec"].get("minAvailable") != 1:
        fail(name, "the PodDisruptionBudget does not keep one of the webhook's pods")
    if not picks(service["spec"]["selector"]):
        fail(name, "the Service does not select the webhook's pods")
    container = spec["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    if service["spec"]["ports"][0]["targetPort"] not in ports:
        fail(name, "the Service's targetPort is no port of the container")
    for c in spec["containers"]:
        restricted(name, f"webhook/{c['name']}", c, spec.get("securityContext"))
        if c.get("securityContext", {}).get("readOnlyRootFilesystem") is not True:
            fail(name, f"webhook/{c['name']}: the root file system is not read-only")
    if spec.get("serviceAccountName") != account["metadata"]["name"]:
        fail(name, "the pods do not run as the ServiceAccount rendered")
    # The webhook configuration.
    webhooks = hook["webhooks"]
    for webhook in webhooks:
        where = f"webhook {webhook['name']}"
        want = {"failurePolicy": "Ignore", "reinvocationPolicy": "IfNeeded", "sideEffects": "None"}
        if source == "secret":
            want["failurePolicy"] = "Fail"  # as the values asked
        for key, value in want.items():
            if webhook.get(key) != value:
                fail(name, f"{where}: {key} is {webhook.get(key)}, not {value}")
        if not 3 < webhook.get("timeoutSeconds", 10) <= 10:
            fail(name, f"{where}: timeoutSeconds {webhook.get('timeoutSeconds')}: readygate answers within 3 s")
        target = webhook["clientConfig"].get("service", {})
        if (target.get("name"), target.get("namespace"), target.get("path")) != (service["metadata"]["name"], namespace, "/mutate"):
            fail(name, f"{where}: calls {target}, not the Service's /mutate")
        rules = [(r["apiGroups"], r["resources"], r["operations"]) for r in webhook["rules"]]
        if rules != [([""], ["pods"], ["CREATE"])]:
            fail(name, f"{where}: rules {rules}, not pod CREATE")
        selector = webhook.get("namespaceSelector", {})
        if selector.get("matchLabels") != {"readygate.dev/inject": "enabled"}:
            fail(name, f"{where}: namespaceSelector {selector}: not the opt-in label readygate.dev/inject=enabled")
        own = {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [namespace]}
        if own not in selector.get("matchExpressions", []):
            fail(name, f"{where}: its own namespace {namespace} is not excluded")
    # The certificate: its Secret is what the pods mount, its names the Service's.
    secret = next(v["secret"]["secretName"] for v in spec["volumes"] if "secret" in v)
    dns = f"{service['metadata']['name']}.{namespace}.svc"
    bundles = [w["clientConfig"].get("caBundle") for w in webhooks]
    if source == "cert-manager":
        certificate, issuer = one("Certificate"), one("Issuer")
        if certificate is None or issuer is None:
            return fail(name, "no cert-manager Certificate and Issuer")
        if certificate["spec"]["secretName"] != secret or dns not in certificate["spec"]["dnsNames"]:
            fail(name, f"the Certificate ({certificate['spec']}) is not for {dns} in Secret {secret}")
        if certificate["spec"]["issuerRef"]["name"] != issuer["metadata"]["name"]:
            fail(name, "the Certificate names another Issuer")
        wanted = f"{namespace}/{certificate['metadata']['name']}"
        if hook["metadata"].get("annotations", {}).get("cert-manager.io/inject-ca-from") != wanted:
            fail(name, f"no cainjector annotation inject-ca-from: {wanted}")
    elif source == "helm":
        tls = [d for d in by_kind.get("Secret", []) if d["metadata"]["name"] == secret]
        if not tls or tls[0]["type"] != "kubernetes.io/tls":
            fail(name, f"no kubernetes.io/tls Secret {secret}")
        elif bundles != [tls[0]["data"]["ca.crt"]] * len(webhooks):
            fail(name, "the caBundle is not the generated Secret's CA")
    elif not all(bundles):
        fail(name, "no caBundle from the values")
    # Least privilege: nodes list and watch for auto, nothing otherwise.
    grants = set()
    for role in by_kind.get("ClusterRole", []) + by_kind.get("Role", []):
        for rule in role["rules"]:
            grants |= {(verb, res) for verb in rule["verbs"] for res in rule.get("resources", [])}
    bound = {(b["roleRef"]["name"], s["name"]) for b in by_kind.get("ClusterRoleBinding", []) + by_kind.get("RoleBinding", []) for s in b["subjects"]}
    wanted = {("list", "nodes"), ("watch", "nodes")} if auto else set()
    if grants != wanted:
        fail(name, f"grants {sorted(grants)}, not {sorted(wanted)}")
    if auto and not any(subject == account["metadata"]["name"] for _, subject in bound):
        fail(name, "the nodes role is not bound to the webhook's ServiceAccount")
    mounts = spec.get("automountServiceAccountToken", account.get("automountServiceAccountToken", True))
    if mounts is not auto:
        fail(name, f"the service account token is {'not ' if auto else ''}mounted")
    # The real binary takes the command line (it stops at the certificate files, not there).
    command = container.get("command", []) + container.get("args", [])
    if command[:2] != ["/readygate-cluster", "webhook"]:
        fail(name, f"runs {command[:2]}, not /readygate-cluster webhook")
    else:
        run = subprocess.run(["unshare", "--net", cluster] + command[1:], capture_output=True, text=True, timeout=30)
        if run.returncode != 2 or "--tls-cert" not in run.stderr:
            fail(name, f"readygate-cluster {' '.join(command[1:])} exited {run.returncode}: {run.stderr}")
        if auto != ("--mode=auto" in command):
            fail(name, f"--mode=auto {'missing' if auto else 'given'}: {command}")


def webhook_installs(readygate, work):
    """The webhook's renders (scripts/check-deploy.sh), checked; the kustomize and Helm installs
    are the same objects."""
    cluster = os.path.join(os.path.dirname(readygate), "readygate-cluster")
    renders = {
        "kustomize": (False, "cert-manager"),
        "kustomize-pinned": (False, "cert-manager"),
        "kustomize-auto": (True, "cert-manager"),
        "helm": (False, "cert-manager"),
        "helm-pinned": (False, "cert-manager"),
        "helm-auto": (True, "helm"),
        "helm-secret": (False, "secret"),
    }
    for render, (auto, source) in renders.items():
        path = f"{work}/webhook/{render}.yaml"
        docs = load(path)
        check_webhook(f"webhook {render}", docs, cluster, auto, source)
        if render.endswith("-pinned") and ("ghcr.io/readygate" in open(path).read() or PINNED not in open(path).read()):
            fail(f"webhook {render}", f"the image is not {PINNED}")
        print(f"deploy: webhook {render}: rendered, valid against Kubernetes {KUBERNETES}, checked")
    objects = lambda render: sorted((d["kind"], d["metadata"]["name"]) for d in load(f"{work}/webhook/{render}.yaml"))
    if sorted(objects("helm") + [("Namespace", "readygate-system")]) != objects("kustomize"):
        fail("webhook", f"kustomize renders {objects('kustomize')}, Helm {objects('helm')} and the namespace (helm install --create-namespace)")


# The fields of monitoring.coreos.com/v1's PodMonitor and ServiceMonitor that a scrape of
# readygate may use (kubernetes-validate ships no schema for the Prometheus Operator's CRDs):
# each kind's spec, the list of its endpoints, and an endpoint's fields.
MONITORS = {
    "PodMonitor": ({"selector", "namespaceSelector", "podMetricsEndpoints", "jobLabel", "podTargetLabels"},
                   "podMetricsEndpoints"),
    "ServiceMonitor": ({"selector", "namespaceSelector", "endpoints", "jobLabel", "targetLabels", "podTargetLabels"},
                       "endpoints"),
}
ENDPOINT = {"port", "path", "scheme", "interval", "scrapeTimeout", "tlsConfig", "honorLabels"}
TLS = {"ca", "serverName", "insecureSkipVerify", "cert", "keySecret"}


def port_names(docs):
    """The names of the container ports of every container that runs `readygate serve`."""
    names = set()
    for doc in docs:
        spec = doc.get("spec", {})
        spec = spec.get("template", {}).get("spec", spec)
        for container in spec.get("initContainers", []) + spec.get("containers", []):
            if (invocation(container) or [""])[0] == "serve":
                names.update(p["name"] for p in container.get("ports", []) if "name" in p)
    return names


def monitors(overlay, docs, serve_ports):
    """Each monitor uses only the operator's fields, scrapes /metrics, and a PodMonitor a port
    that readygate serve's manifests name."""
    if not docs:
        fail(overlay, "renders no monitor")
    for doc in docs:
        where = f"{doc['kind']} {doc['metadata']['name']}"
        if doc.get("apiVersion") != "monitoring.coreos.com/v1" or doc["kind"] not in MONITORS:
            fail(overlay, f"{where}: not a monitoring.coreos.com/v1 PodMonitor or ServiceMonitor")
            continue
        fields, endpoints = MONITORS[doc["kind"]]
        spec = doc.get("spec", {})
        for unknown in sorted(set(spec) - fields):
            fail(overlay, f"{where}: spec.{unknown} is no field of {doc['kind']}")
        if "selector" not in spec or not spec.get(endpoints):
            fail(overlay, f"{where}: spec.selector and spec.{endpoints} are required")
        for endpoint in spec.get(endpoints, []):
            for unknown in sorted(set(endpoint) - ENDPOINT):
                fail(overlay, f"{where}: {endpoints}[].{unknown} is not a field used here")
            for unknown in sorted(set(endpoint.get("tlsConfig", {})) - TLS):
                fail(overlay, f"{where}: tlsConfig.{unknown} is no field of SafeTLSConfig")
            if endpoint.get("path") != "/metrics":
                fail(overlay, f"{where}: scrapes {endpoint.get('path')}, not /metrics")
            if doc["kind"] == "PodMonitor" and endpoint.get("port") not in serve_ports:
                fail(overlay, f"{where}: port {endpoint.get('port')} is not a port readygate serve's manifests name ({sorted(serve_ports)})")


def webhook_monitor(name, docs, labels=None):
    """A webhook install with its ServiceMonitor (components/webhook-monitoring, the chart's
    metrics.serviceMonitor): it selects the webhook's Service by its labels in its namespace,
    scrapes a port the Service names over HTTPS, checks the name the API server checks (which
    the certificate holds), and trusts the CA the webhook's caBundle holds: the Secret the
    Certificate fills, the Secret Helm generated, or a ConfigMap holding certificate.caBundle.
    `labels`: what its own labels must hold (those the chart was given)."""
    by_kind = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], []).append(doc)
    found = by_kind.get("ServiceMonitor", [])
    monitors(name, found, set())
    service = by_kind["Service"][0]
    certificate = (by_kind.get("Certificate") or [None])[0]
    hook = by_kind["MutatingWebhookConfiguration"][0]["webhooks"][0]["clientConfig"]
    namespace = service["metadata"]["namespace"]
    checked = f"{service['metadata']['name']}.{namespace}.svc"
    named = lambda kind, name: next((d for d in by_kind.get(kind, []) if d["metadata"]["name"] == name), None)
    for monitor in found:
        where = f"{name}: ServiceMonitor {monitor['metadata']['name']}"
        spec = monitor["spec"]
        wanted = spec["selector"].get("matchLabels", {})
        service_labels = service["metadata"].get("labels", {})
        if not wanted or any(service_labels.get(k) != v for k, v in wanted.items()):
            fail(where, f"selects {wanted}, not the Service's labels {service_labels}")
        namespaces = spec.get("namespaceSelector", {}).get("matchNames", [namespace])
        if monitor["metadata"].get("namespace", namespace) != namespace or namespaces != [namespace]:
            fail(where, f"looks in {namespaces}, not the Service's namespace {namespace}")
        for key, value in (labels or {}).items():
            if monitor["metadata"].get("labels", {}).get(key) != value:
                fail(where, f"lacks the label {key}: {value}")
        for endpoint in spec["endpoints"]:
            if endpoint.get("port") not in {p.get("name") for p in service["spec"]["ports"]}:
                fail(where, f"port {endpoint.get('port')} is no port of Service {service['metadata']['name']}")
            tls = endpoint.get("tlsConfig", {})
            if endpoint.get("scheme") != "https" or tls.get("serverName") != checked:
                fail(where, f"not https to {checked}, the name the API server checks")
            if certificate and checked not in certificate["spec"]["dnsNames"]:
                fail(where, f"{checked} is not a name the certificate holds ({certificate['spec']['dnsNames']})")
            ca = tls.get("ca", {})
            if certificate:
                if ca.get("secret", {}).get("name") != certificate["spec"]["secretName"] or ca["secret"].get("key") != "ca.crt":
                    fail(where, f"trusts {ca}, not ca.crt of the Secret {certificate['spec']['secretName']}")
            elif "secret" in ca:
                secret = named("Secret", ca["secret"]["name"])
                if not secret or secret.get("data", {}).get(ca["secret"].get("key")) != hook.get("caBundle"):
                    fail(where, f"trusts {ca}, which holds not the webhook's caBundle")
            else:
                ref = ca.get("configMap", {})
                held = (named("ConfigMap", ref.get("name")) or {}).get("data", {}).get(ref.get("key"))
                if held is None or held.encode() != base64.b64decode(hook.get("caBundle", "")):
                    fail(where, f"trusts {ca}, which holds not the webhook's caBundle")


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
    waiter = load(f"{work}/k8s-wait-rbac.yaml")
    validate("k8s-wait", waiter)
    k8s_wait_rbac("k8s-wait", waiter)
    print(f"deploy: k8s-wait: rendered, valid against Kubernetes {KUBERNETES}, grants checked")
    webhook_installs(readygate, work)
    monitoring = load(f"{work}/monitoring.yaml")
    monitors("monitoring", monitoring, port_names(load(f"{work}/examples.yaml")))
    webhook_monitor("webhook-monitoring", load(f"{work}/webhook-monitoring.yaml"))
    if any(d["kind"] == "ServiceMonitor" for d in load(f"{work}/webhook/helm.yaml")):
        fail("webhook helm", "renders a ServiceMonitor with metrics.serviceMonitor.enabled=false")
    for render in ("helm-monitor", "helm-monitor-helm", "helm-monitor-secret"):
        docs = load(f"{work}/webhook/{render}.yaml")
        validate(f"webhook {render}", [d for d in docs if d["kind"] not in CERT_MANAGER + ("ServiceMonitor",)])
        webhook_monitor(f"webhook {render}", docs, {"release": "prometheus"})
    print("deploy: monitoring: rendered (kustomize; the chart off, and on with each certificate source), its monitors checked against the operator's fields")
    for failure in failures:
        print(f"deploy: FAILED: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


main()
