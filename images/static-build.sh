#!/usr/bin/env bash
# Builds fully static (static-pie) Linux release binaries of readygate and readygate-cluster
# (the cluster-side commands, beside it in the same folder) for one target and prints readygate's
# path as the last line of stdout (cargo's own output goes to stderr).
# Usage: images/static-build.sh [TARGET]   TARGET: x86_64-unknown-linux-gnu or
# aarch64-unknown-linux-gnu (x86_64/amd64 and aarch64/arm64 too); by default
# READYGATE_STATIC_TARGET, else this machine's architecture.
# READYGATE_AUDITABLE=1 builds with `cargo auditable` (the dependency list embedded in the
# binary, for scanners), installed from crates.io when missing; .ci/run and scripts/release.sh
# set it, so that CI builds each target once and the release reuses that build.
#
# Static glibc: `+crt-static` on an explicit `--target`, so the flag reaches only readygate and
# its dependencies, never build scripts or proc-macros (which run on the build host).
# readygate calls nothing that needs NSS at run time (names are resolved by its own resolver),
# so the static glibc binary runs in an empty root.
# Static-pie: the binary relocates itself at start so that its code and data get ASLR, as it
# parses untrusted DNS, HTTP and TLS; the start-up this costs is small beside a container
# runtime's exec (bench/report.md).
# `--cfg httparse_disable_simd="1"`: httparse otherwise picks its SIMD routines on the first
# response it parses, through std's CPU-feature detection: a run of `cpuid` instructions, each
# a trap to the hypervisor in a VM (docs/performance.md). Its portable SWAR routines read the
# few hundred bytes of a probe's response as fast, and accept exactly the same bytes.
#
# x86_64 needs the stable toolchain (rustup) and libc6-dev. aarch64 on an x86_64 machine is
# cross-built with Debian's own compiler and its arm64 standard library
# (scripts/install-arm64-deps.sh): rustup cannot fetch a target's std here, and rustup's
# compiler cannot use Debian's (E0514), so that build runs Debian's /usr/bin/cargo and
# /usr/bin/rustc in a target folder of its own. On an arm64 machine it is rustup's toolchain
# and the native gcc, as x86_64 is on x86_64.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-${READYGATE_STATIC_TARGET:-$(uname -m)}}"
case "$target" in
  x86_64 | amd64) target=x86_64-unknown-linux-gnu ;;
  aarch64 | arm64) target=aarch64-unknown-linux-gnu ;;
esac

# Flags given with an explicit --target apply to target artifacts only. Any flags already in
# the environment are replaced so that the result does not depend on the caller's shell.
# The clone's and the registry's paths are not the binary's business (nor a reproducible one).
# The unwind tables are left out (images/no-unwind-tables.ld says why): a sixth of the binary.
rustflags=(-C target-feature=+crt-static --cfg 'httparse_disable_simd="1"')
# Packed relative relocations (DT_RELR, glibc 2.36): the static-pie's relocation table in 3 KB
# instead of 220 KB. rust-lld links x86_64; Debian's aarch64 ld ignores the flag.
if [[ "$target" == x86_64-unknown-linux-gnu ]]; then
  rustflags+=(-C link-arg=-Wl,-z,pack-relative-relocs)
fi
rustflags+=("-Clink-arg=-Wl,-T,$PWD/images/no-unwind-tables.ld"
  "--remap-path-prefix=$PWD=/readygate"
  "--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo")
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
case "$target_dir" in
  /*) ;;
  *) target_dir="$PWD/$target_dir" ;;
esac
cargo=(cargo)

case "$target" in
  x86_64-unknown-linux-gnu) ;;
  aarch64-unknown-linux-gnu)
    # rustc's aarch64-gnu target cannot link static-pie: it asks gcc for `-static -no-pie`,
    # which the wrapper turns into `-static-pie` (its code is position-independent already).
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER="$PWD/images/static-pie-gcc.sh"
    if [[ "$(uname -m)" == aarch64 ]]; then
      export READYGATE_LINKER_CC=gcc
    else
      for tool in /usr/bin/cargo /usr/bin/rustc aarch64-linux-gnu-gcc; do
        command -v "$tool" >/dev/null || {
          echo "static-build: $target needs $tool (scripts/install-arm64-deps.sh)" >&2
          exit 1
        }
      done
      cargo=(/usr/bin/cargo)
      export RUSTC=/usr/bin/rustc
      unset RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER
      # Debian's compiler writes artifacts rustup's cannot read, and the reverse.
      target_dir="$target_dir/debian-rustc"
      export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
      export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
      export READYGATE_LINKER_CC=aarch64-linux-gnu-gcc
    fi
    ;;
  *)
    echo "static-build: unsupported target '$target' (x86_64-unknown-linux-gnu or aarch64-unknown-linux-gnu)" >&2
    exit 2
    ;;
esac
export CARGO_TARGET_DIR="$target_dir"
unset RUSTFLAGS
# Build scripts (ring's, through cc) rerun when any of these changes, and with them ring,
# rustls and the LTO link: a caller under `cargo test` (static_root) hands on its package's
# CARGO_* and OUT_DIR, release.sh its SOURCE_DATE_EPOCH. The binary depends on none of them.
for name in $(compgen -e); do
  case "$name" in
    CARGO_PKG_* | CARGO_MANIFEST_* | CARGO_BIN_* | CARGO_CRATE_NAME | CARGO_PRIMARY_PACKAGE | \
      CARGO_TARGET_TMPDIR | CARGO_RUSTC_CURRENT_DIR | OUT_DIR | SOURCE_DATE_EPOCH) unset "$name" ;;
  esac
done
# build.rs reruns when READYGATE_COMMIT changes, and `cargo test` hands on the one its own build
# saw: in a checkout, HEAD's (what build.rs would read), so that every caller agrees; without
# .git (images/Dockerfile's context), the caller's.
if commit="$(git rev-parse HEAD 2>/dev/null)"; then
  export READYGATE_COMMIT="$commit"
fi
CARGO_ENCODED_RUSTFLAGS="$(IFS=$'\x1f'; echo "${rustflags[*]}")"
export CARGO_ENCODED_RUSTFLAGS

build=(build)
if [[ "${READYGATE_AUDITABLE:-}" == 1 ]]; then
  build=(auditable build)
  if ! cargo auditable --version >/dev/null 2>&1; then
    installing=$SECONDS
    # --debug: a release build of the tool costs minutes of CPU a cold CI pays; it runs briefly.
    (unset CARGO_TARGET_DIR CARGO_ENCODED_RUSTFLAGS RUSTC; cargo install cargo-auditable --locked --quiet --debug) 1>&2
    echo "static-build: installed cargo-auditable in $((SECONDS - installing)) s" >&2
  fi
fi
"${cargo[@]}" "${build[@]}" --release --locked --target "$target" 1>&2

binary="$target_dir/$target/release/readygate"
for built in "$binary" "$target_dir/$target/release/readygate-cluster"; do
  [[ -x "$built" ]] || { echo "static-build: $built was not built" >&2; exit 1; }
  # A static binary loads no shared library and relocates itself: refuse to hand out anything else.
  if ! file -b "$built" | grep -q 'static-pie linked'; then
    echo "static-build: $built is not a static-pie executable: $(file -b "$built")" >&2
    exit 1
  fi
done
echo "$binary"
