#!/usr/bin/env bash
# Measures, with the release binary, a wait against a server that sends `103` heads forever
# (tests/it/hostile.rs's informational_forever) with readygate's CPU limited by a cgroup it
# makes for itself (v2 cpu.max, else v1 cfs quota): how long `wait -t 2s --attempt-timeout
# 500ms` runs, and how long SIGTERM takes to end `wait -t 60s`. As root; prints one line per
# limit.  Usage: bench/cpu_limited.sh [PERCENT...]   (default: 100 20 10)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
bin="$PWD/target/release/readygate"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 - "$port" <<'PY' &
import socket, sys, threading
head = b"HTTP/1.1 103 Early Hints\r\n" + b"".join(
    b"Link: </asset-%d.css>; rel=preload; as=style\r\n" % n for n in range(50)) + b"\r\n"
def serve(conn):
    try:
        conn.recv(65536)
        while True:
            conn.sendall(head * 20)
    except OSError:
        pass
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
server=$!
group=""
cleanup() { kill "$server" 2>/dev/null || true; [[ -n $group ]] && rmdir "$group" 2>/dev/null || true; }
trap cleanup EXIT
sleep 0.5

# A cgroup of our own with PERCENT of one CPU; prints its path.
make_group() {
  local quota=$(($1 * 1000))
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    local g=/sys/fs/cgroup/readygate-bench-$$
    mkdir -p "$g" && echo "$quota 100000" >"$g/cpu.max"
  else
    local g=/sys/fs/cgroup/cpu/readygate-bench-$$
    mkdir -p "$g" && echo 100000 >"$g/cpu.cfs_period_us" && echo "$quota" >"$g/cpu.cfs_quota_us"
  fi
  echo "$g"
}

for percent in "${@:-100 20 10}"; do
  for p in $percent; do
    group=$(make_group "$p")
    start=$(date +%s.%N)
    sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$group" \
      "$bin" wait -q -t 2s --attempt-timeout 500ms "http://127.0.0.1:$port/" || true
    end=$(date +%s.%N)
    sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$group" \
      "$bin" wait -q -t 60s "http://127.0.0.1:$port/" &
    waiting=$!
    sleep 1
    signalled=$(date +%s.%N)
    kill -TERM "$waiting"
    wait "$waiting" || status=$?
    ended=$(date +%s.%N)
    printf '%3s%% of a CPU: wait -t 2s ended after %.2f s; SIGTERM answered in %.0f ms (exit %s)\n' \
      "$p" "$(echo "$end - $start" | bc)" "$(echo "($ended - $signalled) * 1000" | bc)" "${status:-0}"
    rmdir "$group"
    group=""
  done
done
