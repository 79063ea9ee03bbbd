#!/usr/bin/env bash
# Installs the Debian packages the test suite starts or compares against (as root; idempotent).
# Used by .ci/run and by the README's test command.
set -euo pipefail
packages=(
  ca-certificates
  openssl
  # the real script the wait-for-it differential suite compares against; with coreutils'
  # timeout it connects through bash's /dev/tcp (nc only with busybox's timeout)
  wait-for-it
  # unshare: the --on-exit PID 1 reaping test, the install and empty-root tests, the PID 1
  # signal tests; unshare and nsenter: the pod-style DNS suite
  util-linux
  # file(1): the static-binary check (tests/it/static_root.rs)
  file
  # chroot (the empty-root tests) and ldd
  coreutils
  libc-bin
  # the real servers the network suite starts with temp configs (tests/it/real_servers.rs,
  # tls.rs, grpc.rs, dns.rs): nginx (HTTP, HTTPS, Unix sockets), etcd (gRPC health),
  # redis-server and redis-cli (TCP), dnsmasq (cluster DNS), ip (loopback in a new netns)
  nginx
  etcd-server
  redis-server
  redis-tools
  dnsmasq-base
  iproute2
  # iptables: a pod's API connection cut in its own netns (tests/it/k8s_watch.rs)
  iptables
  # the servers of the protocol targets (tests/it/protocols/), each started by the suite from
  # a temp folder on free ports, never as a system service
  postgresql
  mariadb-server
  rabbitmq-server
  memcached
  nats-server
  zookeeper
  # GNU time: peak memory of the hostile-peer tests
  time
  # curl: the TLS tests check that readygate accepts what curl accepts (tests/it/tls.rs)
  curl
  # python3-venv: the Python that runs grpcio, the real gRPC client of tests/it/serve.rs
  python3
  python3-venv
  # a FUSE mount whose lookups never answer (tests/it/hung_mount.rs): its daemon is built
  # from tests/it/support/hung_fuse.c with cc, pkg-config and libfuse3
  fuse3
  libfuse3-dev
  pkg-config
  gcc
  libc6-dev
)
"$(dirname "$0")/apt-install.sh" "${packages[@]}"
# From PyPI, in a venv of its own: grpcio (the gRPC project's own client and health stub), for
# `readygate serve`'s gRPC health tests (tests/it/support/served.rs names the path); and
# prometheus_client, whose parser reads what /metrics answers (tests/it/support/scraped.rs).
venv=/opt/readygate-test-python
imports='import grpc, grpc_health.v1.health_pb2_grpc, prometheus_client.parser'
if ! "$venv/bin/python3" -c "$imports" 2>/dev/null; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    'grpcio==1.*' 'grpcio-health-checking==1.*' 'prometheus-client==0.*' >&2
fi
# Checked, not assumed: the serve gRPC and metrics tests fail by name without them.
"$venv/bin/python3" -c "$imports"
# The Apache Kafka broker of the kafka:// tests, as jars from Maven Central (cached).
"$(dirname "$0")/install-kafka.sh"
# Packages that start their service on install (on a machine that runs systemd): the suite
# starts its own servers, so these would only hold memory and default ports.
if [[ -d /run/systemd/system ]]; then
  for service in postgresql mariadb rabbitmq-server memcached nats-server zookeeper redis-server; do
    systemctl disable --now "$service" >/dev/null 2>&1 || true
  done
fi
