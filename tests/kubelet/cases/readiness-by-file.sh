# examples/readiness-by-file.yaml: readygate waits for the aggregator, touches /shared/ready and
# execs fluent-bit; the startupProbe checks the file; the app starts after it.
# host ports: 24224
# case: readiness-by-file happy by_file_happy
# case: readiness-by-file failure by_file_failure

by_file_happy() {
  local ns="$1" pod json
  pod="$(pod_from readiness-by-file.yaml web)"
  create_pod "$ns" "$pod"
  # Not ready while the aggregator is missing; then it starts.
  wait_event "$ns" web Unhealthy "file:///shared/ready" 40 >/dev/null
  standin_pod "$ns" fluentd "$TEST_REPO/fluentd:latest"
  wait_ready "$ns" web 60
  k -n "$ns" logs web -c log-shipper | grep -q "fluent-bit: running" || fail "fluent-bit did not run"
  k -n "$ns" logs web -c app | grep -q "the log shipper was up before this line" || fail "the app did not run"
  json="$(pod_json "$ns" web)"
  jq -e '[.status.initContainerStatuses[], .status.containerStatuses[]] | all(.restartCount == 0)' \
    <<<"$json" >/dev/null || fail "a container restarted: $(pod_summary "$ns" web)"
  echo "Ready; probe said 'file:///shared/ready' missing until the aggregator ran; fluent-bit, then the app; no restarts"
}

by_file_failure() {
  local ns="$1" pod last
  # No aggregator; readygate's deadline is cut to 5 s (the example's is shorter than the
  # startupProbe's budget, so readygate reports before the kubelet kills it).
  pod="$(pod_from readiness-by-file.yaml web '
    (.spec.initContainers[] | select(.name == "log-shipper")) |= (
      .command |= (.[index("--timeout") + 1] = "5s"))')"
  create_pod "$ns" "$pod"
  last="$(last_exit_1 "$ns" web log-shipper 60)"
  jq -e '.message // "" | contains("tcp://fluentd.logging.svc.cluster.local:24224")' <<<"$last" >/dev/null ||
    fail "the log shipper's last state does not name the aggregator: $last"
  pod_json "$ns" web | status_of app | jq -e '.state.waiting' >/dev/null ||
    fail "the app started without its log shipper: $(pod_summary "$ns" web)"
  echo "log-shipper exit 1 at readygate's 5 s deadline, message '$(jq -r .message <<<"$last" | head -n 1)'; app held"
}
