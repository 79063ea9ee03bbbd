# examples/install-and-wrap.yaml: readygate installs itself into an emptyDir, then wraps the
# app's command: /app/server runs once the database accepts connections.
# host ports: 5432
# case: install-and-wrap happy wrap_happy
# case: install-and-wrap failure wrap_failure

wrap_happy() {
  local ns="$1" pod json
  pod="$(pod_from install-and-wrap.yaml web)"
  create_pod "$ns" "$pod"
  wait_ready "$ns" web 60
  # Ready comes before /app/server runs (no readinessProbe): wait for the server's own line.
  wait_log "$ns" web app "app: started" 30 "/app/server did not start"
  k -n "$ns" logs web -c app | grep -q "app: started; the database listens on port 5432" ||
    fail "the app started before its database listened: $(k -n "$ns" logs web -c app)"
  json="$(pod_json "$ns" web)"
  jq -e '[.status.containerStatuses[]] | all(.restartCount == 0)' <<<"$json" >/dev/null ||
    fail "a container restarted: $(pod_summary "$ns" web)"
  echo "Ready; /app/server ran once port 5432 listened; no restarts"
}

wrap_failure() {
  local ns="$1" pod last
  # The database never listens; readygate's deadline cut from 2 m to 5 s.
  pod="$(pod_from install-and-wrap.yaml web '
    (.spec.containers[] | select(.name == "db")) |= (.command = $idle)
    | (.spec.containers[] | select(.name == "app")) |= (.command |= (.[index("--timeout") + 1] = "5s"))')"
  create_pod "$ns" "$pod"
  # With no readinessProbe the pod is Ready while readygate still waits (as the example says).
  wait_ready "$ns" web 30 \
    "the pod did not become Ready while readygate waited"
  ! k -n "$ns" logs web -c app | grep -q "app: started" || fail "/app/server ran without its database"
  last="$(last_exit_1 "$ns" web app 60)"
  jq -e '.message // "" | contains("tcp://127.0.0.1:5432: connection refused")' <<<"$last" >/dev/null ||
    fail "the app's last state does not carry readygate's reason: $last"
  ! k -n "$ns" logs web -c app --previous | grep -q "app: started" || fail "/app/server ran without its database"
  echo "Ready while readygate waited (no readinessProbe); app exit 1 at 5 s, message 'tcp://127.0.0.1:5432: connection refused'; restarted; /app/server never ran"
}
