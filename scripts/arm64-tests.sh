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
# Usage, as root: scripts/arm64-tests.sh [CARGO-TEST-ARGS...]   e.g. --test it -- tls::
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
  # Each test binary bounded: one that hangs under the emulator is killed, its unfinished tests
  # named below and run again alone (libtest names a test running for over 60 s as it goes).
  --config "target.$target.runner=['timeout','--foreground','--kill-after=10','12m','qemu-aarch64-static']"
  --config 'profile.qemu.inherits="dev"'
  --config 'profile.qemu.opt-level=1'
  --config 'profile.qemu.debug=false'
  --profile qemu
)

built=$SECONDS
"${cargo[@]}" test --locked "${config[@]}" --no-run
echo "arm64-tests: test binaries built in $((SECONDS - built)) s"

skips="$(mktemp "${TMPDIR:-/tmp}/readygate-arm64-skips.XXXXXX")"
log="$(mktemp "${TMPDIR:-/tmp}/readygate-arm64-tests.XXXXXX")"
trap 'rm -f "$skips" "$log"' EXIT
export READYGATE_UNDER_QEMU=1 READYGATE_QEMU_SKIPS="$skips" READYGATE_STATIC_TARGET=aarch64
ran=$SECONDS
status=0
"${cargo[@]}" test --locked --no-fail-fast "${config[@]}" --tests "$@" 2>&1 | tee "$log" ||
  status=$?

echo "arm64-tests: ran in $((SECONDS - ran)) s"
grep '^test result:' "$log" | sed 's/^/arm64-tests: /' || true
# A test that failed beside the others runs once more, alone: under the emulator, on a loaded
# machine, a time bound is the first thing to go. It passes only if it passes then; the list
# says which. Not when a test binary ended without its summary (a crash): that stays a failure.
mapfile -t failed < <(sed -n 's/^test \(.*\) \.\.\. FAILED$/\1/p' "$log" | sort -u)
binaries="$(grep -c '^ *Running ' "$log" || true)"
summaries="$(grep -c '^test result:' "$log" || true)"
if ((status != 0 && summaries != binaries)); then
  # A binary killed at its bound (or crashed) left tests unfinished: every listed test that has
  # no result line joins the rerun, and those that ran past 60 s are named as the likely hang.
  echo "arm64-tests: $((binaries - summaries)) test binaries ended without a summary; running past 60 s:"
  sed -n 's/^test \(.*\) has been running for over 60 seconds$/  \1/p' "$log" | sort -u
  finished="$(mktemp "${TMPDIR:-/tmp}/readygate-arm64-finished.XXXXXX")"
  sed -n 's/^test \(.*\) \.\.\. .*$/\1/p' "$log" | sort -u >"$finished"
  mapfile -t unfinished < <("${cargo[@]}" test --locked "${config[@]}" --tests "$@" -- --list 2>/dev/null |
    sed -n 's/^\(.*\): test$/\1/p' | sort -u | comm -23 - "$finished")
  rm -f "$finished"
  echo "arm64-tests: ${#unfinished[@]} tests did not finish"
  failed+=("${unfinished[@]}")
  summaries=$binaries
fi
if ((status != 0 && ${#failed[@]} > 0 && summaries == binaries)); then
  echo "arm64-tests: ${#failed[@]} tests failed beside the others; each runs again, alone:"
  printf '  %s\n' "${failed[@]}"
  rerun=$SECONDS
  status=0
  "${cargo[@]}" test --locked --no-fail-fast "${config[@]}" --tests -- --exact --test-threads 1 \
    "${failed[@]}" 2>&1 | tee "$log" || status=$?
  echo "arm64-tests: the rerun took $((SECONDS - rerun)) s"
  grep '^test result:' "$log" | grep -v ' 0 passed; 0 failed' | sed 's/^/arm64-tests: rerun: /' || true
fi
echo "arm64-tests: $(sed "s/: .*//" "$skips" | sort -u | wc -l) tests measured the emulator: a check left out under qemu, or a time bound held with its allowance:"
sort -u "$skips" | sed 's/^/  /'
if ((status != 0)); then
  echo "arm64-tests: FAILED after $((SECONDS - started)) s" >&2
  exit "$status"
fi
echo "arm64-tests: passed in $((SECONDS - started)) s"
