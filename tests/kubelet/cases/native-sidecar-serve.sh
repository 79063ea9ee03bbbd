# examples/native-sidecar-serve.yaml: a built-in sidecar runs `readygate serve`; the app's
# readinessProbe (httpGet on port 9090) makes the pod Ready only while the database answers.
# On the host's network the kubelet's httpGet goes to the node's own address, which must
# route locally (checked).
# host ports: 5432 9090
# case: native-sidecar-serve happy serve_happy
# case: native-sidecar-serve failure serve_failure

# The kubelet's httpGet probes go to the pod's IP, here the node's: it must stay on this machine.
serve_route_is_local() {
  local ip
  ip="$(pod_json "$1" web | jq -r .status.podIP)"
  ip route get "$ip" | grep -q "^local $ip dev lo" || fail "pod IP $ip does not route locally: $(ip route get "$ip")"
}

serve_happy() {
  local ns="$1" json
  create_pod "$ns" "$(pod_from native-sidecar-serve.yaml web)"
  wait_pod "$ns" web '.status.podIP' 30 "the pod got no IP"
  serve_route_is_local "$ns"
  # Not Ready while the database is missing; then it starts (57P03 once, then answers).
  wait_event "$ns" web Unhealthy "Readiness probe failed" 40 >/dev/null
  standin_pod "$ns" db "$TEST_REPO/postgres:latest"
  wait_ready "$ns" web 60 \
    "the pod did not become Ready once the database answered"
  json="$(pod_json "$ns" web)"
  jq -e '[.status.initContainerStatuses[], .status.containerStatuses[]] | all(.restartCount == 0)' \
    <<<"$json" >/dev/null || fail "a container restarted: $(pod_summary "$ns" web)"
  echo "not Ready ('$(events "$ns" web Unhealthy | jq -r .message | head -n 1)') until the database answered, then Ready; no restarts"
}

serve_failure() {
  local ns="$1" n
  create_pod "$ns" "$(pod_from native-sidecar-serve.yaml web)"
  wait_pod "$ns" web '.status.podIP' 30 "the pod got no IP"
  serve_route_is_local "$ns"
  wait_pod "$ns" web '.status.containerStatuses[0].state.running' 30 "the app did not start"
  local end=$((SECONDS + 40))
  until events "$ns" web Unhealthy | jq -e 'select(.message | contains("Readiness probe failed")) | select(.count >= 3)' >/dev/null; do
    ((SECONDS < end)) || fail "the readinessProbe did not fail 3 times within 40s"
    sleep 0.5
  done
  pod_json "$ns" web | jq -e '.status.conditions[] | select(.type == "Ready") | .status == "False"' >/dev/null ||
    fail "the pod is Ready without its database"
  pod_json "$ns" web | status_of readiness | jq -e '.restartCount == 0 and .state.running' >/dev/null ||
    fail "the serve sidecar restarted (its /livez checks nothing): $(pod_summary "$ns" web)"
  echo "not Ready while the database is missing ('$(events "$ns" web Unhealthy | jq -r .message | head -n 1)'); the sidecar runs, no restarts"
}
