# k8s:// for any resource, through the real API server, from the host as a CI pipeline runs it:
# a CustomResourceDefinition (namespaced, with the status subresource) and one object of it,
# whose status the case patches as its controller would. readygate, the image's static binary,
# reads the harness's kubeconfig (KUBECONFIG, as kubectl does: a token and the cluster's CA),
# maps the kind to its resource by discovery, and waits on a condition and a JSON path, each
# watched; its exit is timed from the status patch's return.
# case: k8s-any-resource crd any_resource

any_resource() {
  local ns="$1" binary log="$CASE_DIR/wait.log" pid patched ended crd=widgets.readygate.test
  binary="$("$ROOT/images/static-build.sh" 2>/dev/null | tail -n 1)"
  k get crd "$crd" >/dev/null 2>&1 || k create -f - >/dev/null <<'CRD'
{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "widgets.readygate.test"},
 "spec": {"group": "readygate.test", "scope": "Namespaced",
   "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
   "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
       "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
       "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}}
CRD
  k wait --for=condition=Established "crd/$crd" --timeout 30s >/dev/null
  k -n "$ns" create -f - >/dev/null <<<'{"apiVersion": "readygate.test/v1", "kind": "Widget",
    "metadata": {"name": "w1"}, "spec": {"size": 1}}'

  [[ -n "${KUBECONFIG:-}" ]] || fail "the harness exports no KUBECONFIG"
  env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT \
    "$binary" wait -v --timeout 60s \
    "k8s://Widget.v1.readygate.test/w1?namespace=$ns&condition=Ready" \
    "k8s://widgets.v1.readygate.test/w1?namespace=$ns&jsonpath={.status.phase}=Running" 2>"$log" &
  pid=$!
  local end=$((SECONDS + 30))
  until grep -q 'condition=Ready: attempt 1: no Ready condition yet' "$log" &&
    grep -q 'Running: attempt 1: {.status.phase} is not set yet' "$log"; do
    kill -0 "$pid" 2>/dev/null || fail "readygate ended early: $(tail -n 3 "$log")"
    ((SECONDS < end)) || fail "no first attempts within 30 s: $(tail -n 3 "$log")"
    sleep 0.05
  done
  # Both watches open before the change, so it is seen by them, not by a poll.
  until grep -c ': watching' "$log" | grep -q 2; do
    ((SECONDS < end)) || fail "no two watches within 30 s: $(tail -n 3 "$log")"
    sleep 0.05
  done
  k -n "$ns" patch widget w1 --subresource=status --type=merge -p "{\"status\": {\"phase\": \"Running\",
    \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", \"reason\": \"Up\", \"message\": \"up\",
    \"lastTransitionTime\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}]}}" >/dev/null
  patched=$(date +%s%N)
  wait "$pid" || fail "readygate did not exit 0: $(tail -n 3 "$log")"
  ended=$(date +%s%N)
  ! grep -q 'grant \|watch broke\|polling' "$log" || fail "a request was refused or a watch broke: $(grep 'grant \|watch broke\|polling' "$log")"
  local ms=$(((ended - patched) / 1000000))
  ((ms <= 2000)) || fail "readygate exited $ms ms after the status patch (over 2 s)"
  k -n "$ns" delete widget w1 >/dev/null
  echo "a CRD's object waited on from the host through KUBECONFIG (discovery, condition and jsonpath, both watched): exit $ms ms after the status patch"
}
