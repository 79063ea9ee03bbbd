# readygate-cluster webhook, run on the host and registered with the real API server by
# deploy/overlays/webhook's configuration (failurePolicy Ignore, the opt-in label
# readygate.dev/inject=enabled), its clientConfig a url on 127.0.0.1 and a CA the case made.
# admission: tests/kubelet/manifests/depends-on.yaml created as it is comes out mutated in the
# labelled namespace, and its containers start in order (the sidecar's startupProbe, then the
# gate, which holds the app until the database listens); the API server's second call (the
# reinvocation) is answered `unchanged`, so readygate's containers keep the service account's
# mount it added in between; in a namespace without the label an annotated pod is stored
# untouched and the webhook is never asked. down: with the webhook
# stopped (SIGSTOP: it accepts connections and never answers) a pod is admitted unmutated after
# the registration's timeout; with it gone (connection refused), at once. deployment: the same
# pod as the template of a Deployment, created with kubectl: the ReplicaSet controller's pod
# comes out mutated, is named in the webhook's log by its generateName, runs in the same order
# and the Deployment counts it available.
# host ports: 7301 7302
# case: webhook admission webhook_admission
# case: webhook deployment webhook_deployment
# case: webhook down webhook_down

# depends-on.yaml as this node runs it, on this case file's ports, its sidecar's name resolving
# to the host's loopback.
webhook_shop_pod() {
  k create --dry-run=client -o json -f "$HERE/manifests/depends-on.yaml" |
    jq -c 'del(.metadata.namespace) | walk(if type == "string" then gsub("7311"; "7301") | gsub("7312"; "7302") else . end)' |
    on_this_node | jq -c '.spec.hostAliases[0].hostnames += ["proxy.default.svc"]'
}

# A pod asking for a gate on nothing that will listen: mutated, it would never start.
webhook_gated_pod() {
  jq -cn --arg name "$1" '{apiVersion: "v1", kind: "Pod",
    metadata: {name: $name, annotations: {"readygate.dev/wait-for": "tcp://127.0.0.1:7301"}},
    spec: {terminationGracePeriodSeconds: 1,
           containers: [{name: "app", image: "busybox:1.36",
                         command: ["sh", "-c", "trap \"exit 0\" TERM; sleep 3600 & wait"]}]}}' |
    on_this_node
}

# Waits up to 30 s until the configuration is in effect in NS: a dry-run CREATE of pod JSON
# comes back with readygate's gate. The API server loads new configurations in the background.
webhook_in_effect() {
  local ns="$1" pod="$2" end=$((SECONDS + 30))
  until k -n "$ns" create --dry-run=server -o json -f - <<<"$pod" 2>/dev/null |
    jq -e '.spec.initContainers // [] | any(.name == "readygate-wait")' >/dev/null; do
    ((SECONDS < end)) || fail "the webhook was not asked within 30 s of its registration"
    sleep 0.2
  done
}

# The milliseconds `kubectl create` of pod JSON in NS takes; the pod's stored JSON to FILE.
timed_create() {
  local ns="$1" pod="$2" file="$3" began
  began=$(date +%s%N)
  k -n "$ns" create -o json -f - >"$file" <<<"$pod"
  echo $((($(date +%s%N) - began) / 1000000))
}

# depends-on.yaml's pod (webhook_shop_pod) as the template of a one-replica Deployment `shop`.
webhook_shop_deployment() {
  webhook_shop_pod | jq -c '{apiVersion: "apps/v1", kind: "Deployment", metadata: {name: "shop"},
    spec: {replicas: 1, selector: {matchLabels: {app: "shop"}},
           template: {metadata: {labels: {app: "shop"}, annotations: .metadata.annotations},
                      spec: .spec}}}'
}

# readygate's webhook for the case, its files in CASE_DIR/tls, registered for NS (labelled for
# it) and the other namespaces of the JSON list NAMESPACES, and in effect; the image it
# injects provided. At the case's end CLEANUP (optional) runs, then the webhook and its
# registration go.
webhook_serving() {
  local ns="$1" namespaces="$2" cleanup="${3:-:}" tls="$CASE_DIR/tls" image
  webhook_certs "$tls"
  start_webhook "$tls"
  trap "$cleanup; kill $WEBHOOK_PID 2>/dev/null || true; k delete mutatingwebhookconfiguration $ns >/dev/null 2>&1 || true" EXIT
  k label namespace "$ns" readygate.dev/inject=enabled >/dev/null
  register_webhook "$ns" "$WEBHOOK_PORT" "$tls" "$namespaces"
  webhook_in_effect "$ns" "$(webhook_gated_pod probe)"
  # The image the webhook names (inject's default) is readygate's, imported under that name.
  image="$(k -n "$ns" create --dry-run=server -o json -f - <<<"$(webhook_gated_pod probe)" |
    jq -r '.spec.initContainers[] | select(.name == "readygate-wait") | .image')"
  provide_image "$image"
}

