#!/usr/bin/env bash
# The container tests: readygate's image and every examples/ manifest in real containers
# (podman with runc, stand-in images built FROM scratch from busybox-static; no registry).
# Installs what they need from Debian, gives podman a private config and storage in a
# temporary folder (never the machine's), runs the integration binary's `containers` module
# (tests/it/containers/) and removes it all again.
# Usage, as root: tests/containers/run.sh [CASE...], e.g. recipes::wait_for_migration
# (each within containers::; none: all of them).
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS

scripts/install-container-deps.sh
echo "containers: packages ready after $((SECONDS - started)) s"

sandbox="$(mktemp -d "${TMPDIR:-/tmp}/readygate-containers.XXXXXX")"
export CONTAINERS_CONF="$sandbox/containers.conf"
export CONTAINERS_STORAGE_CONF="$sandbox/storage.conf"
export CONTAINERS_REGISTRIES_CONF="$sandbox/registries.conf"
export READYGATE_CONTAINER_SANDBOX="$sandbox"

cleanup() {
  podman pod rm --all --force --time 0 >/dev/null 2>&1 || true
  podman rm --all --force --time 0 >/dev/null 2>&1 || true
  # The storage driver's own mounts, deepest first, then the folder.
  awk -v dir="$sandbox" 'index($5, dir) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r mount; do umount -l "$mount" 2>/dev/null || true; done
  rm -rf "$sandbox"
}
trap cleanup EXIT

# root lacks CAP_SYS_RESOURCE on some machines, so the default ulimits must not exceed the
# hard limits; crun trips on hybrid cgroup layouts, runc does not; no systemd needed.
cat >"$CONTAINERS_CONF" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
base_hosts_file = "$sandbox/hosts"

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
# The Services the examples name, on each pod's own loopback, where the tests start stand-ins
# for them (a cluster's DNS would give their ClusterIPs).
cat >"$sandbox/hosts" <<HOSTS
127.0.0.1	localhost
::1	localhost
127.0.0.1	db.default.svc cache.default.svc fluentd.logging.svc.cluster.local
HOSTS
cat >"$CONTAINERS_STORAGE_CONF" <<CONF
[storage]
driver = "overlay"
graphroot = "$sandbox/storage"
runroot = "$sandbox/run"
CONF
# Every image is built here; a pull attempt must fail at once instead of leaving the machine.
cat >"$CONTAINERS_REGISTRIES_CONF" <<CONF
unqualified-search-registries = []
CONF
for registry in docker.io ghcr.io quay.io gcr.io registry.k8s.io registry.example.com; do
  printf '[[registry]]\nlocation = "%s"\nblocked = true\n' "$registry" >>"$CONTAINERS_REGISTRIES_CONF"
done
echo "containers: $(podman --version), $(runc --version | head -n 1); private storage in $sandbox"

cases=("${@/#/containers::}")
cargo test --locked --test it -- --include-ignored --test-threads=1 --nocapture "${cases[@]:-containers::}"
echo "containers: passed in $((SECONDS - started)) s, package installs included"
