#!/usr/bin/env bash
# The linker for a static-pie aarch64 build (images/static-build.sh): rustc's aarch64-gnu target
# has no static-pie support, so with `+crt-static` it asks gcc for `-static -no-pie`, a static
# binary at a fixed address. Its objects are position-independent already, so gcc links them as
# a static-pie instead (glibc's rcrt1.o relocates it at start). `-C link-arg=-static-pie` alone
# does not do it: gcc then gets both, and the binary crashes at start.
# READYGATE_LINKER_CC names the cross gcc (default aarch64-linux-gnu-gcc).
set -euo pipefail
args=()
for arg in "$@"; do
  case "$arg" in
    -static) args+=(-static-pie) ;;
    -no-pie) ;;
    *) args+=("$arg") ;;
  esac
done
exec "${READYGATE_LINKER_CC:-aarch64-linux-gnu-gcc}" "${args[@]}"
