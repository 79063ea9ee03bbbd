# examples/job-legacy-sidecar-on-exit.yaml: `wait --on-exit` stops the old-style sidecar when
# the work ends, so the pod completes. (No Job controller here: the case runs the Job's pod.)
# host ports: 9901
# case: job-legacy-sidecar-on-exit happy job_legacy_happy
# case: job-legacy-sidecar-on-exit failure job_legacy_failure

job_legacy_happy() {
  local ns="$1" pod json
  pod="$(pod_from job-legacy-sidecar-on-exit.yaml job-legacy-1)"
  create_pod "$ns" "$pod"
  wait_pod "$ns" job-legacy-1 '.status.phase == "Succeeded"' 90 "the pod did not succeed"
  json="$(pod_json "$ns" job-legacy-1)"
  status_of work <<<"$json" | jq -e '.state.terminated.exitCode == 0' >/dev/null ||
    fail "work did not exit 0: $(pod_summary "$ns" job-legacy-1)"
  status_of envoy <<<"$json" | jq -e '.state.terminated.exitCode == 0' >/dev/null ||
    fail "envoy did not exit 0: $(pod_summary "$ns" job-legacy-1)"
  k -n "$ns" logs job-legacy-1 -c envoy | grep -q "POST /quitquitquit" ||
    fail "envoy did not exit through POST /quitquitquit"
  [[ "$(status_of work <<<"$json" | jq -r .state.terminated.finishedAt)" < "$(status_of envoy <<<"$json" | jq -r .state.terminated.finishedAt)" ||
     "$(status_of work <<<"$json" | jq -r .state.terminated.finishedAt)" == "$(status_of envoy <<<"$json" | jq -r .state.terminated.finishedAt)" ]] ||
    fail "envoy ended before the work"
  echo "Succeeded; work exit 0, then readygate's POST /quitquitquit ended envoy (exit 0)"
}

job_legacy_failure() {
  local ns="$1" pod json
  # envoy's admin port never listens; readygate's deadline is cut from 60 s to 5 s and the
  # pod's (activeDeadlineSeconds) to 25 s.
  pod="$(pod_from job-legacy-sidecar-on-exit.yaml job-legacy-1 '
    (.spec.containers[] | select(.name == "envoy")) |= (.command = $idle | del(.args))
    | (.spec.containers[] | select(.name == "work")) |= (.command |= map(if . == "60s" then "5s" else . end))
    | .spec.activeDeadlineSeconds = 25')"
  create_pod "$ns" "$pod"
  wait_pod "$ns" job-legacy-1 '.status.containerStatuses[] | select(.name == "work") | .state.terminated' 60 \
    "work did not end"
  json="$(pod_json "$ns" job-legacy-1)"
  local work
  work="$(status_of work <<<"$json")"
  echo "work: $work" >&2
  jq -e '.state.terminated.exitCode == 1' <<<"$work" >/dev/null || fail "work did not exit 1: $work"
  jq -e '.state.terminated.message // "" | contains("http://127.0.0.1:9901/ready: connection refused")' <<<"$work" >/dev/null ||
    fail "work's termination message does not carry readygate's reason: $work"
  status_of envoy <<<"$json" | jq -e '.state.running' >/dev/null ||
    fail "envoy is not left running by the refused POST: $(pod_summary "$ns" job-legacy-1)"
  wait_pod "$ns" job-legacy-1 '.status.phase == "Failed" and .status.reason == "DeadlineExceeded"' 60 \
    "the pod did not fail at its activeDeadlineSeconds"
  echo "work exit 1 with readygate's reason as its message; envoy kept running; Failed: DeadlineExceeded"
}
