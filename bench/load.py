#!/usr/bin/env python3
"""The load a waiter puts on a cluster, readygate beside its peers (bench/load.sh).

Every waiter runs alone in a network namespace this script makes (`ip netns add`): loopback,
plus one interface (a dummy, or a port-less bridge where the kernel has no dummy driver) with
the TEST-NET address 192.0.2.1/24 and no other address. `ip netns exec` bind-mounts a pod's
resolv.conf (`ndots:5`, three search domains) pointing at bench/load_agent.py on 192.0.2.1:53,
which answers as CoreDNS does with TTL 5 s and logs every query and the namespace's TCP
connection attempts. The dependency, `db` (192.0.2.1:5432), stays down: connections are
refused. Writes the "Load" section of bench/report.md and its table in docs/performance.md.
A benchmark, not a test: nothing here fails on a slow number.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import sections

HERE = Path(__file__).resolve().parent
AGENT = HERE / "load_agent.py"
RESOLV_CONF = """nameserver 192.0.2.1
search default.svc.cluster.local svc.cluster.local cluster.local
options ndots:5
"""
SERVICE = "db.default.svc.cluster.local"
BUSY = "busy.default.svc.cluster.local"
WINDOWS = [(0, 5), (5, 30), (30, 60)]
PREFIX = "rg-load"


def log(message):
    print(f"load: {message}", file=sys.stderr, flush=True)


class Netns:
    """A network namespace with loopback and 192.0.2.1/24, its resolv.conf, and the agent."""

    counter = 0

    def __init__(self, agent_args=()):
        Netns.counter += 1
        self.name = f"{PREFIX}-{os.getpid()}-{Netns.counter}"
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        self.ip("link", "set", "lo", "up")
        if self.ip("link", "add", "rg0", "type", "dummy", check=False).returncode != 0:
            self.ip("link", "add", "rg0", "type", "bridge")
        self.ip("addr", "add", "192.0.2.1/24", "dev", "rg0")
        self.ip("link", "set", "rg0", "up")
        self.etc = Path("/etc/netns") / self.name
        self.etc.mkdir(parents=True, exist_ok=True)
        (self.etc / "resolv.conf").write_text(RESOLV_CONF)
        (self.etc / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
        records = [f"--record={SERVICE}=192.0.2.1", f"--record={BUSY}=192.0.2.1"]
        self.agent = subprocess.Popen(
            self.exec_args([sys.executable, str(AGENT), *records, *agent_args]),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.events = []
        ready = threading.Event()

        def read():
            for line in self.agent.stdout:
                event = json.loads(line)
                if event["event"] == "ready":
                    ready.set()
                self.events.append(event)

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not ready.wait(10):
            raise SystemExit(f"load: the agent in {self.name} did not start")

    def ip(self, *args, check=True):
        return subprocess.run(["ip", "-n", self.name, *args], check=check, capture_output=True)

    def exec_args(self, command):
        return ["ip", "netns", "exec", self.name, *command]

    def opens_at(self, t):
        """TCP connection attempts made in the namespace by time `t` (the last sample before)."""
        samples = [e["count"] for e in self.events if e["event"] == "opens" and e["t"] <= t]
        return samples[-1] if samples else 0

    def dns(self, since, until):
        return [e for e in self.events if e["event"] == "dns" and since <= e["t"] < until]

    def first(self, kind):
        return next((e["t"] for e in self.events if e["event"] == kind), None)

    def close(self):
        self.agent.stdin.close()
        self.agent.terminate()
        self.agent.wait()
        subprocess.run(["ip", "netns", "del", self.name], check=False)
        shutil.rmtree(self.etc, ignore_errors=True)


def run_in(netns, command, seconds):
    """Runs `command` in `netns` for up to `seconds` (killed after); returns its start time,
    end time, exit status and CPU seconds (user+sys, with reaped children)."""
    start = time.monotonic()
    proc = subprocess.Popen(netns.exec_args(command), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    timer = threading.Timer(seconds, lambda: os.killpg(proc.pid, 9))
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    end = time.monotonic()
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"start": start, "end": end, "code": proc.returncode,
            "cpu": usage.ru_utime + usage.ru_stime}


def in_parallel(jobs):
    """Runs each `(key, function)` on a thread of its own; their results by key."""
    results, threads = {}, []
    for key, job in jobs:
        thread = threading.Thread(target=lambda k=key, j=job: results.__setitem__(k, j()))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    return results


def peers(args):
    """The waiters to compare, by name: a command for a host and port."""
    tools = {
        "readygate": lambda host, port: [args.readygate, "wait", "-q", "-t", f"{args.seconds}s",
                                         f"tcp://{host}:{port}"],
    }
    if shutil.which("wait-for-it"):
        tools["wait-for-it"] = lambda host, port: ["wait-for-it", "-q", "-t", str(args.seconds),
                                                   f"{host}:{port}"]
    if args.wait_on and Path(args.wait_on).exists():
        tools["wait-on"] = lambda host, port: [args.wait_on, "-t", f"{args.seconds * 1000}",
                                               f"tcp:{host}:{port}"]
    if shutil.which("curl"):
        tools["`until curl; sleep 1`"] = lambda host, port: [
            "sh", "-c", f"until curl -s -o /dev/null http://{host}:{port}/; do sleep 1; done"]
    return tools


def load(args):
    """Every peer on `db` (resolves, refused) and on `nodb` (does not exist), all at once."""
    cases = []
    for tool, command in peers(args).items():
        for name in ["db", "nodb"]:
            cases.append((tool, name, command(name, 5432)))
    spaces = {(tool, name): Netns() for tool, name, _ in cases}
    log(f"{len(cases)} waiters for {args.seconds} s, each in its own namespace")
    try:
        runs = in_parallel([((tool, name), lambda t=tool, n=name, c=command:
                             run_in(spaces[(t, n)], c, args.seconds + 1))
                            for tool, name, command in cases])
        time.sleep(0.3)  # the last counter samples
        results = {}
        for key, run in runs.items():
            space, t0 = spaces[key], runs[key]["start"]
            row = {"attempts": [], "dns": [], "sockets": len({e["port"] for e in space.dns(t0, t0 + 1e9)})}
            base = space.opens_at(t0)
            for since, until in WINDOWS:
                opens = space.opens_at(t0 + until) - space.opens_at(t0 + since) if since else \
                    space.opens_at(t0 + until) - base
                row["attempts"].append(opens / (until - since))
                row["dns"].append(len(space.dns(t0 + since, t0 + until)) / (until - since))
            results[f"{key[0]}|{key[1]}"] = row
        return results
    finally:
        for space in spaces.values():
            space.close()


def detection(args, host):
    """Trials of readygate waiting on `host`:5432, which comes up at a random 1–3 s."""
    trials = []
    for batch in range(0, args.trials, 6):
        spaces = [Netns() for _ in range(min(6, args.trials - batch))]
        listen = "127.0.0.1" if host == "127.0.0.1" else "192.0.2.1"

        def trial(space):
            space.agent.stdin.write(f"up {listen} 5432 {random.uniform(1, 3):.3f}\n")
            space.agent.stdin.flush()
            return run_in(space, [args.readygate, "wait", "-q", "-t", "10s", f"tcp://{host}:5432"], 12)

        try:
            runs = in_parallel([(i, lambda s=s: trial(s)) for i, s in enumerate(spaces)])
            time.sleep(0.2)
            for i, space in enumerate(spaces):
                up = space.first("up")
                if runs[i]["code"] == 0 and up is not None:
                    trials.append(runs[i]["end"] - up)
        finally:
            for space in spaces:
                space.close()
    return trials


def cpu_and_busy(args):
    """CPU over 10 s on a local and a remote refused port (three each), the local attempt
    rate, and requests to a `503` with `Retry-After: 3` over a 10 s wait."""
    jobs, spaces = [], {}
    for i in range(3):
        for kind, target in [("local", "tcp://127.0.0.1:5432"), ("remote", "tcp://db:5432")]:
            spaces[(kind, i)] = Netns()
            jobs.append(((kind, i), target))
    spaces[("busy", 0)] = Netns(["--busy-port=8080", "--retry-after=3"])
    jobs.append((("busy", 0), "http://busy:8080/"))
    try:
        runs = in_parallel([(key, lambda k=key, t=target: run_in(
            spaces[k], [args.readygate, "wait", "-q", "-t", "10s", t], 12)) for key, target in jobs])
        time.sleep(0.2)
        out = {"local_cpu": [], "remote_cpu": [], "local_rate": [], "remote_rate": []}
        for (kind, i), run in runs.items():
            space = spaces[(kind, i)]
            if kind == "busy":
                out["busy_requests"] = sum(1 for e in space.events if e["event"] == "http")
                continue
            out[f"{kind}_cpu"].append(run["cpu"])
            opens = space.opens_at(run["end"]) - space.opens_at(run["start"])
            out[f"{kind}_rate"].append(opens / (run["end"] - run["start"]))
        return out
    finally:
        for space in spaces.values():
            space.close()


def fmt_rate(x):
    return f"{x:.2f}"


def fmt_ms(seconds):
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def section(r):
    tools = list(dict.fromkeys(k.split("|")[0] for k in r["load"]))
    rows = ["| while waiting 60 s on `db:5432` (down) | " + " | ".join(tools) + " |",
            "| --- |" + " --- |" * len(tools)]
    for label, name, field in [("connection attempts / s at the dependency", "db", "attempts"),
                               ("DNS queries / s, name that resolves (`db`)", "db", "dns"),
                               ("DNS queries / s, name that does not exist (`nodb`)", "nodb", "dns")]:
        for w, (since, until) in enumerate(WINDOWS):
            cells = [fmt_rate(r["load"][f"{t}|{name}"][field][w]) for t in tools]
            rows.append(f"| {label}, {since}–{until} s | " + " | ".join(cells) + " |")
    cells = [str(r["load"][f"{t}|nodb"]["sockets"]) for t in tools]
    rows.append("| UDP source ports used for DNS over 60 s (`nodb`) | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def goals(r):
    load = r["load"]
    rg = {k.split("|")[1]: v for k, v in load.items() if k.startswith("readygate|")}
    median = lambda xs: statistics.median(xs) if xs else float("nan")
    rows = [
        ("attempts / s, 5–30 s", "≤ 1.0", rg["db"]["attempts"][1], fmt_rate),
        ("attempts / s, 30–60 s", "≤ 0.5", rg["db"]["attempts"][2], fmt_rate),
        ("DNS q/s, name that does not exist, 5–30 s", "≤ 2", rg["nodb"]["dns"][1], fmt_rate),
        ("DNS q/s, name that resolves, 5–30 s", "≤ 0.5", rg["db"]["dns"][1], fmt_rate),
        ("remote detection (up at 1–3 s), median", "≤ 1 s", median(r["remote_detect"]), fmt_ms),
        ("local detection (TCP, up at 1–3 s), median", "≤ 50 ms", median(r["local_detect"]), fmt_ms),
        ("attempts / s on a local refused port", "≥ 5", median(r["busy"]["local_rate"]), fmt_rate),
        ("requests to a 503 with `Retry-After: 3` in 10 s", "≤ 5", r["busy"]["busy_requests"], str),
        ("CPU over 10 s, local refused port (median of 3)", "≤ 50 ms", median(r["busy"]["local_cpu"]), fmt_ms),
        ("CPU over 10 s, remote refused port (median of 3)", "≤ 10 ms", median(r["busy"]["remote_cpu"]), fmt_ms),
    ]
    limits = {"≤ 1.0": lambda x: x <= 1.0, "≤ 0.5": lambda x: x <= 0.5, "≤ 2": lambda x: x <= 2,
              "≤ 1 s": lambda x: x <= 1.0, "≤ 50 ms": lambda x: x <= 0.05, "≥ 5": lambda x: x >= 5,
              "≤ 5": lambda x: x <= 5, "≤ 10 ms": lambda x: x <= 0.01}
    lines = ["| goal (readygate, defaults) | target | measured | met |", "| --- | --- | --- | --- |"]
    for label, target, value, fmt in rows:
        lines.append(f"| {label} | {target} | {fmt(value)} | {'yes' if limits[target](value) else 'NO'} |")
    return "\n".join(lines)


def report(r):
    remote, local = r["remote_detect"], r["local_detect"]
    spread = lambda xs: f"{fmt_ms(min(xs))}–{fmt_ms(max(xs))}" if xs else "–"
    return f"""## Load on the cluster

