#!/usr/bin/env bash
# Installs the Python tools scripts/check-deploy.sh uses, from PyPI, into a virtual environment
# in READYGATE_TOOLS (default ~/.cache/readygate-tools), and prints its bin folder:
# kubernetes-validate (it ships the Kubernetes API's JSON schemas: no network at check time)
# and PyYAML.
set -euo pipefail
tools="${READYGATE_TOOLS:-$HOME/.cache/readygate-tools}"
packages=(kubernetes-validate==1.37.0 PyYAML==6.0.4)
venv="$tools/venv"
stamp="$venv/installed"
if [[ ! -x "$venv/bin/python" || "$(cat "$stamp" 2>/dev/null)" != "${packages[*]}" ]]; then
  started=$SECONDS
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${packages[@]}" >&2
  echo "${packages[*]}" >"$stamp"
  echo "python-tools: installed ${packages[*]} in $((SECONDS - started)) s" >&2
fi
echo "$venv/bin"
