#!/usr/bin/env bash
# The aarch64 build, checked on this x86_64 machine: builds the static binary
# (images/static-build.sh aarch64), requires `file` to call it an aarch64 static-pie of at most
# 4 MiB, and runs it under qemu-aarch64-static as a user would: --version; probe and wait
# against a TCP listener, an HTTP server and a file on this machine; an HTTPS server; and
# SIGTERM while waiting. Every server is on 127.0.0.1 (docs/install.md "arm64").
# Usage, as root: scripts/arm64-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

scripts/install-arm64-deps.sh
command -v python3 openssl >/dev/null
echo "arm64: packages ready after $((SECONDS - started)) s"

binary="$(images/static-build.sh aarch64 | tail -n 1)"
echo "arm64: built $binary after $((SECONDS - started)) s"
description="$(file -b "$binary")"
size="$(stat -c %s "$binary")"
echo "arm64: $size bytes: $description"
[[ "$description" == *"ARM aarch64"*"static-pie linked"* ]] || {
  echo "arm64: FAILED: not an aarch64 static-pie executable" >&2
  exit 1
}
((size <= 4 * 1024 * 1024)) || { echo "arm64: FAILED: $size bytes, over 4 MiB" >&2; exit 1; }

qemu=(qemu-aarch64-static "$binary")
# Emulation is slow, the more so on a loaded machine: bounds wide enough for it.
slow=(--timeout 30s --attempt-timeout 30s)
work="$(mktemp -d "${TMPDIR:-/tmp}/readygate-arm64.XXXXXX")"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "arm64: FAILED: $*" >&2
  exit 1
}
# expect STATUS COMMAND...: runs COMMAND (output in $work/out), which must exit with STATUS.
expect() {
  local want="$1" status=0
  shift
  "$@" >"$work/out" 2>&1 || status=$?
  [[ "$status" == "$want" ]] || { cat "$work/out" >&2; fail "$* exited $status, not $want"; }
}

# Servers on 127.0.0.1 with ports of the kernel's choosing; each writes its port to a file.
serve() {
  local kind="$1"
  python3 - "$kind" "$work" >"$work/$kind.log" 2>&1 <<'PY' &
import http.server, socket, ssl, sys
kind, work = sys.argv[1:]
class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Ok)
if kind == "tcp":
    server.socket.close()
    server = socket.create_server(("127.0.0.1", 0))
if kind == "https":
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(f"{work}/cert.pem", f"{work}/key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
port = server.getsockname()[1] if kind == "tcp" else server.server_address[1]
open(f"{work}/{kind}.port.tmp", "w").write(str(port))
__import__("os").rename(f"{work}/{kind}.port.tmp", f"{work}/{kind}.port")
if kind == "tcp":
    while True:
        server.accept()[0].close()
server.serve_forever()
PY
  pids+=($!)
}
# The port of a server started by `serve`, once it listens.
port_of() {
  local deadline=$((SECONDS + 30))
  until [[ -s "$work/$1.port" ]]; do
    ((SECONDS < deadline)) || { cat "$work/$1.log" >&2; fail "the $1 server did not start"; }
    sleep 0.05
  done
  cat "$work/$1.port"
}

expect 0 "${qemu[@]}" --version
grep -q "aarch64-unknown-linux-gnu" "$work/out" || fail "--version does not name aarch64: $(cat "$work/out")"
echo "arm64: $(cat "$work/out")"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
serve tcp
serve http
serve https
tcp="tcp://127.0.0.1:$(port_of tcp)"
http="http://127.0.0.1:$(port_of http)/ready"
https="https://127.0.0.1:$(port_of https)/ready"
closed="tcp://127.0.0.1:1"

expect 0 "${qemu[@]}" probe "${slow[@]}" "$tcp" "$http" "file://$work/cert.pem"
expect 1 "${qemu[@]}" probe --timeout 2s "$closed"
grep -q "connection refused" "$work/out" || fail "probe of a closed port: $(cat "$work/out")"
expect 0 "${qemu[@]}" probe "${slow[@]}" --contains ok --cacert "$work/cert.pem" "$https"
expect 1 "${qemu[@]}" probe "${slow[@]}" "$https"
grep -qi "certificate" "$work/out" || fail "probe of an untrusted certificate: $(cat "$work/out")"
expect 2 "${qemu[@]}" probe "tcp://:80"
echo "arm64: probe: TCP, HTTP, file, HTTPS (trusted and not), closed port, bad input"

# wait: held until the file appears (created once wait has logged a failed attempt), then execs
# the command, which is x86_64 here: qemu hands it to the kernel.
marker="$work/ready"
"${qemu[@]}" wait -v --timeout 60s --attempt-timeout 30s "$tcp" "$http" "$marker" -- /bin/echo released \
  >"$work/wait.out" 2>"$work/wait.err" &
waiter=$!
deadline=$((SECONDS + 60))
until grep -q "$marker: attempt 1: no such file" "$work/wait.err" 2>/dev/null; do
  ((SECONDS < deadline)) || fail "wait logged no attempt: $(cat "$work/wait.err")"
  sleep 0.05
done
touch "$marker"
status=0
wait "$waiter" || status=$?
[[ "$status" == 0 && "$(cat "$work/wait.out")" == released ]] ||
  fail "wait exited $status with $(cat "$work/wait.out") $(cat "$work/wait.err")"
expect 1 "${qemu[@]}" wait --timeout 1s "$closed" -- /bin/echo never
grep -q never "$work/out" && fail "wait ran the command although the target never was ready"
echo "arm64: wait: released by a file after TCP and HTTP, exec'd the command; deadline exit 1"

# A terminating signal while waiting: exit 128+15, without running the command.
"${qemu[@]}" wait -v --timeout 60s "$closed" -- /bin/echo never >"$work/signal.out" 2>"$work/signal.err" &
waiter=$!
deadline=$((SECONDS + 60))
until grep -q "attempt 1: connection refused" "$work/signal.err" 2>/dev/null; do
  ((SECONDS < deadline)) || fail "wait logged no attempt: $(cat "$work/signal.err")"
  sleep 0.05
done
kill -TERM "$waiter"
status=0
wait "$waiter" || status=$?
[[ "$status" == 143 && ! -s "$work/signal.out" ]] || fail "SIGTERM: exit $status, output $(cat "$work/signal.out")"
echo "arm64: SIGTERM while waiting: exit 143"
echo "arm64: smoke checks passed in $((SECONDS - started)) s"

