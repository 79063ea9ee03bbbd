#!/usr/bin/env bash
# Runs a command with podman and buildah pointed at a private configuration and storage in a
# temporary folder (never the machine's), as tests/containers/run.sh does, and removes it all
# afterwards. Images are never pulled: every registry is blocked. Usage: podman-sandbox.sh CMD...
set -euo pipefail
sandbox="$(mktemp -d "${TMPDIR:-/tmp}/readygate-podman.XXXXXX")"
export CONTAINERS_CONF="$sandbox/containers.conf"
export CONTAINERS_STORAGE_CONF="$sandbox/storage.conf"
export CONTAINERS_REGISTRIES_CONF="$sandbox/registries.conf"
cleanup() {
  podman rm --all --force --time 0 >/dev/null 2>&1 || true
  awk -v dir="$sandbox" 'index($5, dir) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r mount; do umount -l "$mount" 2>/dev/null || true; done
  rm -rf "$sandbox"
}
trap cleanup EXIT
# runc and cgroupfs: no systemd needed; root may lack CAP_SYS_RESOURCE, hence the ulimits.
cat >"$CONTAINERS_CONF" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$sandbox/events.log"
tmp_dir = "$sandbox/tmp"
volume_path = "$sandbox/volumes"

[network]
network_config_dir = "$sandbox/networks"
CONF
cat >"$CONTAINERS_STORAGE_CONF" <<CONF
[storage]
driver = "vfs"
graphroot = "$sandbox/storage"
runroot = "$sandbox/run"
CONF
cat >"$CONTAINERS_REGISTRIES_CONF" <<CONF
unqualified-search-registries = []
CONF
for registry in docker.io ghcr.io quay.io gcr.io registry.k8s.io; do
  printf '[[registry]]\nlocation = "%s"\nblocked = true\n' "$registry" >>"$CONTAINERS_REGISTRIES_CONF"
done
"$@"
