# readygate-cluster inject on tests/kubelet/manifests/depends-on.yaml (annotations only): the
# injected pod passes Pod Security restricted without a warning, and runs here in order: the
# sidecar's startupProbe (readygate's probe, installed into the pod) before the gate, the gate
# (readygate wait) until the database listens, then the app. Injecting its output again changes
# nothing.
# host ports: 7311 7312
# case: inject depends-on inject_depends_on

inject_depends_on() {
  local ns="$1" injected said pod names
  "$(cluster_binary)" inject "$HERE/manifests/depends-on.yaml" >"$CASE_DIR/injected.yaml"
  "$(cluster_binary)" inject "$CASE_DIR/injected.yaml" | cmp -s - "$CASE_DIR/injected.yaml" ||
    fail "injecting the injected manifest again changed it"
  injected="$(k create --dry-run=client -o json -f "$CASE_DIR/injected.yaml" | jq -c "del(.metadata.namespace)")"
  names="$(container_names <<<"$injected")"
  [[ "$names" == "readygate-install proxy readygate-wait app" ]] ||
    fail "injected containers are '$names', not readygate-install proxy readygate-wait app"
  said="$(k -n pod-security-restricted create --dry-run=server -f - 2>&1 >/dev/null <<<"$injected")" ||
    fail "the injected pod is not admitted at Pod Security restricted: $said"
  [[ -z "$said" ]] || fail "the API server warned at Pod Security restricted: $said"

  pod="$(on_this_node <<<"$injected" | jq -c '.spec.hostAliases[0].hostnames += ["proxy.default.svc"]')"
  create_pod "$ns" "$pod"
  shop_runs_in_order "$ns" 7311
  echo "injected (install, sidecar, gate, app; twice is once), admitted at restricted; sidecar probed, gate held the app until the database listened, Ready"
}
