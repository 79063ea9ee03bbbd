#!/usr/bin/env bash
# Fuzzes readygate's target and command-line parsers, its reading of a server's raw HTTP response
# and redirect, the webhook's reading of an AdmissionReview and inject's reading of manifests,
# with cargo-fuzz (libFuzzer) for a bounded time, when a nightly toolchain is present (cargo-fuzz
# needs one); otherwise says so and stops.
# Installs cargo-fuzz from crates.io when missing (about a minute of building, measured here).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 30; CI's. Hunting for new findings, run
# for hours: scripts/fuzz.sh 3600, and keep fuzz/corpus/ between runs.)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz: skipped: no nightly toolchain (cargo-fuzz needs one)"
  exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  started=$SECONDS
  cargo install cargo-fuzz --locked --quiet --debug
  echo "fuzz: installed cargo-fuzz in $((SECONDS - started)) s"
fi

cargo +nightly fuzz build --fuzz-dir fuzz
targets=(target command_line http_response admission_review manifest)
# The targets run at once, each for as long as gives it SECONDS of one core when the machine has
# fewer cores than targets: the fuzzing of one target after another, in less wall time.
cores="$(nproc)"
each=$(((seconds * ${#targets[@]} + cores - 1) / cores))
((each > seconds)) || each=$seconds
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
declare -A pids
for target in "${targets[@]}"; do
  # A response head with a few headers needs more room than an argument does, and a pod's
  # review or a manifest (a few KB) more still.
  case $target in
    http_response) max_len=4096 ;;
    admission_review | manifest) max_len=8192 ;;
    *) max_len=512 ;;
  esac
  cargo +nightly fuzz run --fuzz-dir fuzz "$target" -- \
    -max_total_time="$each" -max_len="$max_len" -dict="fuzz/dict/$target.dict" \
    -print_final_stats=1 >"$work/$target.log" 2>&1 &
  pids[$target]=$!
done
failed=0
for target in "${targets[@]}"; do
  log="$work/$target.log"
  if ! wait "${pids[$target]}"; then
    tail -n 60 "$log"
    echo "fuzz: $target FAILED (the crashing input is under fuzz/artifacts/$target)"
    failed=1
    continue
  fi
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)"
  echo "fuzz: $target: ${runs:-?} executions in ${each} s beside ${#targets[@]} targets on $cores cores, no crash"
done
exit "$failed"
