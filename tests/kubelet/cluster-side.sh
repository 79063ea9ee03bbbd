# What the cases of readygate-cluster (doctor, inject, webhook) share, sourced by run.sh: the
# binary; admission webhooks on the host (a CA and serving certificate of the case's own,
# readygate's webhook or a stand-in listening on 127.0.0.1, registered with `clientConfig.url`
# and the case's CA as `caBundle`, limited to the case's namespaces so that the other lanes'
# pods never meet it); and the run of manifests/depends-on.yaml once readygate is in it.

# The static readygate-cluster beside the readygate that images.sh put into the image, or the
# one READYGATE_CLUSTER names (a debug build, without the static build's minutes).
cluster_binary() {
  if [[ -n "${READYGATE_CLUSTER:-}" ]]; then echo "$READYGATE_CLUSTER"; return; fi
  echo "$(dirname "$("$ROOT/images/static-build.sh" 2>/dev/null | tail -n 1)")/readygate-cluster"
}

# A CA made for the case and a serving certificate it signs for IP 127.0.0.1, in DIR: ca.crt,
# tls.crt, tls.key.
webhook_certs() {
  local d="$1"
  mkdir -p "$d"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=readygate-webhook-test-ca -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
    -keyout "$d/tls.key" -out "$d/tls.csr" 2>/dev/null
  printf 'subjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth\n' >"$d/tls.ext"
  openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days 1 -extfile "$d/tls.ext" -out "$d/tls.crt" 2>/dev/null
}

# Waits up to 20 s until LOG holds TEXT while process PID runs; prints the line.
wait_line() {
  local log="$1" pid="$2" text="$3" end=$((SECONDS + 20))
  until grep -qF "$text" "$log" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || fail "it ended before saying '$text': $(tail -n 3 "$log")"
    ((SECONDS < end)) || fail "no '$text' within 20 s: $(tail -n 3 "$log")"
    sleep 0.05
  done
  grep -F "$text" "$log" | head -n 1
}

# Starts `readygate-cluster webhook` on a free port of 127.0.0.1 with the certificate in DIR
# (webhook_certs) and ARGS, its log in DIR/webhook.log; sets WEBHOOK_PID and WEBHOOK_PORT once
# it serves.
start_webhook() {
  local d="$1" line; shift
  "$(cluster_binary)" webhook --listen 127.0.0.1:0 --tls-cert "$d/tls.crt" --tls-key "$d/tls.key" \
    "$@" 2>"$d/webhook.log" &
  WEBHOOK_PID=$!
  line="$(wait_line "$d/webhook.log" "$WEBHOOK_PID" "serving admission reviews on https://127.0.0.1:")"
  WEBHOOK_PORT="$(sed 's|.*https://127.0.0.1:\([0-9]*\)/mutate.*|\1|' <<<"$line")"
}

# Starts the stand-in of an old webhook (strip-webhook.py: drops an init container's
# restartPolicy by replacing the whole spec) with the certificate in DIR; sets STRIP_PID and
# STRIP_PORT once it serves.
start_strip_webhook() {
  local d="$1" line
  python3 "$HERE/strip-webhook.py" "$d/tls.crt" "$d/tls.key" 2>"$d/strip.log" &
  STRIP_PID=$!
  line="$(wait_line "$d/strip.log" "$STRIP_PID" "strip-webhook: serving on https://127.0.0.1:")"
  STRIP_PORT="${line##*:}"
}

# Registers deploy/overlays/webhook's MutatingWebhookConfiguration (its rules, policies and
# opt-in namespaceSelector) as NAME, sent to https://127.0.0.1:PORT/mutate trusting DIR's CA and
# limited further to the namespaces of the JSON list NAMESPACES; TIMEOUT (optional) replaces
# its timeoutSeconds.
register_webhook() {
  local name="$1" port="$2" d="$3" namespaces="$4" timeout="${5:-}"
  k create --dry-run=client -o json -f "$ROOT/deploy/overlays/webhook/webhook.yaml" |
    jq -c --arg name "$name" --arg url "https://127.0.0.1:$port/mutate" \
      --arg ca "$(base64 -w0 "$d/ca.crt")" --argjson namespaces "$namespaces" --arg timeout "$timeout" '
      .metadata = {name: $name}
      | .webhooks[0].clientConfig = {url: $url, caBundle: $ca}
      | .webhooks[0].namespaceSelector.matchExpressions +=
          [{key: "kubernetes.io/metadata.name", operator: "In", values: $namespaces}]
      | if $timeout == "" then . else .webhooks[0].timeoutSeconds = ($timeout | tonumber) end' |
    k create -f - >/dev/null
}

