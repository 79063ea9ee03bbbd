# examples/native-sidecar-startup-probe.yaml: the sidecar's startupProbe (readygate probe)
# holds the app until nginx answers.
# host ports: 8080
# case: native-sidecar-startup-probe happy native_startup_happy
# case: native-sidecar-startup-probe failure native_startup_failure

native_startup_happy() {
  local ns="$1" pod json
  pod="$(pod_from native-sidecar-startup-probe.yaml web)"
  create_pod "$ns" "$pod"
  wait_ready "$ns" web 60
  # nginx's stand-in answers 503 first: the kubelet's event carries the line probe printed.
  local event
  event="$(wait_event "$ns" web Unhealthy "http://127.0.0.1:8080/: status 503" 5)"
  [[ "$event" == "Startup probe failed: http://127.0.0.1:8080/: status 503" ]] ||
    fail "the probe event is not readygate's one line: $(jq -Rn --arg m "$event" '$m')"
  json="$(pod_json "$ns" web)"
  k -n "$ns" logs web -c app | grep -q "proxy served before app started" ||
    fail "the app did not find the proxy serving when it started"
  [[ "$(started_at proxy <<<"$json")" < "$(started_at app <<<"$json")" ||
     "$(started_at proxy <<<"$json")" == "$(started_at app <<<"$json")" ]] ||
    fail "the app started before the proxy"
  jq -e '[.status.initContainerStatuses[], .status.containerStatuses[]] | all(.restartCount == 0)' \
    <<<"$json" >/dev/null || fail "a container restarted: $(pod_summary "$ns" web)"
  echo "Ready; probe said 'status 503' then passed; app started after the proxy served; no restarts"
}

native_startup_failure() {
  local ns="$1" pod
  # nginx never serves: the sidecar runs, but nothing listens on port 8080.
  pod="$(pod_from native-sidecar-startup-probe.yaml web \
    '(.spec.initContainers[] | select(.name == "proxy")) |= (.command = $idle)')"
  create_pod "$ns" "$pod"
  local event
  event="$(wait_event "$ns" web Unhealthy "connection refused" 30)"
  [[ "$event" == "Startup probe failed: http://127.0.0.1:8080/: connection refused" ]] ||
    fail "the probe event is not readygate's one line: $(jq -Rn --arg m "$event" '$m')"
  # Seen failing a few times, the app is still held.
  local end=$((SECONDS + 30))
  until events "$ns" web Unhealthy | jq -e 'select(.count >= 3)' >/dev/null; do
    ((SECONDS < end)) || fail "the startupProbe did not fail 3 times within 30s"
    sleep 0.5
  done
  pod_json "$ns" web | status_of app | jq -e '.state.waiting' >/dev/null ||
    fail "the app started while the proxy's startupProbe failed: $(pod_summary "$ns" web)"
  pod_json "$ns" web | jq -e '.status.conditions[] | select(.type == "Ready") | .status == "False"' >/dev/null ||
    fail "the pod is Ready while its sidecar never served"
  echo "app held while 'Startup probe failed: http://127.0.0.1:8080/: connection refused' repeated"
}
