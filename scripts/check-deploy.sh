#!/usr/bin/env bash
# Renders every deploy/ overlay with kustomize (installed from the Go module proxy, as kubectl's
# built-in one is not on a fresh machine), validates every object against the Kubernetes API's
# schemas (kubernetes-validate from PyPI ships them: no network at check time), and checks
# what each recipe must do (scripts/check-deploy.py): the images: override reaches every
# readygate container, the installer precedes its users, and the real binary accepts every
# readygate command line with the environment the ConfigMaps give it.
# Usage: scripts/check-deploy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

kustomize="$(scripts/go-tool.sh sigs.k8s.io/kustomize/kustomize/v5 v5.7.1)"
python="$(scripts/python-tools.sh)/python"
# The binary the command lines are tried with: the debug build the test suite uses.
cargo build --locked --quiet
readygate="${CARGO_TARGET_DIR:-target}/debug/readygate"

work="$(mktemp -d "${TMPDIR:-/tmp}/readygate-deploy.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# A user's own manifests, as deploy/README.md has the overlays used: the workload `web` (the
# name the overlays' targets hold) with a built-in sidecar `proxy` and a container `app`; and
# another Deployment, named `app`, which no overlay may change (nor create, nor replace).
mkdir "$work/workload"
cat >"$work/workload/kustomization.yaml" <<'YAML'
resources: [workload.yaml]
YAML
cat >"$work/workload/workload.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      initContainers:
        - {name: proxy, image: nginxinc/nginx-unprivileged:1.27, restartPolicy: Always}
      containers:
        - {name: app, image: registry.example.com/app:1.0, command: [/app/server]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
        - {name: app, image: registry.example.com/app:1.0, command: [/app/server]}
YAML
cp "$work/workload/workload.yaml" "$work/workload.yaml"
# Every overlay, and examples/ (whose kustomization names the image of every example).
overlays=(deploy/overlays/*/ examples/)
pin="ghcr.io/readygate/readygate=registry.example.com/mirror/readygate@sha256:$(printf '0%.0s' {1..64})"
for overlay in "${overlays[@]}"; do
  name="$(basename "$overlay")"
  # An overlay as a user has it: a copy beside their manifests, listed under resources:.
  mkdir -p "$work/$name/copy"
  cp -r "$overlay/." "$work/$name/copy/"
  if [[ "$overlay" == deploy/* ]]; then
    # Alone (as in the repository) it renders its ConfigMap and nothing else.
    "$kustomize" build "$overlay" >"$work/$name-alone.yaml"
    (cd "$work/$name/copy" && "$kustomize" edit add resource ../../workload)
  fi
  "$kustomize" build "$work/$name/copy" >"$work/$name.yaml"
  # The same with the image set the way docs/install.md tells users to: by digest.
  (cd "$work/$name/copy" && "$kustomize" edit set image "$pin")
  "$kustomize" build "$work/$name/copy" >"$work/$name-pinned.yaml"
done
# doctor's Job and least-privilege RBAC: validated, its grants checked (check-deploy.py).
"$kustomize" build deploy/doctor >"$work/doctor-rbac.yaml"
"$python" scripts/check-deploy.py "$readygate" "$work" "${overlays[@]}"
echo "deploy: ${#overlays[@]} kustomizations rendered, validated and checked in $((SECONDS - started)) s"
