# What the cases of tests/kubelet/cases/ share, sourced by run.sh: turning an example's
# workload into the pods this node runs, and asking the API server what the kubelet did.
# A case runs in a subshell; `fail MESSAGE` ends it with that message.

k() { "$KUBE_BIN/kubectl" "$@"; }

fail() {
  echo "$*" >"$CASE_DIR/why"
  exit 1
}

# A namespace with what a controller-manager's ServiceAccount and root-CA controllers (which do
# not run here) would have put in it: the default ServiceAccount and the kube-root-ca.crt
# ConfigMap that service account token volumes read. LEVEL (optional) labels it for the API
# server's PodSecurity admission; without it the namespace runs the harness's pods, which use
# the host's network (there is no pod network here) and so are admitted only at `privileged`:
# each is first admitted as its example declares it (admitted).
make_namespace() {
  local ns="$1" level="${2:-privileged}"
  k create namespace "$ns" >/dev/null
  k label namespace "$ns" >/dev/null \
    "pod-security.kubernetes.io/enforce=$level" "pod-security.kubernetes.io/warn=$level"
  k -n "$ns" create serviceaccount default >/dev/null
  k -n "$ns" create configmap kube-root-ca.crt --from-file ca.crt="$CLUSTER/pki/ca.crt" >/dev/null
}

# The Pod Security level an example is admitted at: `restricted`, unless its header says
# `# Pod Security: baseline` (and why).
pod_security_level() {
  if grep -q '^# Pod Security: baseline' "$ROOT/examples/$1"; then echo baseline; else echo restricted; fi
}

