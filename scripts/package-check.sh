#!/usr/bin/env bash
# `cargo install readygate` as crates.io would serve it: packages the crate (`cargo package
# --locked`, which checks the metadata and the `include` list), unpacks the .crate into a
# temporary folder outside this clone, installs it from there into a temporary root
# (`cargo install --locked --offline`, from the registry cache `cargo fetch` fills), and runs the
# installed binary: --version must name this commit (from the crate's .cargo_vcs_info.json, as
# there is no .git), and a probe must pass and fail as it should.
# The install's build is the packaged crate's verification, so `cargo package` skips its own.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

dirty=()
[[ "${READYGATE_ALLOW_DIRTY:-}" == 1 ]] && dirty=(--allow-dirty)
cargo package --locked --no-verify --quiet "${dirty[@]}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
crate="${CARGO_TARGET_DIR:-target}/package/readygate-$version.crate"
echo "package: $crate, $(stat -c %s "$crate") bytes, $(tar -tzf "$crate" | wc -l) files"
if tar -tzf "$crate" | grep -E '/(tests|bench|fuzz|images|scripts|deploy|examples|\.ci)/'; then
  echo "package: FAILED: the crate holds files users do not build from (above)" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/readygate-package.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tar -xzf "$crate" -C "$work"
cargo fetch --locked --quiet
# A debug build in this clone's target folder: it shares the test suite's compiled dependencies
# (the release profile's LTO build is what images/static-build.sh checks).
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}" \
  cargo install --debug --locked --offline --quiet --path "$work/readygate-$version" --root "$work/root"
installed="$work/root/bin/readygate"

commit="$(git rev-parse HEAD)"
line="$("$installed" --version)"
[[ "$line" == "readygate $version (commit $commit, "*-linux-*")" ]] || {
  echo "package: FAILED: the installed --version says '$line', not $version at $commit" >&2
  exit 1
}
"$installed" probe "file://$installed" || { echo "package: FAILED: probe of a file" >&2; exit 1; }
status=0
"$installed" probe --timeout 1s tcp://127.0.0.1:1 >/dev/null || status=$?
[[ "$status" == 1 ]] || { echo "package: FAILED: probe of a closed port exited $status" >&2; exit 1; }
echo "package: installed from the .crate: $line; passed in $((SECONDS - started)) s"
