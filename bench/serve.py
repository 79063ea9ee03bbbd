#!/usr/bin/env python3
"""`readygate serve` against the exec probe it replaces, on this machine, side by side in one
run: the node's CPU per probe (exec path: `runc exec CTR /readygate probe tcp://…`, runc's and
readygate's CPU; serve path: a kubelet-like Go client's GET /ready, the client's and serve's
CPU), latency cached and not, memory idle and under 64 clients, CPU at idle, latency while
hostile clients attack, and the static binary's growth. Writes its section of bench/report.md.

Run by bench/serve.sh, which installs runc, busybox-static and Go, builds the static binary and
the client (bench/kubeprobe). Both paths check the same target: a listener on 127.0.0.1.
"""

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import sections
from containers import bundle, listener, percentile, versions



def children_cpu():
    """CPU seconds of every child (and its reaped descendants) this process has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def process_cpu(pid):
    """CPU seconds of every thread of `pid` so far (schedstat: nanoseconds on a CPU)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


def status_kib(pid, field):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise SystemExit(f"no {field} for {pid}")


def exec_path(args, port):
    """Per probe: latencies and runc's + readygate's CPU, through `runc exec`."""
    work = Path(tempfile.mkdtemp(prefix="readygate-serve-bench."))
    name = f"readygate-serve-bench-{os.getpid()}"
    runc = ["runc", "--root", str(work / "state")]
    bundle(work / "bundle", args.readygate, args.busybox)
    subprocess.run(
        runc + ["run", "--detach", "--bundle", str(work / "bundle"), name],
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    command = runc + ["exec", name, "/readygate", "probe", f"tcp://127.0.0.1:{port}"]
    try:
        for _ in range(args.warmup):
            subprocess.run(command, check=True, capture_output=True)
        latencies = []
        before = children_cpu()
        for _ in range(args.probes):
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            latencies.append(time.perf_counter() - started)
        cpu = (children_cpu() - before) / args.probes
    finally:
        subprocess.run(runc + ["delete", "--force", name], check=False)
        shutil.rmtree(work, ignore_errors=True)
    return latencies, cpu


class Serve:
    """`readygate serve` on a free loopback port, for the duration of a `with` block."""

    def __init__(self, readygate, *args):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        listen = f"127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [readygate, "serve", "--listen", listen, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port)).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("serve did not listen")
                time.sleep(0.01)
        self.url = f"http://{listen}/ready"
        self.pid = self.process.pid

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.process.terminate()
        self.process.wait(timeout=5)


def kubeprobe(args, url, probes, clients=1, gap="0s", may_fail=False):
    """The Go client's report: latencies, failures (and why), its own CPU seconds."""
    out = subprocess.run(
        [args.kubeprobe, "-url", url, "-n", str(probes), "-c", str(clients), "-gap", gap],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    report = json.loads(out)
    if report["failed"] and not may_fail:
        raise SystemExit(f"{report['failed']} probes of {url} failed: {report['errors']}")
    return report


def serve_path(args, port, fresh_for):
    """Per probe: latencies and the client's + serve's CPU."""
    with Serve(args.readygate, "--fresh-for", fresh_for, f"tcp://127.0.0.1:{port}") as serve:
        kubeprobe(args, serve.url, args.warmup)
        before = process_cpu(serve.pid)
        report = kubeprobe(args, serve.url, args.probes)
        server = (process_cpu(serve.pid) - before) / args.probes
        client = report["cpu_seconds"] / args.probes
    return report["latencies"], client, server


def memory_and_idle(args, port):
    """RSS idle and under 64 clients (KiB), CPU seconds over an idle spell."""
    with Serve(args.readygate, f"tcp://127.0.0.1:{port}") as serve:
        kubeprobe(args, serve.url, 5)
        time.sleep(0.5)
        idle_rss = status_kib(serve.pid, "VmRSS")
        before = process_cpu(serve.pid)
        time.sleep(args.idle)
        idle_cpu = process_cpu(serve.pid) - before
        peak = [0]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], status_kib(serve.pid, "VmRSS"))
                time.sleep(0.005)

        sampler = threading.Thread(target=sample)
        sampler.start()
        kubeprobe(args, serve.url, 50, clients=64)
        stop.set()
        sampler.join()
        hwm = status_kib(serve.pid, "VmHWM")
    return idle_rss, idle_cpu, max(peak[0], 0), hwm


def under_attack(args, port):
    """Latencies of a well-behaved client while 10,000 connections are opened and held and 200
    more drip their request heads."""
    resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[1:] * 2)
    with Serve(args.readygate, f"tcp://127.0.0.1:{port}") as serve:
        stop = threading.Event()
        held = []

        def attack():
            while not stop.is_set() and len(held) < args.connections:
                try:
                    held.append(socket.create_connection(("127.0.0.1", serve.port)))
                except OSError:
                    break
            drips = [socket.create_connection(("127.0.0.1", serve.port)) for _ in range(200)]
            while not stop.is_set():
                for drip in drips:
                    try:
                        drip.send(b"X")
                    except OSError:
                        pass
                time.sleep(0.05)

        attacker = threading.Thread(target=attack, daemon=True)
        attacker.start()
        report = kubeprobe(args, serve.url, 300, gap="10ms", may_fail=True)
        opened = len(held)
        stop.set()
        attacker.join(timeout=10)
        for connection in held:
            connection.close()
    return report["latencies"], opened, report["failed"], report["errors"]


