# examples/init-container-postgres-redis.yaml: the init container waits until PostgreSQL and
# Redis serve (57P03 and -LOADING are not ready), then the app starts.
# host ports: 5432 6379
# case: init-container-postgres-redis happy pg_redis_happy
# case: init-container-postgres-redis failure pg_redis_failure

PG_REDIS_PASSWORD=s3cret-from-the-secret

pg_redis_happy() {
  local ns="$1" pod json
  k -n "$ns" create secret generic cache --from-literal password="$PG_REDIS_PASSWORD" >/dev/null
  pod="$(pod_from init-container-postgres-redis.yaml web)"
  create_pod "$ns" "$pod"
  wait_pod "$ns" web '.status.initContainerStatuses[0].state.running' 60 "the init container did not run"
  standin_pod "$ns" db "$TEST_REPO/postgres:latest"
  standin_pod "$ns" cache "$TEST_REPO/redis:latest" \
    "$(jq -cn --arg p "$PG_REDIS_PASSWORD" '[{name: "REDIS_PASSWORD", value: $p}]')"
  wait_ready "$ns" web 60
  json="$(pod_json "$ns" web)"
  status_of wait-for-db-and-cache <<<"$json" | jq -e '.state.terminated.exitCode == 0 and .restartCount == 0' >/dev/null ||
    fail "the init container did not exit 0 at its first run: $(pod_summary "$ns" web)"
  k -n "$ns" logs web -c app | grep -q "app: started; the database listens on port 5432" ||
    fail "the app started before its database listened"
  k -n "$ns" logs db | grep -q 57P03 || fail "the database never answered 57P03"
  k -n "$ns" logs cache | grep -q "answered LOADING" || fail "the cache never answered LOADING"
  ! k -n "$ns" logs web -c wait-for-db-and-cache | grep -qF "$PG_REDIS_PASSWORD" ||
    fail "the Redis password reached readygate's output"
  echo "Ready; waited through 57P03 and -LOADING; init exit 0, then the app; password not in the log"
}

pg_redis_failure() {
  local ns="$1" pod last
  k -n "$ns" create secret generic cache --from-literal password="$PG_REDIS_PASSWORD" >/dev/null
  # Neither database nor cache; readygate's deadline cut from 5 m to 5 s.
  pod="$(pod_from init-container-postgres-redis.yaml web '
    .spec.initContainers[0].command |= (.[index("--timeout") + 1] = "5s")')"
  create_pod "$ns" "$pod"
  last="$(last_exit_1 "$ns" web wait-for-db-and-cache 60)"
  jq -e '.message // "" | contains("@db.default.svc:5432/orders: ") and contains("redis://cache.default.svc:6379: ")' <<<"$last" >/dev/null ||
    fail "the init container's last state does not name both targets: $last"
  ! grep -qF "$PG_REDIS_PASSWORD" <<<"$last" || fail "the Redis password reached the termination message"
  pod_json "$ns" web | status_of app | jq -e '.state.waiting' >/dev/null ||
    fail "the app started without its database: $(pod_summary "$ns" web)"
  echo "init exit 1 at 5 s, restarted; its message names both targets, not the password; app held"
}
