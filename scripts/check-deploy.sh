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
# Every overlay, and examples/ (whose kustomization names the image of every example).
overlays=(deploy/overlays/*/ examples/)
pin="ghcr.io/readygate/readygate=registry.example.com/mirror/readygate@sha256:$(printf '0%.0s' {1..64})"
for overlay in "${overlays[@]}"; do
  name="$(basename "$overlay")"
  "$kustomize" build "$overlay" >"$work/$name.yaml"
  # The same with the image set the way docs/install.md tells users to: by digest.
  mkdir "$work/$name-pinned"
  cp -r deploy examples "$work/$name-pinned/"
  (cd "$work/$name-pinned/$overlay" && "$kustomize" edit set image "$pin")
  "$kustomize" build "$work/$name-pinned/$overlay" >"$work/$name-pinned.yaml"
done
"$python" scripts/check-deploy.py "$readygate" "$work" "${overlays[@]}"
echo "deploy: ${#overlays[@]} kustomizations rendered, validated and checked in $((SECONDS - started)) s"
