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
export ROOT HERE KUBE_BIN CLUSTER

finish() {
  local status=$?
  set +e
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

failed=0 ran=0
for case_file in "$HERE"/cases/*.sh; do
  source "$case_file"
done
# Each case: NAME PATH FUNCTION, in the order run.
while read -r example path function; do
  [[ -z "$example" || "$example" == \#* ]] && continue
  [[ -n "$pattern" && "$example $path" != *$pattern* ]] && continue
  CASE_DIR="$CLUSTER/cases/$example-$path"
  mkdir -p "$CASE_DIR"
  ns="$(echo "$example-$path" | cut -c1-63)"
  make_namespace "$ns"
  case_start=$SECONDS
  ran=$((ran + 1))
  # Not in an `if`: there bash would ignore set -e inside the case.
  set +e
  (set -euo pipefail; shopt -s inherit_errexit; "$function" "$ns") >"$CASE_DIR/log" 2>&1
  status=$?
  set -e
  if ((status == 0)); then
    printf 'ok    %-36s %-10s %3ss  %s\n' "$example" "$path" "$((SECONDS - case_start))" "$(tail -n 1 "$CASE_DIR/log")"
  else
    failed=$((failed + 1))
    printf 'FAIL  %-36s %-10s %3ss  %s\n' "$example" "$path" "$((SECONDS - case_start))" "$(cat "$CASE_DIR/why" 2>/dev/null || tail -n 3 "$CASE_DIR/log")"
    KEEP_LOGS=1
  fi
  delete_pods "$ns"
done < <(sed -n 's/^# case: //p' "$HERE"/cases/*.sh)

echo "kubelet: $((ran - failed)) of $ran cases behaved, in $((SECONDS - started)) s in all"
((ran > 0 && failed == 0))
