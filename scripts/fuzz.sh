#!/usr/bin/env bash
# Fuzzes readygate's target and command-line parsers, and its reading of a server's raw HTTP
# response and redirect, with cargo-fuzz (libFuzzer) for a bounded time, when a nightly toolchain is present (cargo-fuzz needs one); otherwise says so and stops.
# Installs cargo-fuzz from crates.io when missing (about a minute of building, measured here).
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz: skipped: no nightly toolchain (cargo-fuzz needs one)"
  exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  started=$SECONDS
  cargo install cargo-fuzz --locked --quiet
  echo "fuzz: installed cargo-fuzz in $((SECONDS - started)) s"
fi

cargo +nightly fuzz build --fuzz-dir fuzz
for target in target command_line http_response; do
  log="$(mktemp)"
  # A response head with a few headers needs more room than an argument does.
  max_len=512
  [[ $target == http_response ]] && max_len=4096
  if ! cargo +nightly fuzz run --fuzz-dir fuzz "$target" -- \
      -max_total_time="$seconds" -max_len="$max_len" -dict="fuzz/dict/$target.dict" \
      -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: $target FAILED (the crashing input is under fuzz/artifacts/$target)"
    exit 1
  fi
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)"
  echo "fuzz: $target: ${runs:-?} executions in ${seconds} s, no crash"
  rm -f "$log"
done
