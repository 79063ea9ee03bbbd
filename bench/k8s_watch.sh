#!/usr/bin/env bash
# k8s:// watch against poll with readygate as it ships (the static release binary): requests to
# the API server per waiting pod over a span, detection of the Job's completion, and the memory
# of a watch, against bench/k8s_watch.py's stand-in API server; writes its section of
# bench/report.md. Usage: bench/k8s_watch.sh [SPAN-SECONDS [PODS]]   (default 300 and 20 of
# each kind; needs python3 and openssl). Everything listens on 127.0.0.1 and stops with it.
set -euo pipefail
cd "$(dirname "$0")/.."
readygate="$(images/static-build.sh | tail -n 1)"
exec python3 bench/k8s_watch.py "$readygate" --span "${1:-300}" --pods "${2:-20}" --report
