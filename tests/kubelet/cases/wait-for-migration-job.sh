# examples/wait-for-migration-job.yaml: the init container waits, through the real API server
# with the example's least-privilege Role, until the Job is Complete; a Failed Job ends the
# wait at once with its reason; without the grant the wait says which grant is missing. No
# controllers run here: the case creates the Deployment's pods itself and writes the Job's
# status as the Job controller would, through the status subresource. The pods use the host's
# network and no kube-proxy runs, so they are told the API server's address (127.0.0.1) in
# KUBERNETES_SERVICE_HOST/PORT, which a cluster sets to the `kubernetes` Service.
# case: wait-for-migration-job happy migration_happy
# case: wait-for-migration-job failed migration_failed
# case: wait-for-migration-job forbidden migration_forbidden

# The example's objects of KIND ... into NS.
migration_create() {
  local ns="$1"; shift
  local kinds; kinds="$(jq -cn '$ARGS.positional' --args "$@")"
  objects wait-for-migration-job.yaml | jq -c --argjson kinds "$kinds" 'select(.kind as $k | $kinds | index($k))' |
    k -n "$ns" create -f - >/dev/null
}

# Replica N of the Deployment, as pod web-N; JQ changes it further.
migration_pod() {
  local ns="$1" n="$2" jq_change="${3:-.}"
  create_pod "$ns" "$(pod_from wait-for-migration-job.yaml "web-$n" "
    .spec.initContainers[0].env = [{name: \"KUBERNETES_SERVICE_HOST\", value: \"127.0.0.1\"},
                                   {name: \"KUBERNETES_SERVICE_PORT\", value: \"$API_PORT\"}]
    | $jq_change" Deployment)"
}

# Sets the Job's status as the Job controller does when it ends (TYPE Complete or Failed).
migration_finish_job() {
  local ns="$1" type="$2" now status
  now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  if [[ $type == Complete ]]; then
    status="$(jq -cn --arg now "$now" '{status: {startTime: $now, completionTime: $now, succeeded: 1,
      conditions: [{type: "SuccessCriteriaMet", status: "True", reason: "CompletionsReached",
                    message: "Reached expected number of succeeded pods", lastTransitionTime: $now, lastProbeTime: $now},
                   {type: "Complete", status: "True", reason: "CompletionsReached",
                    message: "Reached expected number of succeeded pods", lastTransitionTime: $now, lastProbeTime: $now}]}}')"
  else
    status="$(jq -cn --arg now "$now" '{status: {startTime: $now, failed: 4,
      conditions: [{type: "FailureTarget", status: "True", reason: "BackoffLimitExceeded",
                    message: "Job has reached the specified backoff limit", lastTransitionTime: $now, lastProbeTime: $now},
                   {type: "Failed", status: "True", reason: "BackoffLimitExceeded",
                    message: "Job has reached the specified backoff limit", lastTransitionTime: $now, lastProbeTime: $now}]}}')"
  fi
  k -n "$ns" patch job db-migrate --subresource=status --type=merge -p "$status" >/dev/null
}

migration_happy() {
  local ns="$1" n log
  migration_create "$ns" ServiceAccount Role RoleBinding
  for n in 1 2; do migration_pod "$ns" "$n"; done
  # No Job yet: the replicas wait, saying so.
  wait_pod "$ns" web-1 '.status.initContainerStatuses[0].state.running' 60 "the init container did not run"
  local end=$((SECONDS + 20))
  until k -n "$ns" logs web-1 -c wait-for-migration 2>/dev/null | grep -q "no job db-migrate in $ns (yet)"; do
    ((SECONDS < end)) || fail "the wait did not say the Job is missing: $(k -n "$ns" logs web-1 -c wait-for-migration)"
    sleep 0.5
  done
  migration_create "$ns" Job
  migration_finish_job "$ns" Complete
  local patched=$SECONDS
  for n in 1 2; do
    wait_pod "$ns" "web-$n" '.status.initContainerStatuses[0].state.terminated' 30 "replica $n did not see the Job complete"
  done
  local seen=$((SECONDS - patched))
  for n in 1 2; do
    pod_json "$ns" "web-$n" | status_of wait-for-migration | jq -e '.state.terminated.exitCode == 0' >/dev/null ||
      fail "replica $n's wait did not exit 0: $(pod_summary "$ns" "web-$n")"
    wait_pod "$ns" "web-$n" '.status.containerStatuses[0].state.running' 30 "replica $n's app did not start"
  done
  echo "both replicas waited ('no job db-migrate in $ns (yet)'), then exit 0 within ${seen} s of Complete; apps run"
}

migration_failed() {
  local ns="$1" term
  migration_create "$ns" ServiceAccount Role RoleBinding Job
  migration_pod "$ns" 1
  wait_pod "$ns" web-1 '.status.initContainerStatuses[0].state.running' 60 "the init container did not run"
  migration_finish_job "$ns" Failed
  local patched=$SECONDS
  wait_pod "$ns" web-1 '.status.initContainerStatuses[0] | .state.terminated // .lastState.terminated' 30 \
    "the wait did not end when the Job failed"
  local seen=$((SECONDS - patched))
  term="$(pod_json "$ns" web-1 | status_of wait-for-migration | jq -c '.state.terminated // .lastState.terminated')"
  echo "wait-for-migration ended: $term" >&2
  jq -e '.exitCode == 1' <<<"$term" >/dev/null || fail "the wait did not exit 1: $term"
  jq -e '.message // "" | contains("job failed: BackoffLimitExceeded")' <<<"$term" >/dev/null ||
    fail "the termination message (kubectl describe's Message) does not carry the Job's reason: $term"
  pod_json "$ns" web-1 | status_of app | jq -e '.state.waiting' >/dev/null || fail "the app started although the Job failed"
  echo "exit 1 within ${seen} s of Failed, message '$(jq -r .message <<<"$term" | head -n 1)'; app held"
}

migration_forbidden() {
  local ns="$1" term
  # The ServiceAccount without its Role and RoleBinding; the deadline cut from 10 m to 5 s.
  migration_create "$ns" ServiceAccount Job
  migration_pod "$ns" 1 '.spec.initContainers[0].command |= (.[index("--timeout") + 1] = "5s")'
  wait_pod "$ns" web-1 '.status.initContainerStatuses[0] | .state.terminated // .lastState.terminated' 60 \
    "the wait did not end at its deadline"
  term="$(pod_json "$ns" web-1 | status_of wait-for-migration | jq -c '.state.terminated // .lastState.terminated')"
  echo "wait-for-migration ended: $term" >&2
  local want="forbidden: get jobs/db-migrate in $ns — grant get on jobs (apiGroup \"batch\") to the pod's service account"
  jq -e --arg want "$want" '.exitCode == 1 and (.message // "" | contains($want))' <<<"$term" >/dev/null ||
    fail "the wait did not end with exit 1 and the documented 403 reason: $term"
  echo "exit 1 at 5 s, message names the missing grant: '$want'"
}
