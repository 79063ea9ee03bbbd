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
  # Other installs may hold the dpkg lock (parallel CI steps, unattended upgrades): wait for it.
  apt-get update -qq -o DPkg::Lock::Timeout=600
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >&2
fi
