#!/usr/bin/env python3
"""readygate side by side with its peers, in one run on this machine.

Started by bench/run.sh, which installs the peers and builds readygate. Measures one-shot probes
(hyperfine), peak RSS (GNU time), detection latency after a target comes up, CPU over a wait on
a closed port, fan-out to many targets and the shipped size; writes a Markdown report and the
table in docs/performance.md. A benchmark, not a test: nothing here fails on a slow number.
"""

import argparse
import itertools
import json
import os
import random
import re
import selectors
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import sections

TRUE = "/bin/true"
MIB = 1024 * 1024

# The peers, in the report's column order.
COLUMNS = ["readygate", "/bin/true", "nc -z", "curl -sf", "wait-for-it", "wait-on", "wait-for-them"]

# What readygate is to reach at default settings (docs/performance.md "Goals"); checked in the
# report.
GOALS = {
    "oneshot_vs_true": 2.0,  # one-shot wall ÷ /bin/true, at most
    "cheaper_than_curl": 1 / 0.3,  # curl -sf ÷ readygate HTTP one-shot, at least
    "rss_mib": 4.0,
    "detect_net_ms": 50.0,  # median, TCP and HTTP
    "detect_file_ms": 5.0,  # median
    "cpu_ms": 100.0,  # over the 20 s closed-port wait: 50 ms per 10 s
}


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def free_ports(count):
    """Ports nothing listens on now: bound all at once so they differ, then released."""
    sockets = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def free_port():
    return free_ports(1)[0]


def wait_for_port(port, deadline=10.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.02)
    raise SystemExit(f"bench: nothing listens on 127.0.0.1:{port} after {deadline}s")


class Nginx:
    """A private nginx on 127.0.0.1: one port for the probes, `fan` more for fan-out."""

    def __init__(self, work, fan):
        self.dir = work / "nginx"
        (self.dir / "tmp").mkdir(parents=True)
        ports = free_ports(1 + fan)
        self.port, self.fan_ports = ports[0], ports[1:]
        listens = "\n".join(f"    listen 127.0.0.1:{p};" for p in self.fan_ports)
        temp = " ".join(
            f"{kind}_temp_path {self.dir}/tmp/{kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        conf = f"""daemon off;
worker_processes 1;
worker_rlimit_nofile {fan + 4096};
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  default_type text/plain;
  {temp}
  server {{
    listen 127.0.0.1:{self.port};
    location / {{ return 200 "ok\\n"; }}
  }}
  server {{
{listens}
    location / {{ return 200 "ok\\n"; }}
  }}
}}
"""
        (self.dir / "nginx.conf").write_text(conf)
        self.process = subprocess.Popen(
            ["nginx", "-p", str(self.dir), "-c", str(self.dir / "nginx.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port)
        if self.fan_ports:
            wait_for_port(self.fan_ports[-1])

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def version(self):
        out = subprocess.run(["nginx", "-v"], capture_output=True, text=True)
        return out.stderr.strip().split("/")[-1]


# The detection target's server, run as a process of its own (`python3 -c`), so that neither
# the driver's own threads nor the interpreter lock of the process that times the waiters delay
# an answer. It waits for a line on stdin, then binds and listens, prints the monotonic time at
# which the kernel accepts connections (CLOCK_MONOTONIC is the same clock in every process), and
# serves every connection at once on one asyncio loop: HTTP answers `200 ok`, TCP just closes.
TARGET_SERVER = r"""
import asyncio, socket, sys, time
port, http = int(sys.argv[1]), sys.argv[2] == "http"
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"

async def answer(reader, writer):
    try:
        if http:
            await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 1)
            writer.write(ANSWER)
            await writer.drain()
    except Exception:
        pass
    writer.close()

async def main():
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.readline)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(512)
    print(time.monotonic(), flush=True)
    await asyncio.start_server(answer, sock=sock)
    await asyncio.Event().wait()

