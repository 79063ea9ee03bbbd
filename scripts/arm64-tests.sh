#!/usr/bin/env bash
# The whole test suite for aarch64, run on this x86_64 machine under qemu-user: the unit and
# integration tests cross-built with Debian's compiler and arm64 standard library (as
# images/static-build.sh builds the arm64 binary, in its own target folder), each test binary
# run by qemu-aarch64-static, and the aarch64 readygate the tests spawn run through
# binfmt_misc (scripts/install-arm64-deps.sh registers Debian's qemu-aarch64 rule).
# READYGATE_UNDER_QEMU=1 tells the tests that measure the emulator rather than readygate
# (they call tests/it/support/emulated.rs with the reason) to leave that check out, each with a
# line in the report below; READYGATE_STATIC_TARGET=aarch64 gives the empty-root tests the aarch64
# static-pie. The container and kubelet suites stay on x86_64 (tests/containers, tests/kubelet).
# Built in a profile of its own, `qemu`: cargo's dev profile (debug assertions and overflow
# checks on) at opt-level 1 without debug info. Emulated, a debug build is too slow for the
# suite's deadlines: its TLS handshakes and HTTP/2 exchanges overran their attempt bounds.
# Each test runs in a process of its own, two at a time, each bounded (as cargo-nextest runs
# them): qemu-user can hang a guest that forks from many threads at once, and a hang then costs
# one test its bound and a second try, not the whole test binary and the run's time.
# Usage, as root: scripts/arm64-tests.sh [FILTER...]   tests whose names contain a FILTER, e.g. tls::
# (ARM64_TESTS_RUN_AFTER=FILE: build, then run once FILE exists; ARM64_TEST_BOUND: each test's
# bound, 300 s by default; ARM64_TEST_LANES: tests at once, the cores by default.)
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

scripts/install-arm64-deps.sh
echo "arm64-tests: packages and binfmt ready after $((SECONDS - started)) s"

target=aarch64-unknown-linux-gnu
# Debian's compiler, not rustup's (static-build.sh says why), and its own target folder. The
# settings are flags and cargo's --config, not environment, so that the tests' children
# (static-build.sh) do not inherit them; RUSTC is the exception, and static-build.sh sets it.
cargo=(/usr/bin/cargo)
export RUSTC=/usr/bin/rustc
unset RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER RUSTFLAGS CARGO_ENCODED_RUSTFLAGS CARGO_TARGET_DIR
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
config=(
  --target "$target"
  --target-dir "$PWD/target/debian-rustc"
  --config "target.$target.linker='aarch64-linux-gnu-gcc'"
  --config "target.$target.rustflags=['--cfg=httparse_disable_simd=\"1\"']"
  --config 'profile.qemu.inherits="dev"'
  --config 'profile.qemu.opt-level=1'
  --config 'profile.qemu.debug=false'
  --profile qemu
)

built=$SECONDS
# The test binaries, from cargo's own account of what it built.
mapfile -t binaries < <("${cargo[@]}" test --locked "${config[@]}" --tests --no-run --message-format=json |
  sed -n 's/.*"profile":{[^}]*"test":true[^}]*}.*"executable":"\([^"]*\)".*/\1/p')
echo "arm64-tests: ${#binaries[@]} test binaries built in $((SECONDS - built)) s"

# The aarch64 static-pie the empty-root tests run (built once here, before any test's bound
# starts; arm64-check and the release reuse it).
static_built=$SECONDS
images/static-build.sh aarch64 >/dev/null
echo "arm64-tests: the aarch64 static binaries built in $((SECONDS - static_built)) s"

# CI builds the tests beside its own steps and has them wait for its x86_64 suite to finish.
if [[ -n ${ARM64_TESTS_RUN_AFTER:-} ]]; then
  waited=$SECONDS
  until [[ -e $ARM64_TESTS_RUN_AFTER ]]; do sleep 5; done
  echo "arm64-tests: waited $((SECONDS - waited)) s for $ARM64_TESTS_RUN_AFTER"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/readygate-arm64-tests.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export READYGATE_UNDER_QEMU=1 READYGATE_QEMU_SKIPS="$work/skips" READYGATE_STATIC_TARGET=aarch64
