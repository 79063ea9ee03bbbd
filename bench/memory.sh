#!/usr/bin/env bash
# Measures, with the release build, the peak memory of one `probe` against the answers built
# to cost memory: k8s:// answers of a million empty entries, the largest lists within the
# caps, server text hundreds of KiB long (tests/it/k8s_bounds.rs), and a flood of bytes to each
# protocol kind (tests/it/protocols/hostile.rs). Worst of RUNS runs, one test at a time; writes
# its section of bench/report.md. Usage: bench/memory.sh [RUNS] [--debug|--release-binary]
# (default 3; needs GNU time). --debug measures the test build instead of the release build:
# quicker to build on a busy machine, and an upper bound (the release binary is smaller and starts
# leaner). --release-binary measures the release binary, run by the debug test build (put in its
# place for the runs, then put back): the release figures without an LTO build of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
profile=(--release)
build="release build"
if [[ "${2:-}" == --debug ]]; then
  profile=()
  build="debug build"
fi
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
tests=(k8s_bounds:: protocols::hostile::a_flood --nocapture --test-threads=1)

if [[ "${2:-}" == --release-binary ]]; then
  build="release build of the binary, run by the debug test build"
  cargo build --release --locked --quiet
  it="$(cargo test --locked --no-run --test it --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("target", {}).get("name") == "it" and m.get("executable"): print(m["executable"])')"
  saved="$(mktemp)"
  cp target/debug/readygate "$saved"
  trap 'cp "$saved" target/debug/readygate; rm -f "$out" "$saved"' EXIT
  cp target/release/readygate target/debug/readygate
  for ((i = 1; i <= runs; i++)); do
    "$it" "${tests[@]}" 2>&1 | grep -o 'bench: .*: peak [0-9]* KiB' >>"$out" || true
  done
else
  cargo build "${profile[@]}" --locked --quiet
  for ((i = 1; i <= runs; i++)); do
    cargo test "${profile[@]}" --locked --quiet --test it -- "${tests[@]}" 2>&1 |
      grep -o 'bench: .*: peak [0-9]* KiB' >>"$out" || true
  done
fi

python3 - "$out" "$runs" "$build" <<'PY'
import re, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, "bench")
import sections
lines, runs, build = Path(sys.argv[1]).read_text().splitlines(), sys.argv[2], sys.argv[3]
worst = {}
for line in lines:
    label, kib = re.match(r"bench: (.*): peak (\d+) KiB", line).groups()
    worst[label] = max(worst.get(label, 0), int(kib))
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
rows = "\n".join(f"| {label} | {kib / 1024:.1f} MiB |" for label, kib in sorted(worst.items()))
top = max(worst.values(), default=0) / 1024
text = f"""## Memory against hostile answers

Written by `bench/memory.sh`; do not edit by hand. {when}, readygate {commit} ({build}),
worst of {runs} runs of each `probe` (GNU time `%M`), one at a time.

| answer | peak RSS |
| --- | --- |
{rows}

| goal | target | measured (worst) | met |
| --- | --- | --- | --- |
| peak RSS of one `probe`, whatever a peer sends | ≤ 32 MiB | {top:.1f} MiB | {"yes" if top <= 32 else "**no**"} |"""
sections.replace("bench/report.md", "memory", text)
print(text)
PY
