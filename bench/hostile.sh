#!/usr/bin/env bash
# Measures, with the release binary, how far past its deadline `wait --timeout 2s
# --attempt-timeout 500ms` ends against each hostile peer of tests/it/hostile.rs, its peak
# memory, and how fast SIGTERM/SIGINT end a wait (tests/it/signals.rs). The tests assert wide
# bounds; this prints the exact figures, worst of RUNS runs, one test at a time (no contention).
# Usage: bench/hostile.sh [RUNS]   (default 3; needs GNU time, unshare: scripts/install-test-deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT

cargo build --release --locked --quiet
ls -l target/release/readygate | awk '{print "release binary: " $5 " bytes"}'
for ((i = 1; i <= runs; i++)); do
  cargo test --release --locked --quiet --test it -- hostile:: signals:: \
    --nocapture --test-threads=1 2>&1 | grep -o 'bench: .*' >>"$out" || true
done

echo
echo "hostile peer | worst overrun past the 2 s deadline | worst peak RSS"
echo "--- | --- | ---"
grep -E '^bench: .*: overrun ' "$out" |
  sed -E 's/^bench: (.*): overrun ([0-9.]+) ms, peak ([0-9]+) KiB$/\1|\2|\3/' |
  awk -F'|' '{ if (!($1 in o) || $2 > o[$1]) o[$1] = $2; if ($3 > m[$1]) m[$1] = $3; n[$1]++ }
    END { for (k in o) printf "%s | %.1f ms | %.1f MiB (%d runs)\n", k, o[k], m[k] / 1024, n[k] }' |
  sort
echo
echo "signal | worst time from signal to exit"
echo "--- | ---"
grep -E '^bench: signal ' "$out" |
  sed -E 's/^bench: signal ([0-9]+) (.*): exit ([0-9]+) after ([0-9.]+) ms$/\1 \2 (exit \3)|\4/' |
  awk -F'|' '{ if ($2 > w[$1]) w[$1] = $2; n[$1]++ }
    END { for (k in w) printf "%s | %.1f ms (%d runs)\n", k, w[k], n[k] }' |
  sort
