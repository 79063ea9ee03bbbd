#!/usr/bin/env bash
# Builds readygate's runtime image FROM scratch from the static binary of static-build.sh, with
# podman (or buildah when there is no podman; READYGATE_BUILDER=podman|buildah chooses), without
# reaching any registry: the image is images/Dockerfile's final stage, the binary copied from
# here instead of from the Dockerfile's Rust build stage. Prints the image reference as its
# last line. Usage: images/build-image.sh [IMAGE [TARGET]]   (default localhost/readygate:VERSION,
# for x86_64-unknown-linux-gnu; aarch64-unknown-linux-gnu builds an arm64 image).
# With SOURCE_DATE_EPOCH, every timestamp in the image is that time (a reproducible image).
#
# It uses the caller's podman/buildah settings and storage (CONTAINERS_CONF,
# CONTAINERS_STORAGE_CONF, ...): the container tests point them at a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
image="${1:-localhost/readygate:$version}"
target="${2:-x86_64-unknown-linux-gnu}"
case "$target" in
  x86_64-unknown-linux-gnu | x86_64 | amd64) arch=amd64 ;;
  aarch64-unknown-linux-gnu | aarch64 | arm64) arch=arm64 ;;
  *) echo "build-image: unsupported target '$target'" >&2; exit 2 ;;
esac

builder="${READYGATE_BUILDER:-}"
if [[ -z "$builder" ]]; then
  if command -v podman >/dev/null; then builder=podman
  elif command -v buildah >/dev/null; then builder=buildah
  else
    echo "build-image: needs podman or buildah (scripts/install-container-deps.sh)" >&2
    exit 1
  fi
fi

binary="$(images/static-build.sh "$target" | tail -n 1)"

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
install -m 0755 "$binary" "$context/readygate"
install -m 0755 "${binary%/*}/readygate-cluster" "$context/readygate-cluster"
# The Dockerfile's last stage, from its `FROM scratch` on, with the binary taken from the
# build context: one description of the image for both ways of building it.
awk '/^FROM scratch/ { final = 1 } final' images/Dockerfile \
  | sed -e 's|^COPY --from=build /out/readygate /readygate$|COPY readygate /readygate|' \
    -e 's|^COPY --from=build /out/readygate-cluster /readygate-cluster$|COPY readygate-cluster /readygate-cluster|' \
  >"$context/Containerfile"
for name in readygate readygate-cluster; do
  grep -qx "COPY $name /$name" "$context/Containerfile" || {
    echo "build-image: images/Dockerfile's final stage no longer copies /out/$name" >&2
    exit 1
  }
done

args=(--pull=never --layers=false --file "$context/Containerfile" --tag "$image"
  --os linux --arch "$arch" --build-arg "VERSION=$version" --build-arg "REVISION=$revision")
[[ -n "${SOURCE_DATE_EPOCH:-}" ]] && args+=(--timestamp "$SOURCE_DATE_EPOCH")
case "$builder" in
  podman) podman build --quiet "${args[@]}" "$context" >&2 ;;
  buildah) buildah build --quiet "${args[@]}" "$context" >&2 ;;
  *) echo "build-image: READYGATE_BUILDER must be podman or buildah, not '$builder'" >&2; exit 2 ;;
esac
echo "$image"
