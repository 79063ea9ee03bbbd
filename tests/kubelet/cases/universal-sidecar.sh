# examples/universal-sidecar.yaml: one sidecar injected twice. On this kubelet (built-in
# sidecars) proxy-native restarts into nginx and proxy-legacy stands by. The legacy path is the
# pod as a kubelet that predates the field (1.27 and older) runs it: proxy-native an ordinary
# init container. A 1.34 kubelet cannot turn built-in sidecars off (the gate is locked on), so
# the case strips restartPolicy (and the startupProbe, which the API server allows only on a
# built-in sidecar) from proxy-native, which is what such a kubelet ignores.
# host ports: 8080
# case: universal-sidecar native universal_native
# case: universal-sidecar legacy universal_legacy

universal_native() {
  local ns="$1" json
  create_pod "$ns" "$(pod_from universal-sidecar.yaml web)"
  wait_ready "$ns" web 60
  json="$(pod_json "$ns" web)"
  status_of proxy-native <<<"$json" | jq -e '.restartCount >= 1 and .state.running' >/dev/null ||
    fail "proxy-native should run after a restart: $(pod_summary "$ns" web)"
  wait_log "$ns" web proxy-legacy "the native sidecar runs" 30 "proxy-legacy did not stand by"
  k -n "$ns" logs web -c proxy-native | grep -q "nginx: serving" || fail "proxy-native did not run nginx"
  ! k -n "$ns" logs web -c proxy-legacy | grep -q "nginx:" || fail "proxy-legacy ran nginx beside the native sidecar"
  echo "Ready; proxy-native wrote first-run, was restarted ($(status_of proxy-native <<<"$json" | jq .restartCount)) into nginx; proxy-legacy stands by"
}

universal_legacy() {
  local ns="$1" json
  create_pod "$ns" "$(pod_from universal-sidecar.yaml web '
    (.spec.initContainers[] | select(.name == "proxy-native")) |= del(.restartPolicy, .startupProbe)')"
  wait_ready "$ns" web 60
  json="$(pod_json "$ns" web)"
  status_of proxy-native <<<"$json" | jq -e '.state.terminated.exitCode == 0 and .restartCount == 0' >/dev/null ||
    fail "proxy-native should have run once and exited 0: $(pod_summary "$ns" web)"
  wait_log "$ns" web proxy-legacy "nginx: serving" 40 "proxy-legacy did not run nginx after its grace"
  echo "proxy-native ran once (exit 0); proxy-legacy waited its 10 s grace and ran nginx itself"
}