webhook_admission() {
  local ns="$1" tls="$CASE_DIR/tls" plain stored verdicts
  plain="$(echo "$ns-plain" | cut -c1-63)"
  make_namespace "$plain"
  webhook_serving "$ns" "[\"$ns\", \"$plain\"]" "delete_pods $plain"

  create_pod "$ns" "$(webhook_shop_pod)"
  stored="$(container_names < <(pod_json "$ns" shop))"
  [[ "$stored" == "readygate-install proxy readygate-wait app" ]] ||
    fail "the admitted pod's containers are '$stored', not readygate-install proxy readygate-wait app"
  wait_line "$tls/webhook.log" "$WEBHOOK_PID" "mutated $ns/shop" >/dev/null
  # The reinvocation (reinvocationPolicy IfNeeded): the API server asks again once its own
  # plugins changed the injected pod, the ServiceAccount plugin having mounted its token into
  # readygate's containers too. The second answer is no patch: that mount stays in every one.
  wait_line "$tls/webhook.log" "$WEBHOOK_PID" "unchanged $ns/shop" >/dev/null
  verdicts="$(grep -oE "(mutated|unchanged|skipped|refused) $ns/shop\b" "$tls/webhook.log" | cut -d' ' -f1 | paste -sd' ')"
  [[ "$verdicts" == "mutated unchanged" ]] ||
    fail "the webhook's verdicts on $ns/shop are '$verdicts', not 'mutated unchanged'"
  pod_json "$ns" shop | jq -e '[(.spec.initContainers + .spec.containers)[] |
    any(.volumeMounts // [] | .[]; .name | startswith("kube-api-access-"))] | all' >/dev/null ||
    fail "a container of the admitted pod lacks the service account's mount: $(pod_json "$ns" shop |
      jq -c '[(.spec.initContainers + .spec.containers)[] | {(.name): [(.volumeMounts // [])[].name]}]')"

  # Without the opt-in label: stored as created, and no review reached the webhook.
  create_pod "$plain" "$(webhook_gated_pod plain)"
  pod_json "$plain" plain | jq -e '(.spec.initContainers // []) == []
    and .metadata.annotations["readygate.dev/wait-for"] == "tcp://127.0.0.1:7301"' >/dev/null ||
    fail "the pod in $plain (no opt-in label) was changed: $(container_names < <(pod_json "$plain" plain))"
  ! grep -q "$plain/" "$tls/webhook.log" || fail "the webhook was asked about $plain: $(grep "$plain/" "$tls/webhook.log")"

  shop_runs_in_order "$ns" 7301
  echo "mutated in the labelled namespace (install, sidecar, gate, app), unchanged at the reinvocation (service account's mount kept), untouched and never reviewed without the label; sidecar probed, gate held the app until the database listened, Ready"
}

