# examples/wait-for-migration-job.yaml: the init container waits, through the real API server
# with the example's least-privilege Role, until the Job is Complete; a Failed Job ends the
# wait at once with its reason; without the grant the wait says which grant is missing. No
# Job controller runs here, and the Deployment is never created: the case creates its pods
# itself and writes the Job's status as the Job controller would, through the status
# subresource. The pods use the host's
# network and no kube-proxy runs, so they are told the API server's address (127.0.0.1) in
# KUBERNETES_SERVICE_HOST/PORT, which a cluster sets to the `kubernetes` Service.
# case: wait-for-migration-job happy migration_happy
# case: wait-for-migration-job failed migration_failed
# case: wait-for-migration-job forbidden migration_forbidden
# case: wait-for-migration-job watch migration_watch
# case: wait-for-migration-job missing migration_missing
# case: wait-for-migration-job get-only migration_get_only

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
  wait_log "$ns" web-1 wait-for-migration "no job db-migrate in $ns (yet)" 20 "the wait did not say the Job is missing"
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

# The watch: readygate run on the host (the image's static binary, so the time is its own and
# not the kubelet's status sync) with the example's Role, a token of its ServiceAccount and
# the cluster's CA, as the kubelet mounts them. Each round creates the Job, waits until
# readygate's watch is open (its first attempt logged, and the API server's gauge of open
# watches of jobs at 1: no controller watches Jobs here), patches the Job to Complete and
# times readygate's exit from the patch's return.
migration_watch() {
  local ns="$1" binary round pid patch patched ended ms all=() from_start=()
  migration_create "$ns" ServiceAccount Role RoleBinding
  binary="$(migration_on_host "$ns")"
  for round in 1 2 3; do
    until_no_job_watch "round $round"
    migration_create "$ns" Job
    migration_wait_on_host "$binary" "$CASE_DIR/wait-$round.log"
    pid=$!
    local end=$((SECONDS + 30))
    until grep -q 'attempt 1: job not complete' "$CASE_DIR/wait-$round.log" &&
      (($(open_watches jobs) == 1)); do
      kill -0 "$pid" 2>/dev/null || fail "round $round: readygate ended before the Job did: $(tail -n 3 "$CASE_DIR/wait-$round.log")"
      ((SECONDS < end)) || fail "round $round: no watch open within 30 s: $(tail -n 3 "$CASE_DIR/wait-$round.log")"
      sleep 0.05
    done
    patch=$(date +%s%N)
    migration_finish_job "$ns" Complete
    patched=$(date +%s%N)
    wait "$pid" || fail "round $round: readygate did not exit 0: $(tail -n 3 "$CASE_DIR/wait-$round.log")"
    ended=$(date +%s%N)
    ! grep -q 'grant watch' "$CASE_DIR/wait-$round.log" ||
      fail "round $round: the example's Role did not let readygate watch: $(grep 'grant watch' "$CASE_DIR/wait-$round.log")"
    ms=$(((ended - patched) / 1000000))
    echo "round $round: exit $ms ms after kubectl patch returned ($(((ended - patch) / 1000000)) ms after it started)"
    # Polling would see it up to 5 s late; a loaded machine still answers within 2 s.
    ((ms <= 2000)) || fail "round $round: readygate exited $ms ms after the Job completed (over 2 s)"
    all+=("$ms")
    from_start+=("$(((ended - patch) / 1000000))")
    k -n "$ns" delete job db-migrate --wait=true >/dev/null
  done
  median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
  echo "watch: exit $(median "${all[@]}") ms (median of ${all[*]}) after kubectl patch returned, $(median "${from_start[@]}") ms (of ${from_start[*]}) after it started"
}

# The example's ServiceAccount as the kubelet mounts it (a token, the cluster's CA, the
# namespace) in $CASE_DIR/account, for readygate run on the host; prints readygate's static
# binary.
migration_on_host() {
  local ns="$1" account="$CASE_DIR/account"
  mkdir -p "$account"
  k -n "$ns" create token web --duration 1h >"$account/token"
  cp "$CLUSTER/pki/ca.crt" "$account/ca.crt"
  printf '%s' "$ns" >"$account/namespace"
  "$ROOT/images/static-build.sh" 2>/dev/null | tail -n 1
}

# Waits (30 s at most) until no watch of jobs is open in the cluster: the API server's gauge
# counts every watch, an earlier round's or case's too. WHEN names the moment in the failure.
until_no_job_watch() {
  local end=$((SECONDS + 30))
  until (($(open_watches jobs) == 0)); do
    ((SECONDS < end)) || fail "$1: a watch of jobs is still open after 30 s"
    sleep 0.1
  done
}

