#!/usr/bin/env bash
# `readygate-cluster webhook` under 50 concurrent AdmissionReviews (bench/admission, a Go client
# holding one kept-alive HTTPS connection per client, as the API server does): latency at the
# median and p99, the webhook's CPU time over the run (what a review costs, whatever else runs)
# and its peak RSS (VmHWM). Prints one JSON line; bench/report.md records the figures. Needs Go
# and openssl; builds the static binaries unless READYGATE_CLUSTER names one.
# Usage: [WEBHOOK_CPUS=LIST] [CLIENT_CPUS=LIST] bench/webhook.sh [CLIENTS [REVIEWS_PER_CLIENT]]
# (the webhook, or the client, pinned to those CPUs as taskset -c takes them; the webhook runs
# one thread per CPU it may use)
set -euo pipefail
cd "$(dirname "$0")/.."
clients="${1:-50}"
each="${2:-40}"
if [[ -z "${READYGATE_CLUSTER:-}" ]]; then
  READYGATE_CLUSTER="$(dirname "$(images/static-build.sh | tail -n 1)")/readygate-cluster"
fi
work="$(mktemp -d)"
pid=""
trap '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
(cd bench/admission && CGO_ENABLED=0 go build -o "$work/admission" .)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=bench-ca -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
  -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$work/ext"
openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
  -days 1 -extfile "$work/ext" -out "$work/tls.crt" 2>/dev/null
${WEBHOOK_CPUS:+taskset -c "$WEBHOOK_CPUS"} "$READYGATE_CLUSTER" webhook --listen 127.0.0.1:0 --tls-cert "$work/tls.crt" \
  --tls-key "$work/tls.key" 2>"$work/log" &
pid=$!
for _ in $(seq 100); do
  grep -q 'https://127.0.0.1:' "$work/log" 2>/dev/null && break
  sleep 0.05
done
port="$(sed -n 's|.*https://127.0.0.1:\([0-9]*\)/mutate.*|\1|p' "$work/log")"
[[ -n "$port" ]] || { echo "webhook did not start: $(cat "$work/log")" >&2; exit 1; }
# The webhook's CPU time (user + system, clock ticks), before and after the run.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
ticks_before="$(cpu_ticks)"
result="$(${CLIENT_CPUS:+taskset -c "$CLIENT_CPUS"} "$work/admission" -url "https://127.0.0.1:$port/mutate" -ca "$work/ca.pem" \
  -clients "$clients" -each "$each")"
cpu_ms=$((($(cpu_ticks) - ticks_before) * 1000 / $(getconf CLK_TCK)))
hwm="$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")"
echo "${result%\}},\"rss_peak_kib\":$hwm,\"server_cpu_ms\":$cpu_ms,\"binary_bytes\":$(stat -c %s "$READYGATE_CLUSTER")}"