webhook_deployment() {
  local ns="$1" tls="$CASE_DIR/tls" pod name prefix stored verdicts end=$((SECONDS + 60))
  # No garbage collector runs: the Deployment, then its ReplicaSet go (run_case then deletes
  # the pods, which nothing recreates).
  webhook_serving "$ns" "[\"$ns\"]" \
    "k -n $ns delete deployment shop --wait=false >/dev/null 2>&1; k -n $ns delete replicasets --all --wait=false >/dev/null 2>&1"
  provide_image busybox:1.36
  k -n "$ns" create -f - >/dev/null <<<"$(webhook_shop_deployment)"

  # The ReplicaSet controller's pod, owned by the ReplicaSet the Deployment owns.
  until pod="$(k -n "$ns" get pods -l app=shop -o json | jq -ce '.items | select(length == 1) | .[0]')"; do
    ((SECONDS < end)) || fail "the Deployment made no pod within 60 s (kube-controller-manager's log: $(tail -n 2 "$CLUSTER/kube-controller-manager.log"))"
    sleep 0.2
  done
  name="$(jq -r .metadata.name <<<"$pod")" prefix="$(jq -r .metadata.generateName <<<"$pod")"
  jq -e '.metadata.ownerReferences[0].kind == "ReplicaSet"' <<<"$pod" >/dev/null ||
    fail "pod $name is not a ReplicaSet's: $(jq -c .metadata.ownerReferences <<<"$pod")"
  k -n "$ns" get replicaset "$(jq -r '.metadata.ownerReferences[0].name' <<<"$pod")" -o json |
    jq -e '.metadata.ownerReferences[0] | .kind == "Deployment" and .name == "shop"' >/dev/null ||
    fail "the ReplicaSet of pod $name is not Deployment shop's"
  stored="$(container_names <<<"$pod")"
  [[ "$stored" == "readygate-install proxy readygate-wait app" ]] ||
    fail "the Deployment's pod $name has the containers '$stored', not readygate-install proxy readygate-wait app"
  # Named by its generateName (the API server asks before it picks the name); answered
  # `unchanged` at the reinvocation, as a pod created by hand is.
  wait_line "$tls/webhook.log" "$WEBHOOK_PID" "unchanged $ns/$prefix*" >/dev/null
  verdicts="$(grep -oE "(mutated|unchanged|skipped|refused) $ns/$prefix\*" "$tls/webhook.log" | cut -d' ' -f1 | paste -sd' ')"
  [[ "$verdicts" == "mutated unchanged" ]] ||
    fail "the webhook's verdicts on $ns/$prefix* are '$verdicts', not 'mutated unchanged'"

  shop_runs_in_order "$ns" 7301 "$name"
  end=$((SECONDS + 30))
  until k -n "$ns" get deployment shop -o json | jq -e '.status.availableReplicas == 1' >/dev/null; do
    ((SECONDS < end)) || fail "Deployment shop did not count its Ready pod available within 30 s: $(k -n "$ns" get deployment shop -o json | jq -c .status)"
    sleep 0.2
  done
  echo "the ReplicaSet controller's pod $name mutated (install, sidecar, gate, app; logged as $ns/$prefix*, then unchanged at the reinvocation), ran in order, Ready; the Deployment available"
}

webhook_down() {
  local ns="$1" tls="$CASE_DIR/tls" hung refused stored
  webhook_certs "$tls"
  start_webhook "$tls"
  trap "kill -CONT $WEBHOOK_PID 2>/dev/null || true; kill $WEBHOOK_PID 2>/dev/null || true; k delete mutatingwebhookconfiguration $ns >/dev/null 2>&1 || true" EXIT
  k label namespace "$ns" readygate.dev/inject=enabled >/dev/null
  register_webhook "$ns" "$WEBHOOK_PORT" "$tls" "[\"$ns\"]" 2
  webhook_in_effect "$ns" "$(webhook_gated_pod probe)"

  # Stopped: the API server's call runs into the registration's 2 s, then failurePolicy Ignore.
  kill -STOP "$WEBHOOK_PID"
  hung="$(timed_create "$ns" "$(webhook_gated_pod hung)" "$CASE_DIR/hung.json")"
  kill -CONT "$WEBHOOK_PID"
  stored="$(container_names <"$CASE_DIR/hung.json")"
  [[ "$stored" == app ]] || fail "the pod admitted past a stopped webhook was mutated: '$stored'"
  ((hung >= 1800 && hung <= 8000)) || fail "admitted past a stopped webhook after $hung ms, not about its 2 s timeout"

  # Gone: connection refused, admitted unmutated at once.
  kill "$WEBHOOK_PID"
  wait "$WEBHOOK_PID" || fail "the webhook did not exit 0 at SIGTERM: $(tail -n 3 "$tls/webhook.log")"
  refused="$(timed_create "$ns" "$(webhook_gated_pod gone)" "$CASE_DIR/gone.json")"
  stored="$(container_names <"$CASE_DIR/gone.json")"
  [[ "$stored" == app ]] || fail "the pod admitted without a webhook was mutated: '$stored'"
  ((refused < 1800)) || fail "admitted without a webhook (connection refused) only after $refused ms"

  wait_ready "$ns" hung 60 "the pod admitted past the stopped webhook did not run"
  wait_ready "$ns" gone 60 "the pod admitted without the webhook did not run"
  echo "webhook stopped: admitted unmutated in $hung ms (timeout 2 s); webhook gone: in $refused ms; both ran"
}
