#!/usr/bin/env bash
# The load section of the benchmark (docs/performance.md "Load on the cluster"): what a waiter
# costs the dependency and the cluster's DNS while a remote target stays down, beside the peers
# that bench/run.sh installs (those present are used). As root: it makes network namespaces
# (TEST-NET 192.0.2.1/24 and loopback only) and removes them. About three minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

readygate="$(images/static-build.sh | tail -n 1)"

exec python3 bench/load.py --readygate "$readygate" --flavour static \
  --wait-on "$PWD/bench/.tools/npm/node_modules/.bin/wait-on" "$@"