asyncio.run(main())
"""


class Target:
    """A TCP or HTTP listener of our own, brought up at a chosen moment: `up()` returns the
    monotonic time at which the kernel accepts connections. HTTP answers `200 ok` to anything.
    The server is started (and warm) before the moment comes, in a process of its own."""

    def __init__(self, port, http):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", TARGET_SERVER, str(port), "http" if http else "tcp"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )

    def up(self):
        self.proc.stdin.write("up\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def down(self):
        self.proc.kill()
        self.proc.wait()


class Bench:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.rg = args.readygate
        self.results = {}
        self.counter = itertools.count()
        self.idle = []

    # --- one-shot wall time -------------------------------------------------------------------

    def hyperfine(self, name, argv, runs, warmup):
        """`argv`'s wall times in seconds, one hyperfine run (no shell) after a warm-up."""
        out = self.work / f"hyperfine-{next(self.counter)}.json"
        done = subprocess.run(
            ["hyperfine", "-N", "--style", "none", "-w", str(warmup), "-r", str(runs),
             "--export-json", str(out), "-n", name, shlex.join(argv)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"bench: hyperfine failed on {name}:\n{done.stderr}")
        result = json.loads(out.read_text())["results"][0]
        return result["times"], result["user"], result["system"]

    def hyperfine_all(self, kind, tools, runs):
        """One hyperfine run over several commands, one after the other: wall times of each."""
        out = self.work / f"hyperfine-{next(self.counter)}.json"
        args = ["hyperfine", "-N", "--style", "none", "-w", "3", "-r", str(runs),
                "--export-json", str(out)]
        for tool, argv in tools.items():
            args += ["-n", tool, shlex.join(argv)]
        done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise SystemExit(f"bench: hyperfine failed on one-shot {kind}:\n{done.stderr}")
        return {
            result["command"]: (result["times"], result["user"], result["system"])
            for result in json.loads(out.read_text())["results"]
        }

    def timed(self, name, argv, runs, warmup):
        """Summary of `argv`'s wall times over one hyperfine run of `runs`."""
        times, user, system = self.hyperfine(name, argv, runs, warmup)
        return summarize(times, user, system)

    def oneshot(self, nginx):
        a = self.args
        tcp = f"127.0.0.1:{nginx.port}"
        url = f"http://127.0.0.1:{nginx.port}/"
        cases = {
            "tcp": {
                "readygate": [self.rg, "probe", f"tcp://{tcp}"],
                "/bin/true": [TRUE],
                "nc -z": ["nc", "-z", "127.0.0.1", str(nginx.port)],
                "wait-for-it": ["wait-for-it", "-q", "-t", "1", tcp],
                "wait-on": [a.wait_on, "-t", "1000", f"tcp:{tcp}"],
                "wait-for-them": [a.wait_for_them, "-s", "-t", "1000", tcp],
            },
            "http": {
                "readygate": [self.rg, "probe", url],
                "/bin/true": [TRUE],
                "curl -sf": ["curl", "-sf", "-o", "/dev/null", url],
                "wait-on": [a.wait_on, "-t", "1000", f"http-get://127.0.0.1:{nginx.port}/"],
                "wait-for-them": [a.wait_for_them, "-s", "-t", "1000", url],
            },
        }
        # Many short rounds, each one hyperfine run over every quick tool of a kind, interleave
        # the tools finely: a burst of load on this shared machine falls on all of them rather
        # than on whichever ran at that moment. Each round first waits a little for a quiet
        # moment. wait-on (node, a third of a second a run) runs apart, so that it neither
        # stretches the rounds nor flushes the CPU caches between the others' runs.
        rounds = 10
        per_round = max(1, -(-a.runs // rounds))
        times = {kind: {tool: [] for tool in tools} for kind, tools in cases.items()}
        cpu = {kind: {tool: [] for tool in tools} for kind, tools in cases.items()}
        for round_ in range(rounds):
            for kind, tools in cases.items():
                idle = wait_for_quiet()
                self.idle.append(idle)
                log(f"one-shot {kind}: round {round_ + 1}/{rounds} (machine {idle:.0%} idle)")
                quick = {tool: argv for tool, argv in tools.items() if tool != "wait-on"}
                for tool, (t, u, s) in self.hyperfine_all(kind, quick, per_round).items():
                    times[kind][tool] += t
                    cpu[kind][tool].append((u, s))
        for kind, tools in cases.items():
            log(f"one-shot {kind}: wait-on")
            t, u, s = self.hyperfine(f"wait-on {kind}", tools["wait-on"], runs=a.runs, warmup=2)
            times[kind]["wait-on"] += t
            cpu[kind]["wait-on"].append((u, s))
        wall, rss = {}, {}
        for kind, tools in cases.items():
            wall[kind], rss[kind] = {}, {}
            for tool, argv in tools.items():
                u = statistics.mean(x for x, _ in cpu[kind][tool])
                s = statistics.mean(y for _, y in cpu[kind][tool])
                wall[kind][tool] = summarize(times[kind][tool], u, s)
                rss[kind][tool] = self.peak_rss(argv)
        self.results["oneshot"] = wall
        self.results["oneshot_idle"] = statistics.median(self.idle)
        self.results["rss"] = rss

    def peak_rss(self, argv, times=5):
        """Median of GNU time's peak resident set size (`%M`, KiB) over a few runs, in bytes."""
        out = self.work / "time.out"
        values = []
        for _ in range(times):
            subprocess.run(
                ["/usr/bin/time", "-o", str(out), "-f", "%M", *argv],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=True,
            )
            values.append(int(out.read_text().split()[-1]) * 1024)
        return statistics.median(values)

    # --- detection latency --------------------------------------------------------------------

    def waiters(self, kind, port, path):
        """Each tool's wait at its default settings, for a target that is not there yet."""
        a = self.args
        tcp = f"127.0.0.1:{port}"
        url = f"http://127.0.0.1:{port}/"
        if kind == "tcp":
            return {
                "readygate": [self.rg, "wait", f"tcp://{tcp}"],
                "nc -z": ["sh", "-c", f"until nc -z 127.0.0.1 {port}; do sleep 1; done"],
                "wait-for-it": ["wait-for-it", "-q", tcp],
                "wait-on": [a.wait_on, f"tcp:{tcp}"],
                "wait-for-them": [a.wait_for_them, "-s", tcp],
            }
        if kind == "http":
            return {
                "readygate": [self.rg, "wait", url],
                "curl -sf": ["sh", "-c", f"until curl -sf -o /dev/null {url}; do sleep 1; done"],
                "wait-on": [a.wait_on, f"http-get://127.0.0.1:{port}/"],
                "wait-for-them": [a.wait_for_them, "-s", url],
            }
        return {
            "readygate": [self.rg, "wait", f"file://{path}"],
            "wait-on": [a.wait_on, f"file:{path}"],
            "sh loop": ["sh", "-c", f"until [ -e {shlex.quote(str(path))} ]; do sleep 1; done"],
        }

    def detection(self):
        """Every waiter of a kind starts together; the target comes up at a random moment 1–3 s
        later; each waiter's latency runs from that moment to its exit."""
        out = {}
        for kind in ("tcp", "http", "file"):
            samples, failures = {}, {}
            for trial in range(self.args.trials):
                log(f"detection {kind}: trial {trial + 1}/{self.args.trials}")
                port = free_port()
                path = self.work / f"ready-{kind}-{trial}"
                waiters = self.waiters(kind, port, path)
                procs = {
                    tool: subprocess.Popen(
                        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL, start_new_session=True,
                    )
                    for tool, argv in waiters.items()
                }
                target = None if kind == "file" else Target(port, http=(kind == "http"))
                time.sleep(random.uniform(1.0, 3.0))
                early = {tool for tool, p in procs.items() if p.poll() is not None}
                if target is None:
                    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
                    os.close(fd)
                    at = time.monotonic()
                else:
                    at = target.up()
                exits = exit_times(procs, timeout=10.0)
                if target:
                    target.down()
                for tool, proc in procs.items():
                    if tool in early or tool not in exits or proc.returncode != 0:
                        failures[tool] = failures.get(tool, 0) + 1
                        stop(proc)
                    else:
                        samples.setdefault(tool, []).append(exits[tool] - at)
            out[kind] = {
                tool: {
                    "median": statistics.median(values),
                    "max": max(values),
                    "samples": values,
                    "failures": failures.get(tool, 0),
                }
                for tool, values in samples.items()
            }
            for tool, count in failures.items():
                out[kind].setdefault(tool, {"failures": count})
        self.results["detection"] = out

    # --- CPU while waiting --------------------------------------------------------------------

    def idle_cpu(self):
        """CPU (user+sys, with reaped children) of each tool waiting `cpu_seconds` on a closed
        port. They run together, with nothing else measured meanwhile: all are mostly asleep."""
        a = self.args
        secs = a.cpu_seconds
        port = free_port()
        tcp = f"127.0.0.1:{port}"
        url = f"http://127.0.0.1:{port}/"
        waiters = {
            "readygate": [self.rg, "wait", "-t", f"{secs}s", f"tcp://{tcp}"],
            "nc -z": ["timeout", str(secs), "sh", "-c",
                      f"until nc -z 127.0.0.1 {port}; do sleep 1; done"],
            "curl -sf": ["timeout", str(secs), "sh", "-c",
                         f"until curl -sf -o /dev/null {url}; do sleep 1; done"],
            "wait-for-it": ["wait-for-it", "-q", "-t", str(secs), tcp],
            "wait-on": [a.wait_on, "-t", str(secs * 1000), f"tcp:{tcp}"],
            "wait-for-them": [a.wait_for_them, "-s", "-t", str(secs * 1000), tcp],
        }
        log(f"CPU over {secs} s on a closed port: {', '.join(waiters)} together")
        procs = {
            tool: subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            for tool, argv in waiters.items()
        }
        out = {}
        for tool, proc in procs.items():
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            out[tool] = {"cpu": usage.ru_utime + usage.ru_stime, "user": usage.ru_utime,
                         "sys": usage.ru_stime}
        self.results["cpu"] = out

    # --- fan-out ------------------------------------------------------------------------------

    def fanout(self, nginx):
        a = self.args
        out = {}
        for count in (50, 500):
            ports = nginx.fan_ports[:count]
            loop_nc = self.work / f"nc-{count}.sh"
            loop_nc.write_text(
                "for p in " + " ".join(map(str, ports)) + "; do nc -z 127.0.0.1 $p || exit 1; done\n"
            )
            loop_wfi = self.work / f"wait-for-it-{count}.sh"
            loop_wfi.write_text(
                "for p in " + " ".join(map(str, ports))
                + "; do wait-for-it -q -t 1 127.0.0.1:$p || exit 1; done\n"
            )
            cases = {
                "readygate": ([self.rg, "wait", *(f"tcp://127.0.0.1:{p}" for p in ports)], 20),
                "nc -z": (["sh", str(loop_nc)], 10),
                "wait-for-it": (["bash", str(loop_wfi)], 3 if count > 50 else 5),
                "wait-on": ([a.wait_on, "-t", "10000", *(f"tcp:127.0.0.1:{p}" for p in ports)], 5),
                "wait-for-them": ([a.wait_for_them, "-s", "-t", "10000",
                                   *(f"127.0.0.1:{p}" for p in ports)], 20),
            }
            out[str(count)] = {}
            for tool, (argv, runs) in cases.items():
                log(f"fan-out {count}: {tool}")
                out[str(count)][tool] = self.timed(f"{tool} x{count}", argv, runs=runs, warmup=1)
        log("fan-out 1: readygate")
        one = [self.rg, "wait", f"tcp://127.0.0.1:{nginx.fan_ports[0]}"]
        out["1"] = {"readygate": self.timed("readygate x1", one, runs=20, warmup=3)}
        self.results["fanout"] = out

    # --- size ---------------------------------------------------------------------------------

    def sizes(self):
        a = self.args
        node_modules = Path(a.wait_on).resolve().parents[2]
        things = {
            "readygate": [a.readygate],
            "nc -z": [shutil.which("nc")],
            "curl -sf": [shutil.which("curl")],
            "wait-for-it": [shutil.which("wait-for-it"), shutil.which("bash"),
                            shutil.which("timeout")],
            "wait-on": [shutil.which("node"), str(node_modules)],
            "wait-for-them": [a.wait_for_them],
        }
        self.results["size"] = {tool: shipped_bytes(paths) for tool, paths in things.items()}
        self.results["readygate_bytes"] = os.path.getsize(a.readygate)


def cpu_idle(seconds):
    """The share of both cores' time that was idle over the next `seconds` (/proc/stat)."""
    def sample():
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return fields[3] + fields[4], sum(fields)
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return (idle1 - idle0) / max(1, total1 - total0)


def wait_for_quiet(threshold=0.6, patience=3.0):
    """Waits (up to `patience` seconds) until the machine is at least `threshold` idle; returns
    the idle share last seen, so the report can say how busy the machine was."""
    end = time.monotonic() + patience
    idle = cpu_idle(0.2)
    while idle < threshold and time.monotonic() < end:
        time.sleep(0.5)
        idle = cpu_idle(0.2)
    return idle


def summarize(times, user, system):
    return {
        "median": statistics.median(times),
        "mean": statistics.mean(times),
        "stddev": statistics.stdev(times) if len(times) > 1 else 0.0,
        "min": min(times),
        "max": max(times),
        "runs": len(times),
        "user": user,
        "system": system,
    }


def exit_times(procs, timeout):
    """The monotonic time each process exits (pidfds: no polling delay), until `timeout`."""
    selector = selectors.DefaultSelector()
    fds = {}
    for tool, proc in procs.items():
        fd = os.pidfd_open(proc.pid)
        fds[fd] = tool
        selector.register(fd, selectors.EVENT_READ)
    exits = {}
    end = time.monotonic() + timeout
    while len(exits) < len(procs):
        left = end - time.monotonic()
        if left <= 0:
            break
        for key, _ in selector.select(left):
            now = time.monotonic()
            tool = fds[key.fd]
            exits[tool] = now
            selector.unregister(key.fd)
            procs[tool].wait()
    for fd in fds:
        os.close(fd)
    return exits


def stop(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def shipped_bytes(paths):
    """Bytes of the files a tool needs: itself, its interpreter, and their shared libraries."""
    files = set()
    for path in paths:
        p = Path(path).resolve()
        if p.is_dir():
            files.update(f.resolve() for f in p.rglob("*") if f.is_file())
            continue
        files.add(p)
        ldd = subprocess.run(["ldd", str(p)], capture_output=True, text=True)
        for line in ldd.stdout.splitlines():
            match = re.search(r"(/\S+) \(0x", line)
            if match:
                files.add(Path(match.group(1)).resolve())
    return sum(f.stat().st_size for f in files)


# --- report ---------------------------------------------------------------------------------


def fmt_ms(seconds):
    ms = seconds * 1000
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def fmt_mib(n):
    return f"{n / MIB:.1f} MiB"


def fmt_mb(n):
    return f"{n / 1e6:.1f} MB"


def machine():
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            mem = int(line.split()[1]) * 1024
    osname = "Linux"
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("PRETTY_NAME="):
            osname = line.split("=", 1)[1].strip('"')
    return f"{os.cpu_count()} × {model}, {mem / 2**30:.0f} GiB, {osname}, Linux {os.uname().release}"


def versions(args, nginx_version):
    def first(argv):
        try:
            out = subprocess.run(argv, capture_output=True, text=True)
            return (out.stdout or out.stderr).strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"

    def deb(package):
        return first(["dpkg-query", "-W", "-f=${Version}", package])

    wait_on = json.loads(
        (Path(args.wait_on).resolve().parents[1] / "package.json").read_text()
    )["version"]
    return {
        "readygate": first([args.readygate, "--version"]) + f" ({args.flavour} build)",
        "nginx": nginx_version,
        "curl": deb("curl"),
        "netcat-openbsd": deb("netcat-openbsd"),
        "wait-for-it": deb("wait-for-it"),
        "wait-on": wait_on,
        "wait-for-them": first(["cargo", "install", "--list", "--root",
                                str(Path(args.wait_for_them).resolve().parents[1])]).rstrip(":"),
        "hyperfine": first(["hyperfine", "--version"]),
        "node": first(["node", "--version"]),
    }


def git_commit():
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return commit + (" + local changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


def main_table(r):
    """The headline table: one column per tool, one row per figure."""
    rows = []

    def row(label, cells):
        rows.append("| " + label + " | " + " | ".join(cells.get(c, "–") for c in COLUMNS) + " |")

    for kind, label in (("tcp", "one-shot TCP, wall (median)"), ("http", "one-shot HTTP, wall (median)")):
        wall = r["oneshot"][kind]
        base = wall["/bin/true"]["median"]
        row(label, {t: f"{fmt_ms(v['median'])} ({v['median'] / base:.2f}×)" for t, v in wall.items()})
    for kind, label in (("tcp", "peak RSS, TCP one-shot"), ("http", "peak RSS, HTTP one-shot")):
        row(label, {t: fmt_mib(v) for t, v in r["rss"][kind].items()})
    loops = {"tcp": "nc -z", "http": "curl -sf", "file": "sh loop"}
    for kind, label in (("tcp", "detection after bring-up, TCP: median / max"),
                        ("http", "detection, HTTP: median / max"),
                        ("file", "detection, file: median / max")):
        cells = {}
        for tool, v in r["detection"][kind].items():
            text = (f"{fmt_ms(v['median'])} / {fmt_ms(v['max'])}" if "median" in v else "failed")
            if v.get("failures"):
                text += f" ({v['failures']} failed)"
            if tool == loops[kind]:
                text += " (sleep 1 loop)"
            cells["readygate" if tool == "readygate" else
                  ("wait-for-it" if tool == "sh loop" else tool)] = text
        if kind == "file":
            # The shell loop has no column of its own: it stands in wait-for-it's (a script too).
            cells["wait-for-it"] = cells.pop("wait-for-it", "–").replace("(sleep 1 loop)", "(sh loop, sleep 1)")
        row(label, cells)
    cpu = r["cpu"]
    row(f"CPU over {r['cpu_seconds']} s waiting on a closed port (user+sys)",
        {t: fmt_ms(v["cpu"]) + (" (loop)" if t in ("nc -z", "curl -sf") else "") for t, v in cpu.items()})
    for count in (50, 500):
        fan = r["fanout"][str(count)] if str(count) in r["fanout"] else r["fanout"][count]
        row(f"{count} TCP targets already up, wall (median)",
            {t: fmt_ms(v["median"]) + (" (loop)" if t in ("nc -z", "wait-for-it") else "")
             for t, v in fan.items()})
    row("shipped bytes incl. shared libraries", {t: fmt_mb(v) for t, v in r["size"].items()})
    header = "| figure | " + " | ".join(f"`{c}`" if c == "/bin/true" else c for c in COLUMNS) + " |"
    sep = "| --- |" + " --- |" * len(COLUMNS)
    return "\n".join([header, sep, *rows])


def goals_table(r):
    g = GOALS
    wall = r["oneshot"]
    det = r["detection"]
    rg_cpu = r["cpu"]["readygate"]["cpu"]
    fan = r["fanout"]

    def get(d, k):
        return d[str(k)] if str(k) in d else d[k]

    one = get(fan, 1)["readygate"]["median"]
    five = get(fan, 500)["readygate"]["median"]
    checks = [
        ("one-shot TCP probe ÷ `/bin/true`", f"≤ {g['oneshot_vs_true']}×",
         wall["tcp"]["readygate"]["median"] / wall["tcp"]["/bin/true"]["median"], "x",
         lambda v: v <= g["oneshot_vs_true"]),
        ("one-shot HTTP probe ÷ `/bin/true`", f"≤ {g['oneshot_vs_true']}×",
         wall["http"]["readygate"]["median"] / wall["http"]["/bin/true"]["median"], "x",
         lambda v: v <= g["oneshot_vs_true"]),
        ("`curl -sf` ÷ HTTP probe", f"≥ {g['cheaper_than_curl']:.2f}×",
         wall["http"]["curl -sf"]["median"] / wall["http"]["readygate"]["median"], "x",
         lambda v: v >= g["cheaper_than_curl"]),
        ("peak RSS (HTTP one-shot)", f"≤ {g['rss_mib']} MiB",
         r["rss"]["http"]["readygate"] / MIB, "MiB", lambda v: v <= g["rss_mib"]),
        ("detection TCP, median", f"≤ {g['detect_net_ms']:.0f} ms",
         det["tcp"]["readygate"]["median"] * 1000, "ms", lambda v: v <= g["detect_net_ms"]),
        ("detection HTTP, median", f"≤ {g['detect_net_ms']:.0f} ms",
         det["http"]["readygate"]["median"] * 1000, "ms", lambda v: v <= g["detect_net_ms"]),
        ("detection file, median", f"≤ {g['detect_file_ms']:.0f} ms",
         det["file"]["readygate"]["median"] * 1000, "ms", lambda v: v <= g["detect_file_ms"]),
        (f"CPU over {r['cpu_seconds']} s on a closed port", f"≤ {g['cpu_ms']:.0f} ms",
         rg_cpu * 1000, "ms", lambda v: v <= g["cpu_ms"]),
        ("500 targets up, checked at once: wall", f"≤ 50 ms (one alone: {one * 1000:.1f} ms)",
         five * 1000, "ms", lambda v: v <= 50.0),
    ]
    lines = ["| goal (readygate, default settings) | target | measured | met |",
             "| --- | --- | --- | --- |"]
    for label, target, value, unit, ok in checks:
        shown = f"{value:.2f}×" if unit == "x" else f"{value:.1f} {unit}"
        lines.append(f"| {label} | {target} | {shown} | {'yes' if ok(value) else '**no**'} |")
    return "\n".join(lines)


def detail_tables(r):
    lines = ["| measurement | tool | median | mean ± σ | min … max | runs |",
             "| --- | --- | --- | --- | --- | --- |"]
    for kind in ("tcp", "http"):
        for tool, v in r["oneshot"][kind].items():
            lines.append(f"| one-shot {kind.upper()} | {tool} | {fmt_ms(v['median'])} | "
                         f"{fmt_ms(v['mean'])} ± {fmt_ms(v['stddev'])} | "
                         f"{fmt_ms(v['min'])} … {fmt_ms(v['max'])} | {v['runs']} |")
    for count in ("1", "50", "500"):
        fan = r["fanout"].get(count) or r["fanout"].get(int(count))
        for tool, v in fan.items():
            lines.append(f"| {count} TCP targets | {tool} | {fmt_ms(v['median'])} | "
                         f"{fmt_ms(v['mean'])} ± {fmt_ms(v['stddev'])} | "
                         f"{fmt_ms(v['min'])} … {fmt_ms(v['max'])} | {v['runs']} |")
    lines += ["", "| detection | tool | samples (ms, in trial order) |", "| --- | --- | --- |"]
    for kind in ("tcp", "http", "file"):
        for tool, v in r["detection"][kind].items():
            samples = ", ".join(f"{s * 1000:.0f}" if s >= 0.01 else f"{s * 1000:.1f}"
                                for s in v.get("samples", []))
            lines.append(f"| {kind.upper()} | {tool} | {samples} |")
    lines += ["", "| CPU while waiting | user | sys | total |", "| --- | --- | --- | --- |"]
    for tool, v in r["cpu"].items():
        lines.append(f"| {tool} | {fmt_ms(v['user'])} | {fmt_ms(v['sys'])} | {fmt_ms(v['cpu'])} |")
    return "\n".join(lines)


def summary(r):
    """The part in docs/performance.md: date, machine, headline table, goals."""
    return "\n".join([
        f"Latest run: {r['date']} on {r['machine']}; readygate {r['commit']} "
        f"({r['flavour']} build, {r['readygate_bytes'] / 1e6:.2f} MB). Medians; "
        "ratios in brackets are to `/bin/true` of the same run.",
        "",
        main_table(r),
        "",
        goals_table(r),
    ])


def report(r, args):
    v = r["versions"]
    return f"""# readygate benchmark

Written by `bench/run.sh` (see "Benchmark" in docs/performance.md); do not edit by hand.

- date: {r['date']}
- machine: {r['machine']}; load average before / after: {r['load_before']} / {r['load_after']};
  one-shot rounds started when the machine was at least 60% idle, or after 3 s (median idle
  share seen: {r.get('oneshot_idle', 0):.0%})
- readygate: {v['readygate']}, commit {r['commit']}, {r['readygate_bytes']:,} bytes
- peers: nginx {v['nginx']}, curl {v['curl']}, netcat-openbsd {v['netcat-openbsd']}, wait-for-it
  {v['wait-for-it']} (Debian), wait-on {v['wait-on']} (npm, node {v['node']}),
  {v['wait-for-them']} (crates.io); {v['hyperfine']}
- settings: {args.runs} hyperfine runs per one-shot command after a warm-up, {args.trials}
  detection trials per kind, {r['cpu_seconds']} s CPU wait

## Results

{summary(r)}

## Method

- **One-shot**: ten rounds, each one `hyperfine -N` run (no shell; 3 warm-up runs per command)
  over `/bin/true`, readygate and the quick peers, one after the other, {-(-args.runs // 10)}
  timed runs each; a round starts once the machine is at least 60% idle (or after 3 s), so load
  from elsewhere falls on every tool alike. wait-on (node, a third of a second a run) runs apart,
  {args.runs} runs after 2 warm-ups. The target is a private nginx on 127.0.0.1 (its own temp
  config, a free port, `return 200`). readygate runs `probe`, from a copy of the static binary
  installed as an image layer or a package would put it (written front to back: exec'ing the
  linker's own output file takes ~8 more page faults); wait-for-it, wait-on and
  wait-for-them run with a 1 s timeout against the port that is up. Ratios are to `/bin/true`
  measured in the same rounds: the cost of starting any process here.
- **Peak RSS**: GNU time `%M`, median of 5 runs of the same one-shot command.
- **Detection**: per kind (TCP, HTTP, file), all of that kind's waiters start together at their
  default settings; after a random 1–3 s the target comes up (a listener bound by a server
  process started beforehand, which serves every connection at once on one asyncio loop, so no
  waiter's connection queues behind another's; for HTTP it answers `200`; for a file, the file
  is created). Latency runs from the moment the
  listener or file exists to each waiter's exit, seen through a pidfd. {args.trials} trials; median
  and max. `nc -z`, `curl -sf` and the file `sh` loop are `until …; do sleep 1; done` loops.
- **CPU**: every tool waits {r['cpu_seconds']} s on a port nothing listens on, all at once (they
  are asleep nearly all the time; nothing else is measured meanwhile); user+sys from `wait4`,
  with reaped children (so a shell loop counts its `nc`/`curl`/`sleep` processes).
- **Fan-out**: nginx listens on 500 more ports; each tool waits for the first 50 or all 500 at
  once (`readygate wait` with its defaults). wait-for-it and `nc -z` take one target per call,
  so they run in a loop.
- **Size**: the binary plus its interpreter and shared libraries (`ldd`); for wait-on, node and
  its `node_modules`.

## Details

{detail_tables(r)}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readygate", required=True)
    parser.add_argument("--flavour", default="release")
    parser.add_argument("--wait-on", required=True)
    parser.add_argument("--wait-for-them", required=True)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--summary", type=Path, help="Markdown file whose bench markers get the table")
    parser.add_argument("--runs", type=int, default=30, help="hyperfine runs per one-shot command")
    parser.add_argument("--trials", type=int, default=25, help="detection trials per kind")
    parser.add_argument("--cpu-seconds", type=int, default=20)
    parser.add_argument("--only", help="comma-separated parts: oneshot,detection,cpu,fanout")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args()
    for tool in (args.readygate, args.wait_on, args.wait_for_them):
        if not os.access(tool, os.X_OK):
            raise SystemExit(f"bench: {tool} is missing (bench/run.sh installs it)")
    for tool in ("nginx", "hyperfine", "nc", "curl", "wait-for-it", "node", "ldd", "timeout"):
        if not shutil.which(tool):
            raise SystemExit(f"bench: {tool} is not installed (bench/run.sh installs it)")
    if not os.access("/usr/bin/time", os.X_OK):
        raise SystemExit("bench: /usr/bin/time is missing (Debian package `time`)")
    parts = set((args.only or "oneshot,detection,cpu,fanout").split(","))

    with tempfile.TemporaryDirectory(prefix="readygate-bench-") as tmp:
        work = Path(tmp)
        bench = Bench(args, work)
        r = bench.results
        r["date"] = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        r["machine"] = machine()
        r["commit"] = git_commit()
        r["flavour"] = args.flavour
        r["cpu_seconds"] = args.cpu_seconds
        r["load_before"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        started = time.monotonic()
        nginx = Nginx(work, fan=500)
        try:
            r["versions"] = versions(args, nginx.version())
            if "oneshot" in parts:
                bench.oneshot(nginx)
            if "detection" in parts:
                bench.detection()
            if "cpu" in parts:
                bench.idle_cpu()
            if "fanout" in parts:
                bench.fanout(nginx)
            bench.sizes()
        finally:
            nginx.stop()
        r["load_after"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        log(f"done in {time.monotonic() - started:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(r, indent=1, default=str))
    if parts == {"oneshot", "detection", "cpu", "fanout"}:
        text = report(r, args)
        if args.report:
            args.report.write_text(sections.with_the_rest(args.report, text))
        if args.summary:
            sections.replace(args.summary, "bench", summary(r), required=True)
        print(text)
    else:
        print(json.dumps(r, indent=1, default=str))


if __name__ == "__main__":
    main()