# Namespaces that enforce each level, where every example is admitted before it runs: they
# hold the examples' ServiceAccounts, which admission requires a pod's to exist. The API
# server must refuse a pod that is not restricted there: proof that PodSecurity enforces.
make_admission_namespaces() {
  local level file accounts=""
  for file in "$ROOT"/examples/*.yaml; do
    [[ "$(basename "$file")" == kustomization.yaml ]] && continue
    accounts+="$(objects "$(basename "$file")" | jq -c 'select(.kind == "ServiceAccount")')"
  done
  for level in restricted baseline; do
    make_namespace "pod-security-$level" "$level"
    [[ -z "$accounts" ]] || k -n "pod-security-$level" apply -f - >/dev/null <<<"$accounts"
  done
  if k -n pod-security-restricted create --dry-run=server -f - >/dev/null 2>&1 <<<'{"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "root"}, "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}'; then
    echo "kubelet tests: PodSecurity admission did not refuse a pod that is not restricted" >&2
    return 1
  fi
}

# The objects of FILE, and the pod NAME its workload becomes, as the example declares them
# (before the harness's changes), created in a dry run in the namespace of the example's level:
# the API server's PodSecurity admission must take them without a warning.
admitted() {
  local file="$1" name="$2" kind="${3:-}" level said
  level="$(pod_security_level "$file")"
  # The ServiceAccounts are there already (make_admission_namespaces).
  said="$({ objects "$file" | jq -c 'select(.kind != "ServiceAccount")'; declared_pod "$file" "$name" "$kind"; } |
    k -n "pod-security-$level" create --dry-run=server -f - 2>&1 >/dev/null)" ||
    fail "examples/$file is not admitted at Pod Security $level: $said"
  [[ -z "$said" ]] || fail "examples/$file: the API server warned at Pod Security $level: $said"
}

# The pod that the workload of FILE (a Pod, or the template of a Job or Deployment) becomes,
# named NAME, as its controller would create it; KIND (optional) picks the workload.
declared_pod() {
  local file="$1" name="$2" kind="${3:-}"
  objects "$file" | jq -c --arg name "$name" --arg kind "$kind" '
    select(.kind == "Pod" or .kind == "Job" or .kind == "Deployment")
    | select($kind == "" or .kind == $kind)
    | if .kind == "Pod" then . else
        {apiVersion: "v1", kind: "Pod",
         metadata: {labels: ((.spec.template.metadata.labels // {})
                             + (if .kind == "Job" then {"job-name": .metadata.name} else {} end))},
         spec: .spec.template.spec}
      end
    | .metadata.name = $name'
}

# Every object of an examples/ manifest, one JSON document a line.
objects() {
  k create --dry-run=client -o json -f "$ROOT/examples/$1" |
    jq -c 'if .kind == "List" then .items[] else . end | del(.metadata.namespace)'
}

# The pod that the workload of FILE (a Pod, or the template of a Job or Deployment) becomes on
# this node, named NAME (on_this_node). JQ (optional) changes it further, for a failure path;
# KIND (optional) picks the workload when the file has several.
pod_from() {
  local file="$1" name="$2" jq_change="${3:-.}" kind="${4:-}"
  admitted "$file" "$name" "$kind"
  declared_pod "$file" "$name" "$kind" | on_this_node | jq -c --argjson idle "$IDLE" "$jq_change"
}

# The pod JSON on stdin as this node runs it: bound to node localhost (no scheduler), on the
# host's network (no CNI; the names of the Services the examples wait for resolve to the host's
# loopback, where the cases start stand-ins), images used as imported (no registry).
on_this_node() {
  jq -c '
    .spec.nodeName = "localhost"
    | .spec.hostNetwork = true
    | .spec.hostAliases = [{ip: "127.0.0.1", hostnames:
        ["db.default.svc", "cache.default.svc", "fluentd.logging.svc.cluster.local"]}]
    | .spec.initContainers = [(.spec.initContainers // [])[] | .imagePullPolicy = "Never"]
    | .spec.containers = [.spec.containers[] | .imagePullPolicy = "Never"]
    | if .spec.initContainers == [] then del(.spec.initContainers) else . end'
}

# The command of a container that a failure path silences ($idle in pod_from's JQ): it listens
# on nothing and stops at SIGTERM. busybox's sleep as PID 1 ignores SIGTERM, so the kubelet
# waited out the 30 s grace period at every activeDeadlineSeconds or failed hook.
IDLE='["sh", "-c", "trap \"exit 143\" TERM; sleep 3600 & wait"]'

# Creates POD_JSON in NS, after tagging the images it names.
create_pod() {
  local ns="$1" pod="$2" image
  for image in $(jq -r '(.spec.initContainers // [])[].image, .spec.containers[].image' <<<"$pod" | sort -u); do
    provide_image "$image"
  done
  k -n "$ns" create -f - >/dev/null <<<"$pod"
}

pod_json() { k -n "$1" get pod "$2" -o json; }

# Waits up to SECONDS until JQ holds for pod NS/NAME's JSON; fails the case with WHY if not.
wait_pod() {
  local ns="$1" name="$2" jq_test="$3" seconds="$4" why="$5"
  local end=$((SECONDS + seconds))
  until pod_json "$ns" "$name" 2>/dev/null | jq -e "$jq_test" >/dev/null; do
    if ((SECONDS >= end)); then
      pod_json "$ns" "$name" | jq '.status' >&2
      k -n "$ns" get events -o json | jq -r '.items[] | "\(.involvedObject.name) \(.reason) x\(.count): \(.message)"' >&2
      fail "$why (within ${seconds}s); $(pod_summary "$ns" "$name")"
    fi
    sleep 0.5
  done
}

# The events of pod NS/NAME with REASON, as JSON lines {reason, message, count}.
events() {
  local ns="$1" name="$2" reason="$3"
  k -n "$ns" get events --field-selector "involvedObject.name=$name,reason=$reason" -o json |
    jq -c '.items[] | {reason, message, count}'
}

# Waits up to SECONDS for an event of pod NS/NAME with REASON whose message contains TEXT;
# prints its message.
wait_event() {
  local ns="$1" name="$2" reason="$3" text="$4" seconds="$5" found
  local end=$((SECONDS + seconds))
  while :; do
    found="$(events "$ns" "$name" "$reason" | jq -r --arg t "$text" 'select(.message | contains($t)) | .message' | sed -n 1p)"
    [[ -n "$found" ]] && { printf '%s' "$found"; return; }
    ((SECONDS < end)) || fail "no $reason event containing '$text' for $name (within ${seconds}s); events: $(events "$ns" "$name" "$reason" | head -n 3)"
    sleep 0.5
  done
}

# Waits up to SECONDS until pod NS/NAME is Ready; fails the case with WHY (or that it did not).
wait_ready() {
  wait_pod "$1" "$2" '.status.conditions[]? | select(.type == "Ready") | .status == "True"' "$3" \
    "${4:-the pod did not become Ready}"
}

# Waits up to SECONDS until the log of container C of pod NS/NAME holds TEXT; fails the case
# with WHY and the log's last lines if not.
wait_log() {
  local ns="$1" name="$2" c="$3" text="$4" seconds="$5" why="$6"
  local end=$((SECONDS + seconds))
  until k -n "$ns" logs "$name" -c "$c" 2>/dev/null | grep -qF "$text"; do
    ((SECONDS < end)) || fail "$why (within ${seconds}s): $(k -n "$ns" logs "$name" -c "$c" 2>&1 | tail -n 3)"
    sleep 0.5
  done
}

# Waits up to SECONDS until container C of pod NS/NAME has ended once and been restarted (its
# last state), requires that it exited 1 (readygate's deadline) and prints that state's JSON.
last_exit_1() {
  local ns="$1" name="$2" c="$3" seconds="$4" last
  wait_pod "$ns" "$name" "[(.status.initContainerStatuses // [])[], (.status.containerStatuses // [])[]]
    | .[] | select(.name == \"$c\") | .lastState.terminated" "$seconds" "$c did not end at readygate's deadline"
  last="$(pod_json "$ns" "$name" | status_of "$c" | jq -c .lastState.terminated)"
  echo "$c's last state: $last" >&2
  jq -e '.exitCode == 1' <<<"$last" >/dev/null || fail "$c did not exit 1: $last"
  printf '%s' "$last"
}

# A container's status (init or regular) in pod JSON, by name.
status_of() {
  jq -c --arg c "$1" '[(.status.initContainerStatuses // [])[], (.status.containerStatuses // [])[]] | .[] | select(.name == $c)'
}

# One line on the pod: phase, and each container's state and restarts.
pod_summary() {
  pod_json "$1" "$2" 2>/dev/null | jq -r '"phase \(.status.phase): " + ([(.status.initContainerStatuses // [])[], (.status.containerStatuses // [])[]]
    | map("\(.name) \(.state | keys[0])\(if .state.terminated then " \(.state.terminated.exitCode)" else "" end) restarts \(.restartCount)") | join(", "))'
}

# The RFC 3339 start of container C (its current run) in pod JSON.
started_at() {
  status_of "$1" | jq -r '.state.running.startedAt // .state.terminated.startedAt // empty'
}

# Deletes the pods of namespace NS and waits until the kubelet has stopped them (no namespace
# controller runs to delete the namespace itself; the cluster goes with the run).
delete_pods() {
  k -n "$1" delete pods --all --grace-period=2 --wait=true --timeout=90s >/dev/null 2>&1 || true
}

# Starts a stand-in for a Service the example waits for, as pod NAME in NS on the host's
# network (its image listens on the host's loopback). ENV (optional) is a JSON env list.
standin_pod() {
  local ns="$1" name="$2" image="$3" env="${4:-[]}"
  create_pod "$ns" "$(jq -cn --arg name "$name" --arg image "$image" --argjson env "$env" '
    {apiVersion: "v1", kind: "Pod", metadata: {name: $name},
     spec: {nodeName: "localhost", hostNetwork: true, terminationGracePeriodSeconds: 1,
            containers: [{name: $name, image: $image, imagePullPolicy: "Never", env: $env}]}}')"
}

# How many watches of RESOURCE (a plural: jobs, pods) the API server holds open now, by its own
# gauge: proof that a client watches rather than polls.
open_watches() {
  k get --raw /metrics | awk -v r="resource=\"$1\"" \
    '/^apiserver_longrunning_requests\{/ && index($0, r) && /verb="WATCH"/ { n += $NF } END { print n + 0 }'
}
