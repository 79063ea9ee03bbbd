#!/usr/bin/env bash
# Installs what the aarch64 build and its runs under emulation need (as root; idempotent):
# Debian's compiler and cargo (rustc-web, cargo-web) with its arm64 standard library
# (libstd-rust-web-dev:arm64, hence the arm64 architecture in dpkg), gcc and the C library for
# linking aarch64 (ring's C code too), and file(1). Then, to run what it builds:
# qemu-user-static, arm64's own C library and loader (libc6:arm64, for the dynamically linked
# test binaries of scripts/arm64-tests.sh), and qemu-aarch64 registered with the kernel's
# binfmt_misc (mounted when it is not), so that an aarch64 executable runs when exec'd, as the
# test suite and podman do. Nothing the machine had is changed or removed.
# READYGATE_ARM64_BUILD_ONLY=1 installs only what building needs (images/Dockerfile's stage).
set -euo pipefail
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
  apt-get update -qq
fi
"$(dirname "$0")/apt-install.sh" rustc-web cargo-web libstd-rust-web-dev:arm64 \
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross file
[[ "${READYGATE_ARM64_BUILD_ONLY:-}" == 1 ]] && exit 0
"$(dirname "$0")/apt-install.sh" qemu-user-static libc6:arm64

binfmt=/proc/sys/fs/binfmt_misc
[[ -e "$binfmt/register" ]] || mount -t binfmt_misc binfmt_misc "$binfmt"
if [[ ! -e "$binfmt/qemu-aarch64" ]]; then
  # Debian's own rule: the `F` flag opens the interpreter now, so it works in any mount
  # namespace or chroot later; `P` keeps argv[0] as the program gave it.
  cat /usr/lib/binfmt.d/qemu-aarch64.conf >"$binfmt/register"
fi
grep -qx enabled "$binfmt/qemu-aarch64" || {
  echo "install-arm64-deps: qemu-aarch64 is registered but not enabled in $binfmt" >&2
  exit 1
}
