#!/usr/bin/env python3
"""An exec probe's cost through a real container runtime: `runc exec` of `readygate probe
tcp://` against `runc exec` of a static `/true` in the same running container, in interleaved
rounds (the order alternating), medians compared. Writes its section of bench/report.md.

Run by bench/containers.sh, which installs runc and busybox-static and builds the static
binary. The container is a runc bundle whose read-only root holds only readygate, busybox (as
/true and /sleep) and nothing else, running as uid 65532; it shares the host's network
namespace so that the probe reaches a listener on the host's 127.0.0.1, and nothing else is
contacted.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import sections



def listener():
    """A TCP listener on 127.0.0.1 that accepts and closes every connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(512)

    def serve():
        while True:
            connection, _ = server.accept()
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()[1]


def bundle(directory, readygate, busybox):
    """A runc bundle: the root, read-only, holds readygate and busybox; uid 65532."""
    root = directory / "rootfs"
    root.mkdir(parents=True)
    shutil.copy(readygate, root / "readygate")
    shutil.copy(busybox, root / "busybox")
    for applet in ("true", "sleep"):
        (root / applet).symlink_to("busybox")
    subprocess.run(["runc", "spec", "--bundle", str(directory)], check=True)
    config = json.loads((directory / "config.json").read_text())
    config["process"]["terminal"] = False
    config["process"]["args"] = ["/sleep", "3600"]
    config["process"]["user"] = {"uid": 65532, "gid": 65532}
    config["root"]["readonly"] = True
    # The host's network namespace: the probe's target is the host's 127.0.0.1.
    namespaces = config["linux"]["namespaces"]
    config["linux"]["namespaces"] = [ns for ns in namespaces if ns["type"] != "network"]
    (directory / "config.json").write_text(json.dumps(config, indent=1))


def timed(command):
    started = time.perf_counter()
    finished = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    took = time.perf_counter() - started
    if finished.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {finished.returncode}: {finished.stdout!r}")
    return took


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(args):
    port = listener()
    work = Path(tempfile.mkdtemp(prefix="readygate-runc-bench."))
    state = work / "state"
    name = f"readygate-bench-{os.getpid()}"
    runc = ["runc", "--root", str(state)]
    bundle(work / "bundle", args.readygate, args.busybox)
    subprocess.run(
        runc + ["run", "--detach", "--bundle", str(work / "bundle"), name],
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    commands = {
        "/true": runc + ["exec", name, "/true"],
        "readygate probe tcp://": runc
        + ["exec", name, "/readygate", "probe", f"tcp://127.0.0.1:{port}"],
    }
    times = {label: [] for label in commands}
    try:
        for label, command in commands.items():
            for _ in range(args.warmup):
                timed(command)
        for round_ in range(args.rounds):
            order = list(commands.items())
            if round_ % 2:
                order.reverse()
            for label, command in order:
                times[label].append(timed(command))
    finally:
        subprocess.run(runc + ["delete", "--force", name], check=False)
        shutil.rmtree(work, ignore_errors=True)
    return times


def versions():
    runc = subprocess.run(["runc", "--version"], capture_output=True, text=True).stdout
    kernel = os.uname().release
    return runc.splitlines()[0], kernel


def section(times, args, started):
    true, probe = times["/true"], times["readygate probe tcp://"]
    ratio = statistics.median(probe) / statistics.median(true)
    runc_version, kernel = versions()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    ms = lambda s: f"{s * 1000:.1f} ms"
    rows = "\n".join(
        f"| `runc exec … {label}` | {ms(statistics.median(v))} | {ms(percentile(v, 0.1))} | "
        f"{ms(percentile(v, 0.9))} | {len(v)} |"
        for label, v in times.items()
    )
    met = "yes" if ratio <= 1.10 else "no"
    return f"""## Through a container runtime

Written by `bench/containers.sh`; do not edit by hand. An exec probe costs what the runtime's
exec costs: the kubelet's exec probe goes through the CRI's `ExecSync` to the runtime, which
starts a process inside the container. Here `runc exec` runs `readygate probe
tcp://127.0.0.1:PORT` (a listener on the host's loopback) and a static `/true` (busybox) in the
same running container, {args.rounds} interleaved rounds (the order alternating, after
{args.warmup} warm-up runs each); the container's read-only root holds only readygate and
busybox, and it runs as uid 65532.

- date: {started}; {runc_version}, Linux {kernel}; load average after: {load}
- readygate: {args.readygate_version}, {Path(args.readygate).stat().st_size:,} bytes (static-pie)

| exec | median | p10 | p90 | runs |
| --- | --- | --- | --- | --- |
{rows}

| goal | target | measured | met |
| --- | --- | --- | --- |
| `runc exec readygate probe` ÷ `runc exec /true` (medians) | ≤ 1.10× | {ratio:.2f}× | {met} |

The one-shot rows of the table above are the same probe on the host, without the runtime."""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readygate", required=True)
    parser.add_argument("--busybox", default="/bin/busybox")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    args.readygate_version = subprocess.run(
        [args.readygate, "--version"], capture_output=True, text=True
    ).stdout.strip()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    times = measure(args)
    text = section(times, args, started)
    if args.report:
        sections.replace(args.report, "containers", text)
    print(text)


if __name__ == "__main__":
    main()
