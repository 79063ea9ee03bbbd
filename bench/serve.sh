#!/usr/bin/env bash
# `readygate serve` against exec probes through runc, side by side (bench/serve.py writes its
# section of bench/report.md): installs runc and busybox-static (scripts/install-container-deps.sh)
# and Go (for bench/kubeprobe, a client made like the kubelet's httpGet prober), builds the
# static binary and the client. As root; a few minutes.
# Usage: bench/serve.sh [--size-before BYTES] [--probes N]
#   --size-before: the static binary's size built from the commit before serve, for its growth.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-container-deps.sh
command -v go >/dev/null || scripts/apt-install.sh golang-go
readygate="${READYGATE_STATIC:-$(images/static-build.sh | tail -n 1)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Measured as installed: a copy written front to back, as an image layer puts it on disk.
install -m 0755 "$readygate" "$work/readygate"
(cd bench/kubeprobe && CGO_ENABLED=0 go build -o "$work/kubeprobe" .)
cd bench
python3 serve.py --readygate "$work/readygate" --kubeprobe "$work/kubeprobe" --report report.md "$@"
