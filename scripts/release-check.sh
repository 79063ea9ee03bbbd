#!/usr/bin/env bash
# Checks scripts/release.sh as a user of the release would: runs it twice from this commit
# into two folders and requires byte-identical tarballs and SBOMs (and says whether the image
# archives are too); checks SHA256SUMS and each tarball's contents; loads each image archive
# with podman (private storage) and runs `--version` in it, the arm64 one under qemu through
# binfmt_misc, and readygate-cluster's `--version` in it too; requires each image to be at
# most 8 MB (readygate and readygate-cluster, about 3.9 and 3.4 MB) and the OCI index to name
# both platforms. Usage, as root: scripts/release-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
started=$SECONDS
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
work="$(mktemp -d "${TMPDIR:-/tmp}/readygate-release-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() {
  echo "release-check: FAILED: $*" >&2
  exit 1
}

READYGATE_DIST="$work/first" scripts/release.sh "$version"
first=$SECONDS
READYGATE_DIST="$work/second" scripts/release.sh "$version"
echo "release-check: two runs in $((first - started)) s and $((SECONDS - first)) s"

cd "$work/first"
sha256sum --check --strict --quiet SHA256SUMS || fail "SHA256SUMS does not match the files"
for file in *.tar.gz *.cdx.json; do
  cmp "$file" "../second/$file" || fail "$file differs between two runs from one commit"
done
for file in *.oci.tar; do
  if cmp -s "$file" "../second/$file"; then
    echo "release-check: $file is byte-identical too"
  else
    echo "release-check: $file differs between the two runs (not required)"
  fi
done
for target in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu; do
  name="readygate-$version-$target"
  listing="$(tar --numeric-owner -tvzf "$name.tar.gz")"
  for entry in readygate readygate-cluster LICENSE README.md readygate.1 readygate-cluster.1 \
    completions/readygate.bash completions/_readygate completions/readygate.fish \
    completions/readygate-cluster.bash completions/_readygate-cluster \
    completions/readygate-cluster.fish; do
    grep -q " $name/$entry\$" <<<"$listing" || fail "$name.tar.gz lacks $entry"
  done
  if grep -v ' 0/0 ' <<<"$listing"; then fail "$name.tar.gz has entries not owned by 0:0"; fi
done
echo "release-check: tarballs, SBOM reproducible; SHA256SUMS and contents right"

# The images, as a user loads them.
check_images() {
  for arch in amd64 arm64; do
    local archive="readygate-$version-linux-$arch.oci.tar"
    podman load --quiet --input "$archive" >/dev/null
    local image="localhost/readygate:$version-$arch"
    local size
    size="$(podman image inspect --format '{{.Size}}' "$image")"
    ((size <= 8000000)) || fail "$image is $size bytes, over 8 MB"
    local said
    said="$(podman run --rm --pull=never --arch "$arch" --network none "$image" --version)"
    case "$arch" in
      amd64) [[ "$said" == *"x86_64-unknown-linux-gnu)" ]] ;;
      arm64) [[ "$said" == *"aarch64-unknown-linux-gnu)" ]] ;;
    esac || fail "$image says '$said'"
    local cluster
    cluster="$(podman run --rm --pull=never --arch "$arch" --network none \
      --entrypoint /readygate-cluster "$image" --version)"
    [[ "$cluster" == "readygate-cluster $version "* ]] || fail "$image's /readygate-cluster says '$cluster'"
    echo "release-check: $archive: $size bytes; runs: $said; $cluster"
  done
}
export -f check_images fail
export version
"$repo/scripts/podman-sandbox.sh" bash -c check_images

python3 - "readygate-$version.oci.tar" <<'PY'
import json, sys, tarfile
archive = tarfile.open(sys.argv[1])
def blob(digest):
    return json.load(archive.extractfile("blobs/sha256/" + digest.split(":")[1]))
index = json.load(archive.extractfile("index.json"))
platforms = set()
for entry in index["manifests"]:
    listed = blob(entry["digest"]) if "image.index" in entry["mediaType"] else {"manifests": [entry]}
    for manifest in listed["manifests"]:
        platform = manifest.get("platform", {})
        platforms.add(f"{platform.get('os')}/{platform.get('architecture')}")
if platforms != {"linux/amd64", "linux/arm64"}:
    sys.exit(f"release-check: FAILED: the OCI index names {sorted(platforms)}")
print(f"release-check: the OCI index names {' and '.join(sorted(platforms))}")
PY
echo "release-check: passed in $((SECONDS - started)) s"
