#!/usr/bin/env bash
# Builds kube-apiserver, kubelet, kubectl and kube-controller-manager at the release k8s/go.mod
# pins, cached by version under target/kubelet/<version>/ so a second run does not rebuild.
# Prints the bin folder.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 }' "$here/k8s/go.mod")"
bin="${CARGO_TARGET_DIR:-$root/target}/kubelet/$version"
cmds=(kube-apiserver kubelet kubectl kube-controller-manager)

# Go from PATH, else where the official tarball installs it; Debian 12's (1.19) is too old.
go_ok() { command -v go >/dev/null && go version | grep -Eq 'go1\.(2[4-9]|[3-9][0-9])'; }
go_ok || PATH="$PATH:/usr/local/go/bin"

have_all() { for c in "${cmds[@]}"; do [[ -x "$bin/$c" ]] || return 1; done; }
if ! have_all; then
    go_ok || { echo "kubelet tests: building Kubernetes needs Go >= 1.24 on PATH (https://go.dev/dl/)" >&2; exit 1; }
    mkdir -p "$bin"
    minor="${version#v1.}"; minor="${minor%%.*}"
    pkg=k8s.io/component-base/version
    ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
    start=$SECONDS
    echo "building Kubernetes $version (${cmds[*]}) into $bin; cold this takes 5-10 min" >&2
    # One go build for all four shares the compile of the common packages; -p 2 keeps the
    # peak memory near what one link needs on a small machine.
    (cd "$here/k8s" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -p 2 -trimpath -ldflags "$ldflags" \
        -o "$bin.tmp/" $(printf 'k8s.io/kubernetes/cmd/%s ' "${cmds[@]}"))
    for c in "${cmds[@]}"; do mv "$bin.tmp/$c" "$bin/$c"; done
    rmdir "$bin.tmp"
    echo "built Kubernetes $version in $((SECONDS - start)) s" >&2
fi
echo "$bin"
