#!/usr/bin/env bash
# The side-by-side benchmark (docs/performance.md "Benchmark"): installs readygate's peers,
# builds readygate as it ships, then runs bench/bench.py, which writes bench/report.md and the
# table in docs/performance.md.
#
# Peers come from Debian (nginx, curl, netcat-openbsd, wait-for-it, hyperfine, time), npm
# (wait-on) and crates.io (wait-for-them); the npm and cargo ones go into bench/.tools/ (git
# ignored, kept between runs: `cargo install wait-for-them` takes minutes the first time).
# Needs root for apt-get. Everything it starts listens on 127.0.0.1 only and stops with it.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

WAIT_ON_VERSION=9.5.1
WAIT_FOR_THEM_VERSION=0.5.1
tools="$PWD/bench/.tools"

packages=(nginx curl netcat-openbsd wait-for-it hyperfine time python3 ca-certificates)
command -v npm >/dev/null || packages+=(nodejs npm)
scripts/apt-install.sh "${packages[@]}"

if [[ ! -x "$tools/npm/node_modules/.bin/wait-on" ]]; then
  npm install --silent --no-audit --no-fund --prefix "$tools/npm" "wait-on@$WAIT_ON_VERSION" >&2
fi
if [[ ! -x "$tools/cargo/bin/wait-for-them" ]]; then
  echo "bench: cargo install wait-for-them (once; cached in bench/.tools/)" >&2
  cargo install --quiet --locked --root "$tools/cargo" --version "$WAIT_FOR_THEM_VERSION" wait-for-them >&2
fi

# readygate as it ships: the static binary.
readygate="$(images/static-build.sh | tail -n 1)"

# Measured as installed: a copy written front to back, as an image layer or a package puts it
# on disk. The linker writes its output piecemeal, and exec'ing that very file takes more page
# faults (79 against 71 for the same bytes, 0.93 against 0.77 ms for `probe tcp://` here), a
# cost that /bin/true and the peers, installed by dpkg, do not pay.
mkdir -p "$tools"
install -m 0755 "$readygate" "$tools/readygate"

exec python3 bench/bench.py \
  --readygate "$tools/readygate" --flavour static \
  --wait-on "$tools/npm/node_modules/.bin/wait-on" \
  --wait-for-them "$tools/cargo/bin/wait-for-them" \
  --report bench/report.md --summary docs/performance.md "$@"
