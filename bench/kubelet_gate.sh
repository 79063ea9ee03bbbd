#!/usr/bin/env bash
# From a dependency's port opening to the app container's start, under tests/kubelet's real
# kubelet (one node, host network): the gate `readygate-cluster inject` adds (`readygate wait`
# as the last init container), an init container looping `nc -z` with `sleep 1`, and no gate
# (an init container that ends at once: the kubelet's own hand-over from an init container to
# the app, the floor of any gate). Both gates dial the dependency by a Service-like name
# (db.default.svc, resolved to the host's loopback by hostAliases): readygate's remote schedule,
# as in a cluster. Debian's busybox has no `nc -z`: `nc -w 1 HOST PORT </dev/null` is the same
# probe (connect, send nothing, exit 0 once connected). The port opens AFTER to AFTER+1 s
# (random) after the gate started, on a listener of this script; the app's start is the
# kubelet's timestamp of its first log line. `timer` is the floor of any gate that ends on its
# own seconds after it started: an init container that sleeps AFTER to AFTER+1 s, then exits,
# measured from its last line (an init container that ends at once, `none`, is handed over in
# the kubelet's same sync of the pod; one that runs on waits for the kubelet's next look).
# Prints one JSON line per variant; docs/performance.md records the figures.
# Usage, as root: [VARIANTS="gate nc none timer"] bench/kubelet_gate.sh [ROUNDS [AFTER]]
# (default 7 rounds per variant, 1 s)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/tests/kubelet"
cd "$ROOT"
rounds="${1:-7}"
after="${2:-1}"
port=7401

exec 9>"${TMPDIR:-/tmp}/readygate-kubelet.lock"
flock -w 3600 9 || { echo "bench: tests/kubelet/run.sh holds the machine" >&2; exit 1; }
"$ROOT/scripts/install-kubelet-deps.sh"
KUBE_BIN="$("$HERE/build.sh" | tail -n 1)"
CLUSTER="$(mktemp -d "${TMPDIR:-/tmp}/readygate-kubelet-bench.XXXXXX")"
CASE_DIR="$CLUSTER/bench"
mkdir -p "$CASE_DIR"
source "$HERE/cluster.sh"
source "$HERE/images.sh"
source "$HERE/lib.sh"
source "$HERE/cluster-side.sh"
trap 'cluster_down; rm -rf "$CLUSTER"' EXIT

build_images
cluster_up
import_images
start_kubelet
ns=bench
make_namespace "$ns"

# The pod of VARIANT (gate, nc, none), named NAME.
bench_pod() {
  local variant="$1" name="$2" app
  app='[{"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "echo app: started; trap \"exit 0\" TERM; sleep 3600 & wait"]}]'
  case "$variant" in
    gate)
      jq -cn --arg name "$name" --argjson app "$app" --arg target "tcp://db.default.svc:$port" \
        '{apiVersion: "v1", kind: "Pod", metadata: {name: $name, annotations: {"readygate.dev/wait-for": $target}},
          spec: {terminationGracePeriodSeconds: 1, containers: $app}}' |
        "$(cluster_binary)" inject ;;
    nc)
      jq -cn --arg name "$name" --argjson app "$app" --arg loop "until nc -w 1 db.default.svc $port </dev/null; do sleep 1; done" \
        '{apiVersion: "v1", kind: "Pod", metadata: {name: $name},
          spec: {terminationGracePeriodSeconds: 1, containers: $app,
                 initContainers: [{name: "gate", image: "busybox:1.36", command: ["sh", "-c", $loop]}]}}' ;;
    none)
      jq -cn --arg name "$name" --argjson app "$app" \
        '{apiVersion: "v1", kind: "Pod", metadata: {name: $name},
          spec: {terminationGracePeriodSeconds: 1, containers: $app,
                 initContainers: [{name: "gate", image: "busybox:1.36", command: ["sh", "-c", "echo gate: open"]}]}}' ;;
    timer)
      jq -cn --arg name "$name" --argjson app "$app" \
        --arg wait "sleep $after.$(printf %03d $((RANDOM % 1000))); echo gate: open" \
        '{apiVersion: "v1", kind: "Pod", metadata: {name: $name},
          spec: {terminationGracePeriodSeconds: 1, containers: $app,
                 initContainers: [{name: "gate", image: "busybox:1.36", command: ["sh", "-c", $wait]}]}}' ;;
  esac | on_this_node
}

# Milliseconds from the port's opening (for `none`: the init container's last line) to the
# app's first line, for one pod of VARIANT.
one_round() {
  local variant="$1" name="$2" opened started listener
  create_pod "$ns" "$(bench_pod "$variant" "$name")"
  if [[ "$variant" == none || "$variant" == timer ]]; then
    wait_log "$ns" "$name" app "app: started" 60 "the app did not start"
    opened="$(date -d "$(logged_at "$ns" "$name" gate "gate: open")" +%s%N)"
  else
    wait_pod "$ns" "$name" '.status.initContainerStatuses[-1].state.running' 60 "the gate did not start"
    sleep "$after.$(printf %03d $((RANDOM % 1000)))"
    python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
print(time.time_ns(), flush=True)
while True:
    s.accept()[0].close()
' "$port" >"$CASE_DIR/opened" 9>&- &
    listener=$!
    # one_round runs in a subshell of its own: its end, failed or not, stops the listener.
    # (expanded now: at the subshell's exit the function's locals are gone)
    # shellcheck disable=SC2064
    trap "kill $listener 2>/dev/null || true" EXIT
    until [[ -s "$CASE_DIR/opened" ]]; do sleep 0.01; done
    opened="$(cat "$CASE_DIR/opened")"
    wait_log "$ns" "$name" app "app: started" 60 "the app did not start"
    kill "$listener"
    wait "$listener" 2>/dev/null || true
    : >"$CASE_DIR/opened"
  fi
  started="$(date -d "$(logged_at "$ns" "$name" app "app: started")" +%s%N)"
  k -n "$ns" delete pod "$name" --grace-period=1 --wait=true >/dev/null
  echo $(((started - opened) / 1000000))
}

provide_image "$(bench_pod gate probe | jq -r '.spec.initContainers[-1].image')"
for variant in ${VARIANTS:-gate nc none timer}; do
  ms=()
  for n in $(seq "$rounds"); do
    one="$(one_round "$variant" "$variant-$n")" && [[ "$one" =~ ^-?[0-9]+$ ]] ||
      { echo "bench: $variant-$n: $(cat "$CASE_DIR/why" 2>/dev/null)" >&2; exit 1; }
    ms+=("$one")
  done
  sorted="$(printf '%s\n' "${ms[@]}" | sort -n | paste -sd, -)"
  median="$(printf '%s\n' "${ms[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
  echo "{\"variant\":\"$variant\",\"open_after_s\":$after,\"rounds_ms\":[$sorted],\"median_ms\":$median}"
done
