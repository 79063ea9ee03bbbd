# examples/universal-sidecar.yaml: one sidecar injected twice. On this kubelet (built-in
# sidecars) proxy-native restarts into nginx and proxy-legacy stands by. The legacy path is the
# pod as a kubelet that predates the field (1.27 and older) runs it: proxy-native an ordinary
# init container. A 1.34 kubelet cannot turn built-in sidecars off (the gate is locked on), so
# the case strips restartPolicy (and the startupProbe, which the API server allows only on a
# built-in sidecar) from proxy-native, which is what such a kubelet ignores.
# case: universal-sidecar native universal_native
# case: universal-sidecar legacy universal_legacy

universal_native() {
  local ns="$1" json
  create_pod "$ns" "$(pod_from universal-sidecar.yaml web)"
  wait_pod "$ns" web '.status.conditions[]? | select(.type == "Ready") | .status == "True"' 60 \
    "the pod did not become Ready"
  json="$(pod_json "$ns" web)"
  status_of proxy-native <<<"$json" | jq -e '.restartCount >= 1 and .state.running' >/dev/null ||
    fail "proxy-native should run after a restart: $(pod_summary "$ns" web)"
  local end=$((SECONDS + 30))
  until k -n "$ns" logs web -c proxy-legacy | grep -q "the native sidecar runs"; do
    ((SECONDS < end)) || fail "proxy-legacy did not stand by: $(k -n "$ns" logs web -c proxy-legacy)"
    sleep 0.5
  done
  k -n "$ns" logs web -c proxy-native | grep -q "nginx: serving" || fail "proxy-native did not run nginx"
  ! k -n "$ns" logs web -c proxy-legacy | grep -q "nginx:" || fail "proxy-legacy ran nginx beside the native sidecar"
  echo "Ready; proxy-native wrote first-run, was restarted ($(status_of proxy-native <<<"$json" | jq .restartCount)) into nginx; proxy-legacy stands by"
}

universal_legacy() {
  local ns="$1" json
  create_pod "$ns" "$(pod_from universal-sidecar.yaml web '
    (.spec.initContainers[] | select(.name == "proxy-native")) |= del(.restartPolicy, .startupProbe)')"
  wait_pod "$ns" web '.status.conditions[]? | select(.type == "Ready") | .status == "True"' 60 \
    "the pod did not become Ready"
  json="$(pod_json "$ns" web)"
  status_of proxy-native <<<"$json" | jq -e '.state.terminated.exitCode == 0 and .restartCount == 0' >/dev/null ||
    fail "proxy-native should have run once and exited 0: $(pod_summary "$ns" web)"
  local end=$((SECONDS + 40))
  until k -n "$ns" logs web -c proxy-legacy | grep -q "nginx: serving"; do
    ((SECONDS < end)) || fail "proxy-legacy did not run nginx after its grace: $(k -n "$ns" logs web -c proxy-legacy)"
    sleep 0.5
  done
  echo "proxy-native ran once (exit 0); proxy-legacy waited its 10 s grace and ran nginx itself"
}
