# readygate-cluster doctor, run on the host against this cluster's API server and its node
# `localhost` (the kubelet's metrics through the API server's node proxy), with a service
# account's token. full: the grants of deploy/doctor, applied as they ship: built-in sidecars
# work everywhere, both gates read from metrics; then, in a namespace where a stand-in of an
# old webhook (tests/kubelet/strip-webhook.py) drops an init container's restartPolicy on a
# full update, doctor finds it by its dry run and names it, and a real pod there hangs in Init
# as doctor warns. reduced: a Role and ClusterRole short of deploy/doctor's: each refusal is
# reported with the grant it lacks, judged by version where it can be, instead of failing.
# host ports: none
# case: doctor full doctor_full
# case: doctor reduced doctor_reduced

# A kubeconfig at FILE with a 1 h token of service account NS/NAME, trusting the cluster's CA.
doctor_kubeconfig() {
  local ns="$1" name="$2" file="$3"
  k -n "$ns" create token "$name" --duration 1h >"$file.token"
  cat >"$file" <<CONF
apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$CLUSTER/pki/ca.crt"}}]
users: [{name: $name, user: {tokenFile: "$file.token"}}]
contexts: [{name: test, context: {cluster: test, user: $name}}]
current-context: test
CONF
}

# Runs doctor with KUBECONFIG on namespace NS as JSON; fails unless it exits STATUS; prints
# its report, also kept in $CASE_DIR/doctor-N.json.
doctor_json() {
  local config="$1" ns="$2" status="$3" n out code=0
  n="$(find "$CASE_DIR" -name 'doctor-*.json' | wc -l)"
  out="$CASE_DIR/doctor-$n.json"
  "$(cluster_binary)" doctor --kubeconfig "$config" --namespace "$ns" --output json >"$out" 2>"$out.err" || code=$?
  ((code == status)) || fail "doctor on $ns exited $code, not $status: $(cat "$out" "$out.err")"
  jq -e . "$out" >/dev/null || fail "doctor's report is not JSON: $(cat "$out")"
  cat "$out"
}

# Registers the stand-in of an old webhook for namespace NS, and waits until the API server
# applies it there: a dry-run pod's built-in sidecar comes back without its restartPolicy.
doctor_strip() {
  local ns="$1" tls="$CASE_DIR/tls" sidecar end=$((SECONDS + 30))
  webhook_certs "$tls"
  start_strip_webhook "$tls"
  register_stand_in "$ns" "$STRIP_PORT" "$tls" "[\"$ns\"]"
  sidecar='{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sidecar"},
    "spec": {"nodeName": "localhost", "hostNetwork": true, "terminationGracePeriodSeconds": 1,
      "initContainers": [{"name": "proxy", "image": "busybox:1.36", "imagePullPolicy": "Never",
        "restartPolicy": "Always", "command": ["sh", "-c", "trap \"exit 0\" TERM; sleep 3600 & wait"]}],
      "containers": [{"name": "app", "image": "busybox:1.36", "imagePullPolicy": "Never",
        "command": ["sh", "-c", "trap \"exit 0\" TERM; sleep 3600 & wait"]}]}}'
  until k -n "$ns" create --dry-run=server -o json -f - <<<"$sidecar" 2>/dev/null |
    jq -e '.spec.initContainers[0] | has("restartPolicy") | not' >/dev/null; do
    ((SECONDS < end)) || fail "the stand-in webhook was not asked within 30 s of its registration"
    sleep 0.2
  done
  STRIP_SIDECAR_POD="$sidecar"
}

