#!/usr/bin/env bash
# Builds a fully static x86_64 Linux release binary of readygate and prints its path as the
# last line of stdout (cargo's own output goes to stderr).
#
# Static glibc: `+crt-static` on an explicit `--target`, so the flag reaches only readygate and
# its dependencies, never build scripts or proc-macros (which run on the build host). Needs
# only the stable toolchain and the C library's static archives (Debian: libc6-dev), nothing
# from outside the package registries. readygate calls nothing that needs NSS at run time
# (names are resolved by its own resolver), so the static glibc binary runs in an empty root.
# Static-pie (the default relocation model with `+crt-static`): the binary relocates itself at
# start so that its code and data get ASLR, as it parses untrusted DNS, HTTP and TLS; the
# start-up this costs is small beside a container runtime's exec (bench/report.md).
# `--cfg httparse_disable_simd="1"`: httparse otherwise picks its SIMD routines on the first
# response it parses, through std's CPU-feature detection: a run of `cpuid` instructions, each
# a trap to the hypervisor in a VM (5.5 us apiece on a Firecracker VM: 35-44 us of a 0.69 ms
# `probe http://`, 1.27x to 1.21x `/bin/true`, side by side). Its portable SWAR routines read
# the few hundred bytes of a probe's response as fast, and accept exactly the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-gnu
# RUSTFLAGS given with an explicit --target apply to target artifacts only. Any flags already
# in the environment are dropped so that the result does not depend on the caller's shell.
unset CARGO_ENCODED_RUSTFLAGS
export RUSTFLAGS="-C target-feature=+crt-static --cfg httparse_disable_simd=\"1\""

cargo build --release --locked --target "$target" 1>&2

binary="${CARGO_TARGET_DIR:-$PWD/target}/$target/release/readygate"
case "$binary" in
  /*) ;;
  *) binary="$PWD/$binary" ;;
esac
[[ -x "$binary" ]] || { echo "static-build: $binary was not built" >&2; exit 1; }
# A static binary loads no shared library: refuse to hand out anything else.
if ldd "$binary" 2>&1 | grep -q '=>'; then
  echo "static-build: $binary links shared libraries: it is not static" >&2
  ldd "$binary" >&2 || true
  exit 1
fi
echo "$binary"