# Registers the stand-in of an old webhook as the MutatingWebhookConfiguration NAME: pod
# CREATE in the namespaces of the JSON list NAMESPACES, sent to https://127.0.0.1:PORT/mutate
# trusting DIR's CA.
register_stand_in() {
  local name="$1" port="$2" d="$3" namespaces="$4"
  jq -cn --arg name "$name" --arg url "https://127.0.0.1:$port/mutate" \
    --arg ca "$(base64 -w0 "$d/ca.crt")" --argjson namespaces "$namespaces" '
    {apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration",
     metadata: {name: $name},
     webhooks: [{
       name: "\($name).test.readygate.dev",
       clientConfig: {url: $url, caBundle: $ca},
       rules: [{operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"]}],
       namespaceSelector: {matchExpressions: [{key: "kubernetes.io/metadata.name", operator: "In", values: $namespaces}]},
       failurePolicy: "Fail", sideEffects: "None", admissionReviewVersions: ["v1"], timeoutSeconds: 5}]}' |
    k create -f - >/dev/null
}

# The names of the containers (init ones first) of pod JSON on stdin, as one line.
container_names() {
  jq -r '[(.spec.initContainers // [])[].name, .spec.containers[].name] | join(" ")'
}

# Prints the RFC 3339 time (nanoseconds) of the first line of container C of pod NS/NAME that
# holds TEXT, from the kubelet's log of it.
logged_at() {
  local ns="$1" name="$2" c="$3" text="$4"
  k -n "$ns" logs "$name" -c "$c" --timestamps | awk -v t="$text" 'index($0, t) { print $1; exit }'
}

# depends-on.yaml's pod `shop` (or NAME: a Deployment's), created in NS with readygate in it
# (by inject or the webhook), with the database on host port DB: the sidecar serves (its
# startupProbe passed) before the gate runs, the gate holds the app while nothing listens, then
# the database starts and the app starts after it, the gate having ended at its first run, and
# the pod is Ready.
shop_runs_in_order() {
  local ns="$1" db="$2" shop="${3:-shop}" json listening started
  wait_pod "$ns" "$shop" '.status.initContainerStatuses[]? | select(.name == "readygate-wait") | .state | .running // .terminated' 60 \
    "the gate did not start"
  json="$(pod_json "$ns" "$shop")"
  status_of proxy <<<"$json" | jq -e '.started == true' >/dev/null ||
    fail "the gate started before the sidecar's startupProbe passed: $(pod_summary "$ns" "$shop")"
  status_of readygate-wait <<<"$json" | jq -e '.state.running' >/dev/null ||
    fail "the gate ended with nothing listening: $(pod_summary "$ns" "$shop")"
  status_of app <<<"$json" | jq -e '.state.waiting' >/dev/null ||
    fail "the app started before its database: $(pod_summary "$ns" "$shop")"

  create_pod "$ns" "$(jq -cn --arg db "$db" '{apiVersion: "v1", kind: "Pod", metadata: {name: "db"},
    spec: {nodeName: "localhost", hostNetwork: true, terminationGracePeriodSeconds: 1,
           containers: [{name: "db", image: "busybox:1.36", imagePullPolicy: "Never",
                         command: ["sh", "-c", "trap \"exit 0\" TERM; echo db: listening; httpd -f -p \($db) & wait"]}]}}')"
  wait_ready "$ns" "$shop" 60 "the pod did not become Ready once its database listened"
  pod_json "$ns" "$shop" | status_of readygate-wait | jq -e '.state.terminated.exitCode == 0 and .restartCount == 0' >/dev/null ||
    fail "the gate did not end at its first run: $(pod_summary "$ns" "$shop")"
  listening="$(logged_at "$ns" db db "db: listening")"
  started="$(logged_at "$ns" "$shop" app "app: started")"
  [[ -n "$listening" && -n "$started" ]] || fail "no log line of the database ($listening) or the app ($started)"
  (($(date -d "$started" +%s%N) >= $(date -d "$listening" +%s%N))) ||
    fail "the app started ($started) before its database listened ($listening)"
}
