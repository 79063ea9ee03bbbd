#!/usr/bin/env bash
# Prints the path of a Go tool at one version, first building it from the Go module proxy into
# the tools folder (READYGATE_TOOLS) when it is missing or another version (read from the
# binary's own build information). Usage: scripts/go-tool.sh PACKAGE VERSION
set -euo pipefail
package="$1" version="$2"
tools="${READYGATE_TOOLS:-$HOME/.cache/readygate-tools}"
# go install names the binary after the package, less a trailing major-version element.
binary="$tools/bin/$(basename "${package%/v[0-9]*}")"
built="$(go version -m "$binary" 2>/dev/null | awk '$1 == "mod" { print $3 }' || true)"
if [[ "$built" != "$version" ]]; then
  started=$SECONDS
  mkdir -p "$tools/bin"
  (cd / && GOBIN="$tools/bin" go install "$package@$version")
  echo "installed $(basename "$binary") $version in $((SECONDS - started)) s" >&2
fi
echo "$binary"
