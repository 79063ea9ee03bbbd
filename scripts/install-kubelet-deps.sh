#!/usr/bin/env bash
# Installs the Debian packages the real-kubelet tests (tests/kubelet/run.sh) need (as root;
# idempotent): etcd, containerd and runc for the node, openssl for the cluster's certificates,
# iproute2 for the node address, what images/build-image.sh and the busybox stand-in need, and
# python3 for the stand-in of an old admission webhook (tests/kubelet/strip-webhook.py).
# kube-apiserver, kubelet and kubectl are built from Go source (tests/kubelet/build.sh): that
# needs a Go toolchain >= 1.24 on PATH, which Debian 12 does not package.
set -euo pipefail
here="$(dirname "$0")"
"$here/install-container-deps.sh"
"$here/apt-install.sh" etcd-server containerd runc openssl iproute2 busybox-static curl python3
# The tests start their own containerd with a private config; a packaged service would hold
# the default socket and state.
if [[ -d /run/systemd/system ]]; then
  systemctl disable --now containerd >/dev/null 2>&1 || true
fi
