#!/usr/bin/env bash
# Builds a release into dist/ (or READYGATE_DIST): for x86_64 and aarch64, a tarball with the
# static binaries readygate and readygate-cluster (their dependency list embedded by
# cargo-auditable), LICENSE, README.md, the man pages and the completions of both; an OCI image archive per architecture (images/Dockerfile's FROM
# scratch image) and a multi-arch OCI index over both; a CycloneDX SBOM of Cargo.lock; and
# SHA256SUMS over them all. The tarballs are byte-identical when run twice from one commit:
# SOURCE_DATE_EPOCH (default: the commit's time) for every mtime, sorted entries, owner 0,
# fixed modes, gzip -n. .github/workflows/release.yml runs this on a tag.
# Usage, as root: scripts/release.sh VERSION   (VERSION must be Cargo.toml's)
# Installs cargo-cyclonedx (and, through static-build.sh, cargo-auditable) from crates.io when
# missing, the aarch64 build's packages (scripts/install-arm64-deps.sh) and podman/buildah
# (scripts/install-container-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

version="${1:-}"
crate_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
if [[ -z "$version" || "$version" != "$crate_version" ]]; then
  echo "release: usage: scripts/release.sh VERSION, where VERSION is Cargo.toml's ($crate_version), not '$version'" >&2
  exit 2
fi
dist="${READYGATE_DIST:-$PWD/dist}"
commit="$(git rev-parse HEAD)"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}"
# The binaries in the tarballs and in the images are one build, with the dependency list (CI
# sets this for every static build, so that the release reuses the ones its checks ran).
export READYGATE_AUDITABLE=1

scripts/install-arm64-deps.sh
scripts/install-container-deps.sh
if ! cargo cyclonedx --version >/dev/null 2>&1; then
  installing=$SECONDS
  # --debug: a release build of the tool costs minutes of CPU a cold CI pays; it runs once.
  cargo install cargo-cyclonedx --locked --quiet --debug
  echo "release: installed cargo-cyclonedx in $((SECONDS - installing)) s"
fi

rm -rf "$dist"
mkdir -p "$dist"
work="$(mktemp -d "${TMPDIR:-/tmp}/readygate-release.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# One folder per target, then a tar of it that depends on nothing but the files' bytes.
declare -A binaries
for target in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu; do
  binaries[$target]="$(images/static-build.sh "$target" | tail -n 1)"
done
completer="${binaries[x86_64-unknown-linux-gnu]}"
for target in "${!binaries[@]}"; do
  name="readygate-$version-$target"
  folder="$work/$name"
  mkdir -p "$folder/completions"
  install -m 0755 "${binaries[$target]}" "$folder/readygate"
  install -m 0755 "${binaries[$target]%/*}/readygate-cluster" "$folder/readygate-cluster"
  install -m 0644 LICENSE README.md docs/readygate.1 docs/readygate-cluster.1 "$folder/"
  # Completions are the same for every architecture: made by the binaries that run here.
  for program in "$completer" "${completer%/*}/readygate-cluster"; do
    name_of="${program##*/}"
    "$program" completions bash >"$folder/completions/$name_of.bash"
    "$program" completions zsh >"$folder/completions/_$name_of"
    "$program" completions fish >"$folder/completions/$name_of.fish"
  done
  chmod 0644 "$folder/completions/"*
  chmod 0755 "$folder" "$folder/completions"
  tar --sort=name --format=gnu --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 \
    --numeric-owner -C "$work" -cf - "$name" | gzip -9 -n >"$dist/$name.tar.gz"
done

# The SBOM, from Cargo.lock as the x86_64 binary is built (the same crates on aarch64). Its
# timestamp and serial number are made from the commit, so that it too is reproducible.
cargo cyclonedx --format json --spec-version 1.5 --target x86_64-unknown-linux-gnu \
  --override-filename readygate.cdx --quiet >&2
python3 - "readygate.cdx.json" "$dist/readygate-$version.cdx.json" "$commit" <<'PY'
import datetime, json, os, sys, uuid
source, destination, commit = sys.argv[1:]
bom = json.load(open(source))
when = datetime.datetime.fromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"]), datetime.timezone.utc)
bom["serialNumber"] = "urn:uuid:%s" % uuid.uuid5(uuid.NAMESPACE_URL, "readygate@" + commit)
bom.setdefault("metadata", {})["timestamp"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
with open(destination, "w") as out:
    json.dump(bom, out, indent=2, sort_keys=True)
    out.write("\n")
os.remove(source)
PY

# The images, with a private podman configuration and storage (never the machine's).
scripts/podman-sandbox.sh images/build-oci.sh "$version" "$dist"

(cd "$dist" && files=(*) && sha256sum -- "${files[@]}" | LC_ALL=C sort -k 2 >"$work/SHA256SUMS")
mv "$work/SHA256SUMS" "$dist/SHA256SUMS"
ls -l "$dist" >&2
echo "release: $version ($commit) in $dist after $((SECONDS - started)) s"
