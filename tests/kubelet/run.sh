#!/usr/bin/env bash
# readygate under a real kubelet: brings up a one-node cluster (Debian's etcd and containerd,
# kube-apiserver and kubelet built from the Kubernetes release k8s/go.mod pins), imports
# readygate's image and the stand-ins, runs every examples/ manifest on its happy path and a
# failure path (cases/), prints one line per example and path, and stops all it started.
# Exits 0 only when every case behaved. Usage, as root: tests/kubelet/run.sh [CASE-PATTERN]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/tests/kubelet"
cd "$ROOT"
started=$SECONDS
pattern="${1:-}"

# Every example that holds a workload has its cases under cases/.
for file in "$ROOT"/examples/*.yaml; do
  grep -qE '^kind: (Pod|Job|Deployment)$' "$file" || continue
  name="$(basename "$file" .yaml)"
  grep -q "^# case: $name " "$HERE"/cases/*.sh ||
    { echo "kubelet: examples/$name.yaml has no case in tests/kubelet/cases/" >&2; exit 1; }
done

# One kubelet per machine: two would share the kubepods cgroups and the host's ports.
exec 9>"${TMPDIR:-/tmp}/readygate-kubelet.lock"
flock -w 3600 9 || { echo "kubelet: another tests/kubelet/run.sh holds the machine" >&2; exit 1; }

"$ROOT/scripts/install-kubelet-deps.sh"
KUBE_BIN="$("$HERE/build.sh" | tail -n 1)"
echo "kubelet: Kubernetes binaries ready after $((SECONDS - started)) s ($KUBE_BIN)"

CLUSTER="$(mktemp -d "${TMPDIR:-/tmp}/readygate-kubelet.XXXXXX")"
source "$HERE/cluster.sh"
source "$HERE/images.sh"
source "$HERE/lib.sh"
source "$HERE/cluster-side.sh"
export ROOT HERE KUBE_BIN CLUSTER

# Stops PID and every process below it, deepest first.
stop_tree() {
  local child
  for child in $(pgrep -P "$1"); do stop_tree "$child"; done
  kill -TERM "$1" 2>/dev/null
}

lane_pids=()
finish() {
  local status=$?
  set +e
  for pid in "${lane_pids[@]}"; do stop_tree "$pid"; done
  if ((status != 0)) || [[ -n "${KEEP_LOGS:-}" ]]; then
    echo "kubelet: logs of the cluster are kept in $CLUSTER/*.log" >&2
    cluster_down
  else
    cluster_down
    rm -rf "$CLUSTER"
  fi
  exit "$status"
}
trap finish EXIT
trap 'exit 130' INT TERM

build_images
echo "kubelet: images built after $((SECONDS - started)) s"
cluster_up
import_images
start_kubelet
# The node stays NotReady ("cni plugin not initialized"): there is no pod network, and every
# pod here uses the host's, which the kubelet runs all the same.
echo "kubelet: node localhost up after $((SECONDS - started)) s ($("$KUBE_BIN/kubectl" version -o json | jq -r .serverVersion.gitVersion), $(containerd --version | awk '{print $3}'))"
make_admission_namespaces
echo "kubelet: PodSecurity admission enforces restricted (namespace pod-security-restricted)"

for case_file in "$HERE"/cases/*.sh; do
  source "$case_file"
done

# Runs one case (EXAMPLE PATH FUNCTION) in a namespace of its own, prints its line and stops
# its pods; a failed case leaves the file `failed` in its folder. Never call it in an `if`, `||`
# or `&&`: there bash ignores set -e in everything it runs, the case's own subshell too.
run_case() {
  local example="$1" path="$2" function="$3" ns status case_start=$SECONDS
  CASE_DIR="$CLUSTER/cases/$example-$path"
  mkdir -p "$CASE_DIR"
  ns="$(echo "$example-$path" | cut -c1-63)"
  make_namespace "$ns"
  set +e
  (set -euo pipefail; shopt -s inherit_errexit; "$function" "$ns") >"$CASE_DIR/log" 2>&1
  status=$?
  set -e
  if ((status == 0)); then
    printf 'ok    %-36s %-10s %3ss  %s\n' "$example" "$path" "$((SECONDS - case_start))" "$(tail -n 1 "$CASE_DIR/log")"
  else
    printf 'FAIL  %-36s %-10s %3ss  %s\n' "$example" "$path" "$((SECONDS - case_start))" "$(cat "$CASE_DIR/why" 2>/dev/null || tail -n 3 "$CASE_DIR/log")"
    touch "$CASE_DIR/failed"
  fi
  delete_pods "$ns"
}

# Lanes: every pod uses the host's network, so the case files whose pods use one host port
# (`# host ports:`) share a lane and run one case at a time; the lanes run at once. Files that
# name no port share one lane too: the API server's gauges of open watches that they read count
# the whole cluster's. A file that says `# host ports: none` uses neither and has a lane of its
# own.
files=("$HERE"/cases/*.sh)
declare -A ports lane
for file in "${files[@]}"; do
  ports[$file]=" $(sed -n 's/^# host ports: //p' "$file") "
  lane[$file]="$file"
  [[ -z "${ports[$file]// /}" ]] && lane[$file]=api
  [[ "${ports[$file]}" == " none " ]] && ports[$file]=" "
done
merged=1
while ((merged)); do
  merged=0
  for a in "${files[@]}"; do
    for b in "${files[@]}"; do
      [[ "${lane[$a]}" < "${lane[$b]}" ]] || continue
      for port in ${ports[$a]}; do
        if [[ "${ports[$b]}" == *" $port "* ]]; then
          old="${lane[$b]}"
          for c in "${files[@]}"; do [[ "${lane[$c]}" == "$old" ]] && lane[$c]="${lane[$a]}"; done
          merged=1
          break
        fi
      done
    done
  done
done

# Each lane in the background, its cases in file order.
lane_pids=()
ran=0 n=0
for name in $(printf '%s\n' "${lane[@]}" | sort -u); do
  cases=()
  for file in "${files[@]}"; do
    [[ "${lane[$file]}" == "$name" ]] || continue
    while read -r example path function; do
      [[ -n "$pattern" && "$example $path" != *$pattern* ]] && continue
      cases+=("$example $path $function")
    done < <(sed -n 's/^# case: //p' "$file")
  done
  ((${#cases[@]})) || continue
  ran=$((ran + ${#cases[@]})) n=$((n + 1))
  (
    for one in "${cases[@]}"; do
      # shellcheck disable=SC2086 # three words: EXAMPLE PATH FUNCTION
      run_case $one
    done
  ) &
  lane_pids+=($!)
done
# A lane that ended early (the harness failed, not a case) fails the run too.
broken=0
for pid in "${lane_pids[@]}"; do wait "$pid" || broken=$((broken + 1)); done
lane_pids=()
failed="$(find "$CLUSTER/cases" -name failed | wc -l)"
((failed == 0 && broken == 0)) || KEEP_LOGS=1

echo "kubelet: $((ran - failed)) of $ran cases behaved ($n lanes at once$( ((broken)) && echo ", $broken of them broken off")), in $((SECONDS - started)) s in all"
((ran > 0 && failed == 0 && broken == 0))
