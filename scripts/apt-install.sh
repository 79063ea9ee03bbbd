#!/usr/bin/env bash
# Installs those of the named Debian packages that are missing (as root; idempotent), so that
# the test, container and benchmark scripts share one way to do it. Usage: apt-install.sh PKG...
set -euo pipefail
missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