# Starts BINARY's `wait -v` for the Job on the host, in the background, as the pod's service
# account (migration_on_host), its log in LOG; $! is its PID.
migration_wait_on_host() {
  KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$API_PORT" \
    READYGATE_K8S_SERVICEACCOUNT_DIR="$CASE_DIR/account" \
    "$1" wait -v --timeout 60s k8s://job/db-migrate 2>"$2" &
}

# A Job that does not exist yet: readygate watches it from now (no resourceVersion), which the
# example's Role allows through resourceNames (the watch's name field selector). An API server
# whose etcd cannot report watch progress (RequestWatchProgress: Debian's etcd here) does not
# answer such a watch until its cache has caught up, so readygate polls the missing Job
# instead, its reason staying "no job … (yet)". Either way the Job's creation and completion
# end the wait: within 2 s through a watch, within the 5 s poll interval otherwise.
migration_missing() {
  local ns="$1" binary pid patched ended ms how log="$CASE_DIR/wait.log"
  migration_create "$ns" ServiceAccount Role RoleBinding
  binary="$(migration_on_host "$ns")"
  until_no_job_watch "before the wait"
  migration_wait_on_host "$binary" "$log"
  pid=$!
  local end=$((SECONDS + 30))
  until grep -q "no job db-migrate in $ns (yet)" "$log" &&
    { grep -q 'cannot watch from now' "$log" || (($(open_watches jobs) == 1)); }; do
    kill -0 "$pid" 2>/dev/null || fail "readygate ended before the Job existed: $(tail -n 3 "$log")"
    ((SECONDS < end)) || fail "neither a watch nor polling of the missing Job within 30 s: $(tail -n 3 "$log")"
    sleep 0.05
  done
  how=watched
  ! grep -q 'cannot watch from now' "$log" || how=polled
  migration_create "$ns" Job
  migration_finish_job "$ns" Complete
  patched=$(date +%s%N)
  wait "$pid" || fail "readygate did not exit 0: $(tail -n 3 "$log")"
  ended=$(date +%s%N)
  ! grep -q 'grant watch' "$log" || fail "the Role did not let readygate watch the missing Job: $(grep 'grant watch' "$log")"
  ! grep -q 'attempt [0-9]*: no answer to the watch' "$log" ||
    fail "an attempt gave the watch's failure as its reason: $(grep -m 1 'attempt [0-9]*: no answer' "$log")"
  ms=$(((ended - patched) / 1000000))
  local limit=2000
  [[ $how == watched ]] || limit=6000
  ((ms <= limit)) || fail "readygate exited $ms ms after the Job completed (over $limit ms, $how)"
  echo "missing Job $how ($(grep -o 'cannot watch from now ([^)]*)' "$log" | head -n 1)), exit $ms ms after kubectl patch returned"
}

# A Role that grants get but not watch (as before readygate watched): the watch's 403 turns
# the wait to polling at once with one warning naming the verb to grant, and the wait still
# ends when the Job completes.
migration_get_only() {
  local ns="$1" logs grant
  migration_create "$ns" ServiceAccount RoleBinding Job
  objects wait-for-migration-job.yaml | jq -c 'select(.kind == "Role") | .rules[0].verbs = ["get"]' |
    k -n "$ns" create -f - >/dev/null
  migration_pod "$ns" 1
  grant='polling with get instead — grant watch on jobs (apiGroup "batch") to the pod'"'"'s service account'
  wait_log "$ns" web-1 wait-for-migration "$grant" 60 "no warning naming the watch grant"
  migration_finish_job "$ns" Complete
  wait_pod "$ns" web-1 '.status.initContainerStatuses[0].state.terminated' 30 "the polling wait did not see the Job complete"
  pod_json "$ns" web-1 | status_of wait-for-migration | jq -e '.state.terminated.exitCode == 0' >/dev/null ||
    fail "the polling wait did not exit 0: $(pod_summary "$ns" web-1)"
  logs="$(k -n "$ns" logs web-1 -c wait-for-migration)"
  echo "$logs" >&2
  (($(grep -c 'grant watch' <<<"$logs") == 1)) || fail "not one warning: $(grep 'grant watch' <<<"$logs")"
  echo "get-only Role: one warning ('$(grep -o 'forbidden: watch.*' <<<"$logs" | head -n 1)'), polled, exit 0"
}
