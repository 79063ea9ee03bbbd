# examples/job-native-sidecar.yaml: the Job's pod completes although its sidecar runs forever.
# The Job controller does not run here: the case runs the Job's pod as the controller would,
# and checks what the kubelet decides, the pod's phase.
# host ports: 9901
# case: job-native-sidecar happy job_native_happy
# case: job-native-sidecar failure job_native_failure

job_native_happy() {
  local ns="$1" pod json
  pod="$(pod_from job-native-sidecar.yaml job-native-sidecar-1)"
  create_pod "$ns" "$pod"
  wait_pod "$ns" job-native-sidecar-1 '.status.phase == "Succeeded"' 90 "the pod did not succeed"
  wait_event "$ns" job-native-sidecar-1 Unhealthy "http://127.0.0.1:9901/ready: status 503" 5 >/dev/null
  json="$(pod_json "$ns" job-native-sidecar-1)"
  status_of work <<<"$json" | jq -e '.state.terminated.exitCode == 0' >/dev/null ||
    fail "work did not exit 0: $(pod_summary "$ns" job-native-sidecar-1)"
  k -n "$ns" logs job-native-sidecar-1 -c work | grep -qx done || fail "the work did not run to its end"
  echo "Succeeded; envoy's probe said 'status 503' then passed; work exit 0; the kubelet stopped the sidecar"
}

job_native_failure() {
  local ns="$1" pod
  # envoy never gets ready; the pod's deadline (activeDeadlineSeconds) is cut to 20 s.
  pod="$(pod_from job-native-sidecar.yaml job-native-sidecar-1 '
    (.spec.initContainers[] | select(.name == "envoy")) |= (.command = $idle | del(.args))
    | .spec.activeDeadlineSeconds = 20')"
  create_pod "$ns" "$pod"
  wait_event "$ns" job-native-sidecar-1 Unhealthy "http://127.0.0.1:9901/ready: connection refused" 30 >/dev/null
  pod_json "$ns" job-native-sidecar-1 | jq -e '.status.phase == "Pending"' >/dev/null ||
    fail "the pod is not Pending while its sidecar never got ready"
  wait_pod "$ns" job-native-sidecar-1 '.status.phase == "Failed" and .status.reason == "DeadlineExceeded"' 60 \
    "the pod did not fail at its activeDeadlineSeconds"
  pod_json "$ns" job-native-sidecar-1 | status_of work | jq -e '.state.terminated == null or .state.terminated.startedAt == null' >/dev/null ||
    fail "work ran although envoy never got ready"
  echo "Pending with 'connection refused' probe events, then Failed: DeadlineExceeded at activeDeadlineSeconds; work never ran"
}