: >"$work/skips"
# Whether a test's name holds one of the filters (every test when none is given).
wanted() {
  local name=$1 filter
  shift
  (($# == 0)) && return 0
  for filter; do [[ $name == *"$filter"* ]] && return 0; done
  return 1
}
# Every test to run, as "binary<TAB>name".
for binary in "${binaries[@]}"; do
  timeout 5m qemu-aarch64-static "$binary" --list --format terse </dev/null |
    sed -n 's/^\(.*\): test$/\1/p' | while read -r name; do
      if wanted "$name" "$@"; then printf '%s\t%s\n' "$binary" "$name"; fi
    done
done >"$work/tests"
echo "arm64-tests: $(wc -l <"$work/tests") tests"

# Runs one test alone under its bound; prints a result line as libtest would, and the test's
# output when it did not pass.
run_one() {
  local binary=${1%%$'\t'*} name=${1#*$'\t'} began=$SECONDS status=0 out
  out="$(mktemp "$work/out.XXXXXX")"
  timeout --kill-after=10 "$ARM64_TEST_BOUND" qemu-aarch64-static "$binary" --exact "$name" \
    --test-threads 1 >"$out" 2>&1 </dev/null || status=$?
  local verdict=ok
  if ((status == 124 || status == 137)); then
    verdict="TIMED OUT after $ARM64_TEST_BOUND"
  elif ((status != 0)); then
    verdict=FAILED
  elif grep -q '^test result: ok\. 0 passed; 0 failed; 1 ignored' "$out"; then
    verdict=ignored
  elif ! grep -q '^test result: ok\. 1 passed' "$out"; then
    verdict="FAILED (no result line)"
  fi
  if [[ $verdict == ok || $verdict == ignored ]]; then
    printf 'test %s ... %s (%d s)\n' "$name" "$verdict" $((SECONDS - began))
  else
    printf 'test %s ... %s (%d s)\n%s\n' "$name" "$verdict" $((SECONDS - began)) "$(tail -n 60 "$out")"
    printf '%s\t%s\n' "$binary" "$name" >>"$work/failed"
  fi
  rm -f "$out"
}
export -f run_one
export work ARM64_TEST_BOUND="${ARM64_TEST_BOUND:-300}"
: >"$work/failed"
ran=$SECONDS
xargs -a "$work/tests" -d '\n' -P "${ARM64_TEST_LANES:-$(nproc)}" -n 1 bash -c 'run_one "$1"' _ |
  tee "$work/log"
echo "arm64-tests: ran in $((SECONDS - ran)) s: $(grep -c ' \.\.\. ok ' "$work/log") passed," \
  "$(wc -l <"$work/failed") failed, $(grep -c ' \.\.\. ignored ' "$work/log") ignored"

# A test that failed beside the others runs once more, alone: under the emulator, on a loaded
# machine, a time bound is the first thing to go. It passes only if it passes then.
status=0
if [[ -s $work/failed ]]; then
  echo "arm64-tests: $(wc -l <"$work/failed") tests failed beside the others; each runs again, alone:"
  mv "$work/failed" "$work/first-failures"
  : >"$work/failed"
  rerun=$SECONDS
  xargs -a "$work/first-failures" -d '\n' -P 1 -n 1 bash -c 'run_one "$1"' _ | sed 's/^/rerun: /'
  echo "arm64-tests: the rerun took $((SECONDS - rerun)) s"
  if [[ -s $work/failed ]]; then
    status=1
    echo "arm64-tests: failed again, alone:"
    sed 's/^[^\t]*\t/  /' "$work/failed"
  fi
fi
echo "arm64-tests: $(sed "s/: .*//" "$work/skips" | sort -u | wc -l) tests measured the emulator: a check left out under qemu, or a time bound held with its allowance:"
sort -u "$work/skips" | sed 's/^/  /'
if ((status != 0)); then
  echo "arm64-tests: FAILED after $((SECONDS - started)) s" >&2
  exit "$status"
fi
echo "arm64-tests: passed in $((SECONDS - started)) s"
