#!/usr/bin/env bash
# Builds a fully static x86_64 Linux release binary of readygate and prints its path as the
# last line of stdout (cargo's own output goes to stderr).
#
# Static glibc: `+crt-static` on an explicit `--target`, so the flag reaches only readygate and
# its dependencies, never build scripts or proc-macros (which run on the build host). Needs
# only the stable toolchain and the C library's static archives (Debian: libc6-dev), nothing
# from outside the package registries. readygate calls nothing that needs NSS at run time
# (names are resolved by its own resolver), so the static glibc binary runs in an empty root.
# The result is static-pie: still position independent, so ASLR covers its code too
# (`-C relocation-model=static` would save about 4% of the size and give that up).
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-gnu
# RUSTFLAGS given with an explicit --target apply to target artifacts only. Any flags already
# in the environment are dropped so that the result does not depend on the caller's shell.
unset CARGO_ENCODED_RUSTFLAGS
export RUSTFLAGS="-C target-feature=+crt-static"

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
