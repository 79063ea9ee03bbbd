# examples/native-sidecar-poststart.yaml: the sidecar's postStart hook (readygate wait) holds
# the app until nginx answers; past its deadline the hook fails and the kubelet restarts it.
# host ports: 8080
# case: native-sidecar-poststart happy poststart_happy
# case: native-sidecar-poststart failure poststart_failure

poststart_happy() {
  local ns="$1" pod json
  pod="$(pod_from native-sidecar-poststart.yaml web)"
  create_pod "$ns" "$pod"
  wait_ready "$ns" web 60
  k -n "$ns" logs web -c app | grep -q "proxy served before app started" ||
    fail "the app did not find the proxy serving when it started"
  json="$(pod_json "$ns" web)"
  jq -e '[.status.initContainerStatuses[], .status.containerStatuses[]] | all(.restartCount == 0)' \
    <<<"$json" >/dev/null || fail "a container restarted: $(pod_summary "$ns" web)"
  [[ -z "$(events "$ns" web FailedPostStartHook)" ]] || fail "the postStart hook failed"
  echo "Ready; the hook held the app until the proxy served; no restarts"
}

poststart_failure() {
  local ns="$1" pod
  # nginx never serves; the hook's deadline is cut from 60 s to 3 s to see it pass.
  pod="$(pod_from native-sidecar-poststart.yaml web '
    (.spec.initContainers[] | select(.name == "proxy")) |= (
      .command = $idle
      | .lifecycle.postStart.exec.command |= map(if . == "60s" then "3s" else . end))')"
  create_pod "$ns" "$pod"
  # The events say only "PostStartHook failed"; readygate's reason is in the container's
  # status: its waiting message (the hook's output) and, through /dev/termination-log that
  # the hook's wait writes, its last termination message.
  local event
  event="$(wait_event "$ns" web FailedPostStartHook "" 60)"
  [[ "$event" == "PostStartHook failed" ]] || fail "the hook's event says more than expected: $event"
  wait_event "$ns" web Killing "FailedPostStartHook" 30 >/dev/null
  wait_pod "$ns" web '.status.initContainerStatuses[] | select(.name == "proxy") | .lastState.terminated' 60 \
    "the sidecar's last state shows no termination after its hook failed"
  local proxy
  proxy="$(pod_json "$ns" web | status_of proxy)"
  echo "proxy: $proxy" >&2
  jq -e '.lastState.terminated.message // "" | contains("readygate: not ready: http://127.0.0.1:8080/: connection refused")' <<<"$proxy" >/dev/null ||
    fail "the sidecar's last termination message does not carry readygate's reason: $proxy"
  jq -e '.state.waiting == null or (.state.waiting.message // "" | contains("http://127.0.0.1:8080/: connection refused"))' <<<"$proxy" >/dev/null ||
    fail "the sidecar's waiting message does not carry readygate's reason: $proxy"
  pod_json "$ns" web | status_of app | jq -e '.state.waiting' >/dev/null ||
    fail "the app started although the hook failed: $(pod_summary "$ns" web)"
  echo "event 'PostStartHook failed' only; proxy killed (exit $(jq .lastState.terminated.exitCode <<<"$proxy")), its last message '$(jq -r .lastState.terminated.message <<<"$proxy" | head -n 1)'; app held"
}
