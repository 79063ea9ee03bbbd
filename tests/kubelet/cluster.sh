# A one-node cluster for tests/kubelet/run.sh, sourced: Debian's etcd and containerd (with
# runc), kube-apiserver, kube-controller-manager (the Deployment and ReplicaSet controllers only)
# and the kubelet built by build.sh, each with its own folder under $CLUSTER, certificates made
# here with openssl and a static token file. No scheduler: pods, and Deployments' pod templates,
# name their node (`localhost`). Everything listens on 127.0.0.1 only
# but the kubelet (on the machine's address, see start_kubelet), and every process started is
# recorded by PID so that cluster_down stops exactly those.
#
# Needs: $KUBE_BIN (build.sh's folder), $CLUSTER (an empty folder).

# A TCP port nothing listens on now.
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 20000))
    ss -Hltn "sport = :$port" | grep -q . || { echo "$port"; return; }
  done
}

# Starts "$@" in the background with its output in $CLUSTER/NAME.log and its PID in NAME.pid.
start_daemon() {
  local name="$1"; shift
  "$@" >"$CLUSTER/$name.log" 2>&1 &
  echo "$!" >"$CLUSTER/$name.pid"
}

# Waits up to SECONDS for COMMAND to succeed; on timeout shows LOG's tail and fails.
wait_until() {
  local seconds="$1" what="$2" log="$3"; shift 3
  local end=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= end)); then
      echo "kubelet tests: $what not up within ${seconds}s; last lines of $log:" >&2
      tail -n 30 "$log" >&2
      return 1
    fi
    sleep 0.5
  done
}

# The CA, the API server's serving certificate, its client certificate for the kubelet, and the
# service account signing key.
make_certs() {
  local d="$CLUSTER/pki"
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=readygate-test-ca" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  # The API server is reached as 127.0.0.1 (harness, kubelet, hostNetwork pods) and by its
  # in-cluster names.
  cat >"$d/apiserver.ext" <<EXT
subjectAltName = IP:127.0.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local, IP:10.0.0.1
extendedKeyUsage = serverAuth
EXT
  printf 'extendedKeyUsage = clientAuth\n' >"$d/client.ext"
  local name subject ext
  for name in apiserver apiserver-kubelet-client; do
    if [[ $name == apiserver ]]; then subject="/CN=kube-apiserver" ext=apiserver.ext
    else subject="/O=system:masters/CN=kube-apiserver-kubelet-client" ext=client.ext; fi
    openssl req -newkey rsa:2048 -nodes -subj "$subject" -keyout "$d/$name.key" \
      -out "$d/$name.csr" 2>/dev/null
    openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
      -days 2 -extfile "$d/$ext" -out "$d/$name.crt" 2>/dev/null
  done
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
}

# A kubeconfig for TOKEN at $CLUSTER/NAME.kubeconfig.
make_kubeconfig() {
  local name="$1" token="$2"
  cat >"$CLUSTER/$name.kubeconfig" <<CONF
apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$CLUSTER/pki/ca.crt"}
users:
  - name: $name
    user: {token: "$token"}
contexts:
  - name: test
    context: {cluster: test, user: $name}
current-context: test
CONF
}

start_etcd() {
  ETCD_PORT="$(free_port)"
  local peer; peer="$(free_port)"
  start_daemon etcd etcd --name node --data-dir "$CLUSTER/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "node=http://127.0.0.1:$peer" \
    --listen-metrics-urls "" --log-level warn
  wait_until 30 etcd "$CLUSTER/etcd.log" \
    curl -sf "http://127.0.0.1:$ETCD_PORT/health"
}

start_apiserver() {
  API_PORT="$(free_port)"
  local d="$CLUSTER/pki" admin kubelet controllers
  admin="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  kubelet="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  controllers="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  # The static token file: the harness is a cluster admin, the kubelet the node `localhost`,
  # the controller-manager the user that the API server's bootstrap RBAC grants its role to.
  {
    printf '%s,admin,admin,"system:masters"\n' "$admin"
    printf '%s,system:node:localhost,kubelet,"system:nodes"\n' "$kubelet"
    printf '%s,system:kube-controller-manager,kube-controller-manager\n' "$controllers"
  } >"$CLUSTER/tokens.csv"
  # Admission: the defaults (PodSecurity among them since 1.25; make_admission_namespaces checks
  # that it refuses a pod that is not restricted) and NodeRestriction.
  start_daemon kube-apiserver "$KUBE_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --secure-port "$API_PORT" --advertise-address "$NODE_IP" \
    --cert-dir "$CLUSTER/apiserver" \
    --tls-cert-file "$d/apiserver.crt" --tls-private-key-file "$d/apiserver.key" \
    --client-ca-file "$d/ca.crt" --token-auth-file "$CLUSTER/tokens.csv" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$d/sa.pub" --service-account-signing-key-file "$d/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 \
    --kubelet-client-certificate "$d/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$d/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP \
    --profiling=false --v 1
  make_kubeconfig admin "$admin"
  make_kubeconfig kubelet "$kubelet"
  make_kubeconfig kube-controller-manager "$controllers"
  export KUBECONFIG="$CLUSTER/admin.kubeconfig"
  wait_until 120 kube-apiserver "$CLUSTER/kube-apiserver.log" \
    "$KUBE_BIN/kubectl" get --raw /readyz
}

