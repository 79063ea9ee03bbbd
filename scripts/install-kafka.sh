#!/usr/bin/env bash
# Fetches the Apache Kafka broker that the kafka:// tests start (tests/it/support/kafka.rs):
# the jars tests/kafka/pom.xml names and their runtime dependencies, from Maven Central, into
# /opt/readygate-test-kafka/libs (as root; called by install-test-deps.sh). Cached: with the
# same pom, a second run does nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pom="$here/../tests/kafka/pom.xml"
dest=/opt/readygate-test-kafka
want="$(sha256sum "$pom" | cut -d' ' -f1)"
if [[ -f $dest/pom.sha256 && "$(cat "$dest/pom.sha256")" == "$want" ]]; then
  exit 0
fi
"$here/apt-install.sh" maven openjdk-17-jre-headless
mkdir -p "$dest"
rm -rf "$dest/libs.new"
mvn -B -q -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
  -DoutputDirectory="$dest/libs.new" >&2
rm -rf "$dest/libs"
mv "$dest/libs.new" "$dest/libs"
echo "$want" >"$dest/pom.sha256"