def section(args, results, started):
    ms = lambda s: f"{s * 1000:.2f} ms"
    us = lambda s: f"{s * 1e6:.0f} µs"
    exec_lat, exec_cpu = results["exec"]
    unc_lat, unc_client, unc_server = results["uncached"]
    cac_lat, cac_client, cac_server = results["cached"]
    idle_rss, idle_cpu, busy_rss, hwm = results["memory"]
    attack_lat, opened, attack_failed, attack_errors = results["attack"]
    serve_cpu = unc_client + unc_server
    ratio = exec_cpu / serve_cpu
    size = Path(args.readygate).stat().st_size
    growth = size - args.size_before if args.size_before else None
    runc_version, kernel = versions()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    rows = [
        ("exec: `runc exec CTR /readygate probe tcp://…`", exec_lat, exec_cpu, "runc + readygate"),
        ("serve, not cached (`--fresh-for 0`): GET /ready", unc_lat, serve_cpu,
         f"client {us(unc_client)} + serve {us(unc_server)}"),
        ("serve, cached (`--fresh-for 1s`, default)", cac_lat, cac_client + cac_server,
         f"client {us(cac_client)} + serve {us(cac_server)}"),
    ]
    table = "\n".join(
        f"| {label} | {ms(statistics.median(lat))} | {ms(percentile(lat, 0.9))} | {us(cpu)} | {who} |"
        for label, lat, cpu, who in rows
    )
    met = lambda ok: "yes" if ok else "no"
    growth_row = (
        f"| static size growth (vs {args.size_before:,} bytes) | ≤ 128 KiB | "
        f"{growth / 1024:+.1f} KiB | {met(growth <= 128 * 1024)} |"
        if growth is not None
        else "| static size growth | ≤ 128 KiB | not measured (no --size-before) | |"
    )
    cached_median = statistics.median(cac_lat)
    attack_max = max(attack_lat)
    return f"""## `serve` against exec probes

Written by `bench/serve.sh`; do not edit by hand. One run, side by side, both paths checking
the same target (a listener on 127.0.0.1), {args.probes} probes each after {args.warmup}
warm-up ones. Exec path: `runc exec` of `/readygate probe tcp://…` in a running runc container
(as in "Through a container runtime"), CPU of runc and everything it starts (the children's
rusage). Serve path: `readygate serve` on the host and `bench/kubeprobe`, a Go client made
like the kubelet's httpGet prober (net/http, a fresh connection per probe, `kube-probe`
User-Agent), CPU of the client (its rusage) and of serve (schedstat of its threads). The
kubelet's own work to start an exec (CRI ExecSync, containerd) is not counted: the exec path
costs more than this in a cluster.

- date: {started}; {runc_version}, Linux {kernel}; load average after: {load}
- readygate: {args.readygate_version}, {size:,} bytes (static-pie)

| probe | median | p90 | CPU per probe | counted |
| --- | --- | --- | --- | --- |
{table}

| goal | target | measured | met |
| --- | --- | --- | --- |
| CPU per probe, serve (not cached) ÷ exec | ≤ 1/20 | 1/{ratio:.0f} ({us(serve_cpu)} vs {us(exec_cpu)}) | {met(ratio >= 20)} |
| median answer, cached | ≤ 2 ms | {ms(cached_median)} | {met(cached_median <= 0.002)} |
| median answer, not cached | one attempt's time | {ms(statistics.median(unc_lat))} | |
| RSS idle | ≤ 8 MiB | {idle_rss / 1024:.1f} MiB | {met(idle_rss <= 8 * 1024)} |
| RSS under 64 concurrent clients (sampled peak; VmHWM) | ≤ 16 MiB | {busy_rss / 1024:.1f} MiB; {hwm / 1024:.1f} MiB | {met(max(busy_rss, hwm) <= 16 * 1024)} |
| CPU at idle over {args.idle:.0f} s (no polling) | 0 | {idle_cpu * 1000:.3f} ms | {met(idle_cpu < 0.001)} |
| answers while {opened:,} connections are opened and held and 200 drip their heads: max (p50, p99; {len(attack_lat)} probes, {attack_failed} failed{": " + json.dumps(attack_errors) if attack_failed else ""}) | ≤ 100 ms | {ms(attack_max)} ({ms(statistics.median(attack_lat))}, {ms(percentile(attack_lat, 0.99))}) | {met(attack_max <= 0.1 and not attack_failed)} |
{growth_row}"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readygate", required=True)
    parser.add_argument("--kubeprobe", required=True)
    parser.add_argument("--busybox", default="/bin/busybox")
    parser.add_argument("--probes", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=10000)
    parser.add_argument("--size-before", type=int, help="the static binary's size without serve")
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    args.readygate_version = subprocess.run(
        [args.readygate, "--version"], capture_output=True, text=True
    ).stdout.strip()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    port = listener()
    results = {
        "exec": exec_path(args, port),
        "uncached": serve_path(args, port, "0"),
        "cached": serve_path(args, port, "1s"),
        "memory": memory_and_idle(args, port),
        "attack": under_attack(args, port),
    }
    text = section(args, results, started)
    if args.report:
        sections.replace(args.report, "serve", text)
    print(text)


if __name__ == "__main__":
    main()