# The Deployment and ReplicaSet controllers, so that a Deployment's pods are created as in a
# cluster and meet admission (webhooks among it) as the ReplicaSet controller's. No other
# controller: the cases write Jobs' status and count the open watches of jobs themselves, make
# each namespace's ServiceAccount, and delete what they leave (no garbage collector). Each
# controller with its own service account's token (--use-service-account-credentials), as
# kubeadm runs it; one instance, so no leader election; its health port on 127.0.0.1.
start_controller_manager() {
  local port; port="$(free_port)"
  start_daemon kube-controller-manager "$KUBE_BIN/kube-controller-manager" \
    --kubeconfig "$CLUSTER/kube-controller-manager.kubeconfig" \
    --controllers deployment-controller,replicaset-controller \
    --use-service-account-credentials --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "$port" --cert-dir "$CLUSTER/kube-controller-manager" \
    --profiling=false --v 1
  wait_until 60 kube-controller-manager "$CLUSTER/kube-controller-manager.log" \
    curl -sfk "https://127.0.0.1:$port/healthz"
}

# The pause image is readygate-test's own (images.sh); CRI restricts oom_score_adj because root
# here may lack CAP_SYS_RESOURCE (without it runc fails: "can't get final child's PID from
# pipe: EOF"); no CNI: every pod of the tests uses the host's network.
start_containerd() {
  local d="$CLUSTER/containerd"
  mkdir -p "$d/cni/bin" "$d/cni/conf"
  CONTAINERD_SOCK="$d/containerd.sock"
  cat >"$d/config.toml" <<CONF
version = 2
root = "$d/root"
state = "$d/state"
[grpc]
  address = "$CONTAINERD_SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$d/cni/bin"
    conf_dir = "$d/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
CONF
  start_daemon containerd containerd --config "$d/config.toml"
  wait_until 30 containerd "$CLUSTER/containerd.log" \
    ctr --address "$CONTAINERD_SOCK" version
}

start_kubelet() {
  local d="$CLUSTER/kubelet"
  mkdir -p "$d"
  KUBELET_PORT="$(free_port)"
  cat >"$d/config.yaml" <<CONF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzPort: 0
cgroupDriver: cgroupfs
failSwapOn: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
podLogsDir: $d/pod-logs
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$CLUSTER/pki/ca.crt"}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
# The machine's disk and memory are shared: never evict a test's pod.
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
# The machine's firewall is not the tests' to change (KUBE-FIREWALL, canary chains).
makeIPTablesUtilChains: false
CONF
  # The kubelet refuses a loopback node IP: it takes the machine's address and listens there
  # (client certificates of the cluster's CA only), where the API server reaches it: its node
  # proxy (`nodes/NODE/proxy`, through which doctor reads the kubelet's metrics) refuses a
  # loopback address ("address not allowed").
  start_daemon kubelet "$KUBE_BIN/kubelet" --config "$d/config.yaml" \
    --kubeconfig "$CLUSTER/kubelet.kubeconfig" --root-dir "$d/root" --cert-dir "$d/pki" \
    --hostname-override localhost --node-ip "$NODE_IP" --v 1
  wait_until 120 "node localhost" "$CLUSTER/kubelet.log" \
    "$KUBE_BIN/kubectl" get node localhost
}


cluster_up() {
  NODE_IP="$(ip -4 -o addr show scope global | awk 'NR == 1 { sub("/.*", "", $4); print $4 }')"
  [[ -n "$NODE_IP" ]] || { echo "kubelet tests: no non-loopback IPv4 address for the node" >&2; return 1; }
  make_certs
  start_etcd
  start_apiserver
  start_controller_manager
  start_containerd
}

# Stops one process started by start_daemon, by its PID: TERM, then KILL after 10 s.
stop_daemon() {
  local pid
  pid="$(cat "$CLUSTER/$1.pid" 2>/dev/null)" || return 0
  if kill -TERM "$pid" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  rm -f "$CLUSTER/$1.pid"
}

# Stops what cluster_up started: the controller-manager (it creates no more pods), the kubelet,
# then the containers it left (their shims outlive containerd otherwise), then containerd, the
# API server and etcd; then unmounts what they mounted under $CLUSTER and removes the kubelet's
# empty cgroups.
cluster_down() {
  stop_daemon kube-controller-manager
  stop_daemon kubelet
  if [[ -f "$CLUSTER/containerd.pid" ]]; then
    local id
    for id in $(ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
      ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks delete --force "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr --address "$CONTAINERD_SOCK" -n k8s.io containers ls -q 2>/dev/null); do
      ctr --address "$CONTAINERD_SOCK" -n k8s.io containers delete "$id" >/dev/null 2>&1 || true
    done
  fi
  stop_daemon containerd
  stop_daemon kube-apiserver
  stop_daemon etcd
  awk -v dir="$CLUSTER" 'index($5, dir) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r mount; do umount -l "$mount" 2>/dev/null || true; done
  find /sys/fs/cgroup/*/kubepods -depth -type d -exec rmdir {} + 2>/dev/null || true
}