Written by `bench/load.sh`; do not edit by hand. {r['date']}, readygate {r['commit']}
({r['flavour']}), {r['machine']}.

{section(r)}

{goals(r)}

Detection trials: remote {len(remote)} (range {spread(remote)}), local {len(local)} (range
{spread(local)}); samples, seconds: remote {', '.join(f'{x:.3f}' for x in sorted(remote))};
local {', '.join(f'{x:.4f}' for x in sorted(local))}. CPU, seconds: local
{', '.join(f'{x:.4f}' for x in r['busy']['local_cpu'])}; remote
{', '.join(f'{x:.4f}' for x in r['busy']['remote_cpu'])}.

Method: each waiter alone in a network namespace made for it (`ip netns add`; loopback and
192.0.2.1/24 on {r['link']}, no other address), `/etc/resolv.conf` a pod's (`ndots:5`, three
search domains) through `ip netns exec`, pointing at `bench/load_agent.py` on 192.0.2.1:53: A
`db.default.svc.cluster.local` = 192.0.2.1 with TTL 5 s, NODATA and NXDOMAIN with an SOA of
5 s, as CoreDNS answers. `db:5432` refuses connections for the whole wait. Attempts are the
namespace's TCP `ActiveOpens` (sampled every 100 ms), DNS queries the agent's log, both per
window of the wait. All {len(r['load'])} waiters of the load table run at once, for
{r['seconds']} s. Detection: the agent starts listening on 192.0.2.1:5432 (remote, `db`) or
127.0.0.1:5432 (local) at a random 1–3 s; the latency runs from its `listen` to readygate's exit.
CPU: user+sys from `wait4` over `wait -t 10s` on a refused port, three of each at once, with
the `503` server's waiter beside them."""


