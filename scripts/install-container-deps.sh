#!/usr/bin/env bash
# Installs the Debian packages the container tests (tests/containers/run.sh) and
# images/build-image.sh need (as root; idempotent): podman and buildah to build images FROM
# scratch and run pods, runc as their runtime (and for the exec-probe benchmark), catatonit for
# a pod's pause image, busybox-static for the stand-in images, openssl for the stand-in API
# server's certificates, and file/libc-bin for the static build's checks.
set -euo pipefail
packages=(podman buildah runc conmon catatonit busybox-static openssl file libc-bin)
"$(dirname "$0")/apt-install.sh" "${packages[@]}"
