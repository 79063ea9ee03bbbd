# k8s:// lists watched through the real API server: `pods?selector=` and `service/`, with a
# Role that grants `list` and `watch` (RBAC cannot narrow those by label). No scheduler or
# EndpointSlice controller runs, so the case writes what they would: a matching pod that is
# never scheduled (its status patched as the kubelet would write it) and the Service's
# EndpointSlice. readygate, the image's static binary, runs on the host with a token of the Role's ServiceAccount (as
# wait-for-migration-job's watch case does), its exit timed from the last change's return.
# case: k8s-watch lists watch_lists

watch_lists() {
  local ns="$1" binary account="$CASE_DIR/account" pid log="$CASE_DIR/wait.log" patched ended
  k -n "$ns" create serviceaccount waiter >/dev/null
  k -n "$ns" create role waiter --verb=list,watch --resource=pods,endpointslices.discovery.k8s.io >/dev/null
  k -n "$ns" create rolebinding waiter --role=waiter --serviceaccount="$ns:waiter" >/dev/null
  binary="$("$ROOT/images/static-build.sh" 2>/dev/null | tail -n 1)"
  mkdir -p "$account"
  k -n "$ns" create token waiter --duration 1h >"$account/token"
  cp "$CLUSTER/pki/ca.crt" "$account/ca.crt"
  printf '%s' "$ns" >"$account/namespace"
  k -n "$ns" create -f - >/dev/null <<<'{"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-1", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "app", "image": "localhost/readygate-test/busybox:base"}]}}'
  k -n "$ns" create -f - >/dev/null <<<'{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
    "metadata": {"name": "db-1", "labels": {"kubernetes.io/service-name": "db"}},
    "addressType": "IPv4", "ports": [{"port": 5432, "protocol": "TCP"}],
    "endpoints": [{"addresses": ["10.0.0.9"], "conditions": {"ready": false}}]}'

  # The kubelet and the API server's own informers may watch these too: counted before.
  local pods_before slices_before
  pods_before="$(open_watches pods)" slices_before="$(open_watches endpointslices)"
  KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$API_PORT" \
    READYGATE_K8S_SERVICEACCOUNT_DIR="$account" \
    "$binary" wait -v --timeout 60s 'k8s://pods?selector=app=web' k8s://service/db 2>"$log" &
  pid=$!
  # Both watches open: each target's first attempt logged, and the API server's gauges of open
  # watches up by one each.
  local end=$((SECONDS + 30))
  until grep -q 'pods?selector=app=web: attempt 1: 0 of 1 pods ready' "$log" &&
    grep -q 'service/db: attempt 1: service db has no ready endpoint' "$log" &&
    (($(open_watches endpointslices) > slices_before && $(open_watches pods) > pods_before)); do
    kill -0 "$pid" 2>/dev/null || fail "readygate ended early: $(tail -n 3 "$log")"
    ((SECONDS < end)) || fail "no two watches open within 30 s (open: pods $(open_watches pods), before $pods_before; endpointslices $(open_watches endpointslices), before $slices_before): $(tail -n 1 "$log")"
    sleep 0.05
  done

  k -n "$ns" patch endpointslice db-1 --type=json \
    -p '[{"op": "replace", "path": "/endpoints/0/conditions/ready", "value": true}]' >/dev/null
  end=$((SECONDS + 10))
  until grep -q 'k8s://service/db: ready after' "$log"; do
    ((SECONDS < end)) || fail "the EndpointSlice's ready endpoint was not seen within 10 s: $(tail -n 3 "$log")"
    sleep 0.05
  done
  kill -0 "$pid" 2>/dev/null || fail "readygate ended while the pod was not ready: $(tail -n 3 "$log")"

  k -n "$ns" patch pod web-1 --subresource=status --type=merge -p "{\"status\": {\"phase\": \"Running\",
    \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", \"lastTransitionTime\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}]}}" >/dev/null
  patched=$(date +%s%N)
  wait "$pid" || fail "readygate did not exit 0: $(tail -n 3 "$log")"
  ended=$(date +%s%N)
  ! grep -q 'grant watch\|watch broke' "$log" || fail "a watch was refused or broke: $(grep 'grant watch\|watch broke' "$log")"
  local ms=$(((ended - patched) / 1000000))
  # Polling would see it up to 5 s late; a loaded machine still answers within 2 s.
  ((ms <= 2000)) || fail "readygate exited $ms ms after the pod became Ready (over 2 s)"
  echo "pods?selector= and service/ watched (list + watch Role): slice ready seen, then exit $ms ms after the pod's Ready patch returned"
}
