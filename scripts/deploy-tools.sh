#!/usr/bin/env bash
# The tools scripts/check-deploy.sh renders and validates with, each at its pinned version, built
# or installed when missing; prints their paths, one a line: kustomize, helm, python. .ci/run
# runs it early, in the background, so that their cold Go builds overlap the Rust steps.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/go-tool.sh sigs.k8s.io/kustomize/kustomize/v5 v5.7.1
scripts/go-tool.sh helm.sh/helm/v4/cmd/helm v4.3.2
echo "$(scripts/python-tools.sh)/python"