doctor_full() {
  local ns="$1" config="$CASE_DIR/kubeconfig" report
  trap "kill \${STRIP_PID:-} 2>/dev/null || true; k delete mutatingwebhookconfiguration $ns >/dev/null 2>&1 || true; k delete -k '$ROOT/deploy/doctor' >/dev/null 2>&1 || true" EXIT
  k apply -k "$ROOT/deploy/doctor" >/dev/null
  # The dry-run pod in `default` needs its ServiceAccount, which no ServiceAccount controller made here.
  k -n default get serviceaccount default >/dev/null 2>&1 || k -n default create serviceaccount default >/dev/null
  doctor_kubeconfig default readygate-doctor "$config"

  report="$(doctor_json "$config" default 0)"
  jq -e '.verdict == "works-everywhere" and .status == 0 and .problems == [] and .failed == []
    and .api_server.sidecars == true and .api_server.judged_by == "metrics"
    and (.nodes | length == 1) and .nodes[0].name == "localhost" and .nodes[0].skew == 0
    and .nodes[0].sidecars == true and .nodes[0].judged_by == "metrics"
    and .admission.restart_policy_survived == true' <<<"$report" >/dev/null ||
    fail "doctor with deploy/doctor's grants: $report"
  "$(cluster_binary)" doctor --kubeconfig "$config" --namespace default >"$CASE_DIR/table.txt" ||
    fail "doctor's table run failed: $(cat "$CASE_DIR/table.txt")"
  cat "$CASE_DIR/table.txt"

  # deploy/doctor's dry-run role bound in the namespace the stand-in webhook rewrites pods in.
  doctor_strip "$ns"
  k -n "$ns" create rolebinding readygate-doctor-dry-run --clusterrole readygate-doctor-dry-run \
    --serviceaccount default:readygate-doctor >/dev/null
  report="$(doctor_json "$config" "$ns" 1)"
  jq -e --arg ns "$ns" '.verdict == "fix-admission" and .admission.restart_policy_survived == false
    and .admission.suspects == [{configuration: $ns, webhook: "\($ns).test.readygate.dev"}]
    and (.admission.note | contains("without its restartPolicy"))' <<<"$report" >/dev/null ||
    fail "doctor did not name the webhook that drops restartPolicy: $report"
  grep -q "rewrote $ns/readygate-doctor-\*" "$CASE_DIR/tls/strip.log" ||
    fail "the stand-in never saw doctor's dry-run pod: $(tail -n 3 "$CASE_DIR/tls/strip.log")"

  # What doctor warns of: the sidecar admitted as an ordinary init container, which never ends.
  create_pod "$ns" "$STRIP_SIDECAR_POD"
  pod_json "$ns" sidecar | jq -e '.spec.initContainers[0] | has("restartPolicy") | not' >/dev/null ||
    fail "the stand-in did not strip restartPolicy from a real pod"
  wait_pod "$ns" sidecar '.status.initContainerStatuses[0].state.running' 60 "the stripped sidecar did not run"
  pod_json "$ns" sidecar | jq -e '.status.phase == "Pending" and .status.containerStatuses[0].state.waiting' >/dev/null ||
    fail "the pod with the stripped sidecar went past Init: $(pod_summary "$ns" sidecar)"
  echo "deploy/doctor grants: works-everywhere (API server and kubelet gates by metrics); stand-in webhook: fix-admission naming $ns.test.readygate.dev, and a real pod stuck in Init"
}

doctor_reduced() {
  local ns="$1" config="$CASE_DIR/kubeconfig" report
  trap "kill \${STRIP_PID:-} 2>/dev/null || true; k delete --ignore-not-found mutatingwebhookconfiguration/$ns clusterrole/$ns clusterrolebinding/$ns >/dev/null 2>&1 || true" EXIT
  k -n "$ns" create serviceaccount doctor >/dev/null
  k -n "$ns" create role dry-run --verb=create --resource=pods >/dev/null
  k -n "$ns" create rolebinding dry-run --role=dry-run --serviceaccount="$ns:doctor" >/dev/null
  k create clusterrole "$ns" --verb=list --resource=nodes >/dev/null
  k create clusterrolebinding "$ns" --clusterrole="$ns" --serviceaccount="$ns:doctor" >/dev/null
  doctor_kubeconfig "$ns" doctor "$config"

  # No /metrics, no nodes/proxy: both judged by version (1.34: built-in sidecars), each saying
  # which grant it lacked.
  report="$(doctor_json "$config" "$ns" 0)"
  jq -e '.verdict == "works-everywhere" and .failed == []
    and .api_server.judged_by == "version" and .api_server.sidecars == true
    and (.api_server.note | contains("/metrics refused: grant get on nonResourceURLs /metrics to"))
    and .nodes[0].judged_by == "version" and .nodes[0].sidecars == true
    and (.nodes[0].note | contains("grant get on nodes/proxy to"))
    and .admission.restart_policy_survived == true' <<<"$report" >/dev/null ||
    fail "doctor without metrics or nodes/proxy: $report"

  # With the stand-in webhook: found by the dry run, but the suspects cannot be listed.
  doctor_strip "$ns"
  report="$(doctor_json "$config" "$ns" 1)"
  jq -e '.verdict == "fix-admission" and .admission.restart_policy_survived == false
    and .admission.suspects == []
    and (.admission.note | contains("grant list on mutatingwebhookconfigurations"))' <<<"$report" >/dev/null ||
    fail "doctor without list on mutatingwebhookconfigurations: $report"

  # Not even the nodes: that check failed (exit 3 once nothing else is wrong).
  k delete clusterrolebinding "$ns" >/dev/null
  k delete mutatingwebhookconfiguration "$ns" >/dev/null
  local end=$((SECONDS + 30))
  until report="$(doctor_json "$config" "$ns" 3 2>/dev/null)"; do
    ((SECONDS < end)) || fail "doctor with create on pods only: $(cat "$CASE_DIR"/doctor-*.json | tail -n 1)"
    sleep 0.5
  done
  jq -e '.verdict == "incomplete" and .nodes == null
    and (.failed | any(contains("listing nodes refused: grant list on nodes to")))' <<<"$report" >/dev/null ||
    fail "doctor with create on pods only: $report"
  echo "reduced grants: judged by version naming /metrics and nodes/proxy (exit 0); webhooks unlisted named (exit 1); nodes refused: incomplete (exit 3)"
}
