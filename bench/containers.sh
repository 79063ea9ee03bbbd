#!/usr/bin/env bash
# The exec-probe cost through a real container runtime (runc): installs runc and busybox-static
# (scripts/install-container-deps.sh), builds the static binary, then runs bench/containers.py,
# which writes its section of bench/report.md. As root; about a minute.
# Usage: bench/containers.sh [ROUNDS]   (default 300)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-container-deps.sh
readygate="$(images/static-build.sh | tail -n 1)"
# Measured as installed: a copy written front to back, as an image layer puts it on disk.
copy="$(mktemp -d)/readygate"
trap 'rm -rf "$(dirname "$copy")"' EXIT
install -m 0755 "$readygate" "$copy"
python3 bench/containers.py --readygate "$copy" --rounds "${1:-300}" --report bench/report.md
