#!/usr/bin/env bash
# Renders every deploy/ overlay with kustomize (installed from the Go module proxy, as kubectl's
# built-in one is not on a fresh machine), validates every object against the Kubernetes API's
# schemas (kubernetes-validate from PyPI ships them: no network at check time), and checks
# what each recipe must do (scripts/check-deploy.py): the images: override reaches every
# readygate container, the installer precedes its users, and the real binary accepts every
# readygate command line with the environment the ConfigMaps give it. The webhook's install
# (deploy/overlays/webhook, with and without its auto-mode component) and its Helm chart
# (deploy/helm/readygate-webhook: helm lint, then helm template with each certificate source
# and mode; Helm 4 built from the Go module proxy) are rendered and held to the same schemas
# and to what the webhook must be (check-deploy.py: check_webhook); the chart's ServiceMonitor,
# off by default, is rendered with each certificate source and checked as the component's is.
# Usage: scripts/check-deploy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

tools="$(scripts/deploy-tools.sh)"
kustomize="$(sed -n 1p <<<"$tools")" helm="$(sed -n 2p <<<"$tools")" python="$(sed -n 3p <<<"$tools")"
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
# Every overlay that patches a user's workload, and examples/ (whose kustomization names the
# image of every example); the webhook's install is checked on its own below.
overlays=()
for overlay in deploy/overlays/*/; do
  [[ "$overlay" == deploy/overlays/webhook/ ]] || overlays+=("$overlay")
done
overlays+=(examples/)
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
# k8s:// targets' least-privilege RBAC: validated, its grants checked (check-deploy.py).
"$kustomize" build deploy/k8s-wait >"$work/k8s-wait-rbac.yaml"
# The webhook: the overlay alone, pinned by digest, and with the auto-mode component (in a copy
# of deploy/, so the components' relative paths hold).
mkdir "$work/webhook"
"$kustomize" build deploy/overlays/webhook >"$work/webhook/kustomize.yaml"
cp -r deploy "$work/deploy"
(cd "$work/deploy/overlays/webhook" && "$kustomize" edit set image "$pin")
"$kustomize" build "$work/deploy/overlays/webhook" >"$work/webhook/kustomize-pinned.yaml"
(cd "$work/deploy/overlays/webhook" && "$kustomize" edit add component ../../components/webhook-auto-mode)
"$kustomize" build "$work/deploy/overlays/webhook" >"$work/webhook/kustomize-auto.yaml"
chart=deploy/helm/readygate-webhook
"$helm" lint --strict "$chart" >/dev/null
template() { "$helm" template readygate-webhook "$chart" --namespace readygate-system "$@"; }
template >"$work/webhook/helm.yaml"
template --set image.repository=registry.example.com/mirror/readygate \
  --set image.digest="sha256:$(printf '0%.0s' {1..64})" >"$work/webhook/helm-pinned.yaml"
cat >"$work/webhook/auto-values.yaml" <<'YAML'
sidecar: {name: proxy, image: envoy:1.31, command: [envoy]}
mode: auto
certificate: {source: helm}
YAML
# auto is for clusters whose nodes lag: the chart installs on an API server of 1.28.
template --values "$work/webhook/auto-values.yaml" --kube-version 1.28.0 \
  >"$work/webhook/helm-auto.yaml"
template --set certificate.source=secret --set certificate.secretName=webhook-tls \
  --set certificate.caBundle="$(printf 'ca' | base64)" --set webhook.failurePolicy=Fail \
  >"$work/webhook/helm-secret.yaml"
# The chart's ServiceMonitor (metrics.serviceMonitor.enabled; off above): with each certificate
# source, since each puts the CA the scrape trusts somewhere else.
monitor=(--set metrics.serviceMonitor.enabled=true --set metrics.serviceMonitor.labels.release=prometheus)
template "${monitor[@]}" >"$work/webhook/helm-monitor.yaml"
template "${monitor[@]}" --set certificate.source=helm >"$work/webhook/helm-monitor-helm.yaml"
template "${monitor[@]}" --set certificate.source=secret --set certificate.secretName=webhook-tls \
  --set certificate.caBundle="$(printf 'ca' | base64)" >"$work/webhook/helm-monitor-secret.yaml"
# Values the chart must refuse, each with its reason.
for bad in "mode=auto" "certificate.source=secret" "certificate.source=vault" "mode=sometimes" \
  "metrics.serviceMonitor.interval=soon" "metrics.serviceMonitor.enable=true"; do
  if template --set "$bad" >/dev/null 2>"$work/webhook/refused"; then
    echo "deploy: FAILED: helm template accepted --set $bad" >&2
    exit 1
  fi
done
# The Prometheus Operator's objects: no schema in kubernetes-validate, so check-deploy.py holds
# them to the operator's fields and to the port names readygate's manifests give.
"$kustomize" build deploy/monitoring >"$work/monitoring.yaml"
(cd "$work/deploy/overlays/webhook" && "$kustomize" edit add component ../../components/webhook-monitoring)
"$kustomize" build "$work/deploy/overlays/webhook" >"$work/webhook-monitoring.yaml"
"$python" scripts/check-deploy.py "$readygate" "$work" "${overlays[@]}"
echo "deploy: ${#overlays[@]} kustomizations and the webhook (kustomize, helm) rendered, validated and checked in $((SECONDS - started)) s"
