#!/usr/bin/env bash
# Writes readygate's images as OCI archives into DIST: one per architecture
# (readygate-VERSION-linux-{amd64,arm64}.oci.tar, each loadable with `podman load`) and the
# multi-arch OCI index over both (readygate-VERSION.oci.tar, for `skopeo copy --all` to a
# registry). Builds with images/build-image.sh in the caller's podman storage (run it under
# scripts/podman-sandbox.sh). Usage: images/build-oci.sh VERSION DIST
set -euo pipefail
cd "$(dirname "$0")/.."
version="$1"
dist="$2"

index="localhost/readygate:$version"
podman manifest rm "$index" >/dev/null 2>&1 || true
podman manifest create "$index" >/dev/null
for arch in amd64 arm64; do
  image="localhost/readygate:$version-$arch"
  case "$arch" in
    amd64) target=x86_64-unknown-linux-gnu ;;
    arm64) target=aarch64-unknown-linux-gnu ;;
  esac
  images/build-image.sh "$image" "$target" >/dev/null
  podman save --quiet --format oci-archive --output "$dist/readygate-$version-linux-$arch.oci.tar" "$image"
  podman manifest add "$index" "containers-storage:$image" >/dev/null
done
podman manifest push --quiet --all "$index" "oci-archive:$dist/readygate-$version.oci.tar:$index"