def summary_table(r):
    rg = {k.split("|")[1]: v for k, v in r["load"].items() if k.startswith("readygate|")}
    median = statistics.median
    return f"""Latest run: {r['date']}, readygate {r['commit']}. A remote target that stays down, defaults:

| figure | readygate | goal |
| --- | --- | --- |
| attempts / s at the dependency, 0–5 / 5–30 / 30–60 s | {' / '.join(fmt_rate(x) for x in rg['db']['attempts'])} | ≤ 1.0 (5–30 s), ≤ 0.5 (30–60 s) |
| DNS queries / s, name that resolves, 0–5 / 5–30 / 30–60 s | {' / '.join(fmt_rate(x) for x in rg['db']['dns'])} | ≤ 0.5 (5–30 s) |
| DNS queries / s, name that does not exist, 0–5 / 5–30 / 30–60 s | {' / '.join(fmt_rate(x) for x in rg['nodb']['dns'])} | ≤ 2 (5–30 s) |
| remote dependency up at 1–3 s: detection median | {fmt_ms(median(r['remote_detect']))} | ≤ 1 s |
| local TCP up at 1–3 s: detection median | {fmt_ms(median(r['local_detect']))} | ≤ 50 ms |
| local refused port: attempts / s | {fmt_rate(median(r['busy']['local_rate']))} | ≥ 5 |
| `503` with `Retry-After: 3`: requests in a 10 s wait | {r['busy']['busy_requests']} | ≤ 5 |
| CPU over 10 s: local / remote refused port | {fmt_ms(median(r['busy']['local_cpu']))} / {fmt_ms(median(r['busy']['remote_cpu']))} | ≤ 50 ms / ≤ 10 ms |

The peers beside it: [`bench/report.md`](../bench/report.md), "Load on the cluster"."""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readygate", required=True)
    parser.add_argument("--flavour", default="release")
    parser.add_argument("--wait-on")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--report", type=Path, default=HERE / "report.md")
    parser.add_argument("--summary", type=Path, default=HERE.parent / "docs" / "performance.md")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args()
    probe = Netns()
    link = "a dummy interface" if b"dummy" in probe.ip("-d", "link", "show", "rg0").stdout \
        else "a port-less bridge (no dummy driver in this kernel)"
    probe.close()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=HERE).stdout.strip()
    r = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit,
         "flavour": args.flavour, "seconds": args.seconds, "link": link,
         "machine": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start"}
    log("CPU, local attempt rate and Retry-After (10 s)")
    r["busy"] = cpu_and_busy(args)
    log(f"detection: {args.trials} remote and {args.trials} local trials")
    r["remote_detect"] = detection(args, "db")
    r["local_detect"] = detection(args, "127.0.0.1")
    r["load"] = load(args)
    r["machine"] += f", {os.getloadavg()[0]:.2f} at the end"
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(r, indent=1))
    sections.replace(args.report, "load", report(r))
    sections.replace(args.summary, "load", summary_table(r), heading="## Load on the cluster")
    print(goals(r))


if __name__ == "__main__":
    main()
