#!/usr/bin/env python3
"""k8s:// watch against poll (bench/k8s_watch.sh): the requests each waiting pod sends to the
API server over a span, how soon each sees the Job complete, and the memory a watch takes.

A stand-in API server (HTTPS on 127.0.0.1, a CA made here with openssl) serves one Job,
`bench/migrate`, and counts every request by the token that sent it: each waiting pod has its
own token. It answers watches as kube-apiserver does: a chunked stream of JSON lines, one per
change after the resourceVersion asked for, ended at the request's `timeoutSeconds`. "Poll"
pods have their watch refused (403, a Role without `watch`), so they fall back to GETs on the
default remote schedule. After the span the Job completes, and each pod's exit is timed from
that change. A last run sends one endless watch event and records readygate's peak memory.
A benchmark, not a test: nothing here fails on a slow number.
"""

import argparse
import json
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import sections

NS, JOB = "bench", "migrate"
JOB_PATH = f"/apis/batch/v1/namespaces/{NS}/jobs/{JOB}"
JOBS_PATH = f"/apis/batch/v1/namespaces/{NS}/jobs"
# The bound the memory section of bench/report.md holds any single answer to.
ANSWER_BOUND_MIB = 32


def log(message):
    print(f"k8s-watch: {message}", file=sys.stderr, flush=True)


class Cluster:
    """The Job's state, its changes, and the requests seen, shared by the handler threads."""

    def __init__(self):
        self.changed = threading.Condition()
        self.version = 4711
        self.complete = False
        self.counts = Counter()  # (token, "get" | "watch") -> requests
        self.endless = False

    def job(self):
        status = {"active": 1, "succeeded": 0, "failed": 0}
        if self.complete:
            status = {"succeeded": 1, "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"},
                {"type": "Complete", "status": "True", "reason": "CompletionsReached"}]}
        return {"kind": "Job", "apiVersion": "batch/v1",
                "metadata": {"name": JOB, "namespace": NS, "resourceVersion": str(self.version),
                             "generation": 1},
                "spec": {"suspend": False}, "status": status}

    def finish(self):
        with self.changed:
            self.version += 1
            self.complete = True
            self.changed.notify_all()


def handler(cluster):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send_json(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def chunk(self, data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def do_GET(self):
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            watch = query.get("watch") == ["1"]
            with cluster.changed:
                cluster.counts[(token, "watch" if watch else "get")] += 1
            if not watch:
                if url.path != JOB_PATH:
                    return self.send_json(404, {"kind": "Status", "code": 404})
                with cluster.changed:
                    return self.send_json(200, cluster.job())
            if url.path != JOBS_PATH or query.get("fieldSelector") != [f"metadata.name={JOB}"]:
                return self.send_json(400, {"kind": "Status", "code": 400})
            if token.startswith("poll-"):
                message = f'jobs.batch "{JOB}" is forbidden: cannot watch resource "jobs"'
                return self.send_json(403, {"kind": "Status", "code": 403, "reason": "Forbidden",
                                            "message": message})
            seconds = int(query.get("timeoutSeconds", ["1800"])[0])
            since = int(query.get("resourceVersion", ["0"])[0])
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            try:
                if cluster.endless:
                    self.chunk(b'{"type":"MODIFIED","object":{"x":"')
                    block = b"a" * (64 << 10)
                    while True:
                        self.chunk(block)
                end = time.monotonic() + seconds
                with cluster.changed:
                    while cluster.version <= since and time.monotonic() < end:
                        cluster.changed.wait(end - time.monotonic())
                    event = cluster.version > since and cluster.job()
                if event:
                    self.chunk(json.dumps({"type": "MODIFIED", "object": event}).encode() + b"\n")
                    # The stream stays open, as a real one does, until the client goes.
                    time.sleep(max(0.0, end - time.monotonic()))
                self.chunk(b"")
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
                self.close_connection = True

    return Handler


def make_certs(folder):
    """A CA and a serving certificate for 127.0.0.1, with openssl."""
    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    ca, key = folder / "ca.crt", folder / "ca.key"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    run("req", "-x509", *ec, "-nodes", "-days", "1", "-subj", "/CN=bench-ca",
        "-keyout", str(key), "-out", str(ca))
    (folder / "ext").write_text("subjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth\n")
    run("req", *ec, "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", str(folder / "server.key"), "-out", str(folder / "server.csr"))
    run("x509", "-req", "-in", str(folder / "server.csr"), "-CA", str(ca), "-CAkey", str(key),
        "-CAcreateserial", "-days", "1", "-extfile", str(folder / "ext"),
        "-out", str(folder / "server.crt"))


class TlsServer(ThreadingHTTPServer):
    """Each connection's TLS handshake in its own thread, not in the accepting one: forty pods
    starting at once must not queue behind each other's handshakes."""

    daemon_threads = True

    def finish_request(self, request, client_address):
        try:
            request = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        super().finish_request(request, client_address)


def serve(cluster, folder):
    server = TlsServer(("127.0.0.1", 0), handler(cluster))
    server.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.tls.load_cert_chain(folder / "server.crt", folder / "server.key")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Pod:
    """One waiting readygate with its own service account folder (and token)."""

    def __init__(self, binary, folder, port, token, args):
        self.token = token
        account = folder / token
        account.mkdir()
        shutil.copy(folder / "ca.crt", account / "ca.crt")
        (account / "token").write_text(token + "\n")
        (account / "namespace").write_text(NS)
        env = {**os.environ, "KUBERNETES_SERVICE_HOST": "127.0.0.1",
               "KUBERNETES_SERVICE_PORT": str(port), "READYGATE_K8S_SERVICEACCOUNT_DIR": str(account)}
        env.pop("POD_NAMESPACE", None)
        self.stderr = account / "stderr"
        self.process = subprocess.Popen([str(binary), *args], env=env, stdout=subprocess.DEVNULL,
                                        stderr=self.stderr.open("wb"))
        self.ended = None
        threading.Thread(target=self.reap, daemon=True).start()

    def reap(self):
        self.process.wait()
        self.ended = time.monotonic()

    def peak_kib(self):
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", type=Path)
    parser.add_argument("--span", type=float, default=300, help="seconds the pods wait")
    parser.add_argument("--pods", type=int, default=20, help="waiting pods of each kind")
    parser.add_argument("--report", action="store_true", help="write bench/report.md")
    options = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="readygate-k8s-watch."))
    try:
        make_certs(folder)
        cluster = Cluster()
        server = serve(cluster, folder)
        port = server.server_address[1]
        # -v: a watch that breaks says why in a debug line, which the report counts.
        args = ["wait", "-v", "--timeout", f"{int(options.span) + 120}s", f"k8s://job/{JOB}"]
        pods = [Pod(options.binary, folder, port, f"{how}-{i}", args)
                for how in ("watch", "poll") for i in range(options.pods)]
        log(f"{len(pods)} pods waiting for {options.span:.0f} s")
        time.sleep(options.span)
        with cluster.changed:
            counts = dict(cluster.counts)
        peaks = {pod.token: pod.peak_kib() for pod in pods}
        changed = time.monotonic()
        cluster.finish()
        for pod in pods:
            pod.process.wait(timeout=60)
        results = {}
        for how in ("watch", "poll"):
            mine = [pod for pod in pods if pod.token.startswith(how)]
            requests = [counts.get((p.token, "get"), 0) + counts.get((p.token, "watch"), 0) for p in mine]
            watches = [counts.get((p.token, "watch"), 0) for p in mine]
            latency = [(p.ended - changed) * 1000 for p in mine]
            codes = Counter(p.process.returncode for p in mine)
            warned = sum("grant watch" in p.stderr.read_text() for p in mine)
            broke = Counter(line.split("the watch broke: ", 1)[1].strip() for p in mine
                            for line in p.stderr.read_text().splitlines() if "the watch broke: " in line)
            results[how] = {
                "requests": requests, "watches": watches, "latency": latency, "codes": codes,
                "warned": warned, "peak": max(peaks[p.token] for p in mine), "broke": broke,
                "per_minute": statistics.mean(requests) / (options.span / 60),
            }
            log(f"{how}: requests per pod {sorted(requests)}, exit codes {dict(codes)}, "
                f"detection median {statistics.median(latency):.0f} ms max {max(latency):.0f} ms, "
                f"peak {results[how]['peak']} KiB, warned {warned}, broken watches {dict(broke)}")

        # One pod against an endless watch event: held to the answer cap.
        cluster.endless, cluster.complete, cluster.version = True, False, 4711
        endless = Pod(options.binary, folder, port, "endless-0", ["wait", "--timeout", "5s", f"k8s://job/{JOB}"])
        peak_endless = 0
        while endless.process.poll() is None:
            try:
                peak_endless = max(peak_endless, endless.peak_kib())
            except (FileNotFoundError, ProcessLookupError):
                break
            time.sleep(0.02)
        # The last line, without its timestamp.
        endless_reason = [line.split(" ", 1)[-1] for line in endless.stderr.read_text().strip().splitlines()[-1:]]
        log(f"endless event: exit {endless.process.returncode}, peak {peak_endless} KiB, {endless_reason}")
        server.shutdown()
        if options.report:
            write_report(options, results, peak_endless, endless_reason)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def broken(results):
    said = [f"{how}: {n} × `{reason}`" for how, r in results.items() for reason, n in r["broke"].items()]
    return "; ".join(said) or "none"


def write_report(options, results, peak_endless, endless_reason):
    root = Path(__file__).resolve().parent.parent
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=root).stdout.strip()
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    minutes = options.span / 60
    rows = []
    for how, r in results.items():
        median = statistics.median(r["latency"])
        rows.append(f"| {how} | {statistics.mean(r['requests']):.1f} ({min(r['requests'])}–{max(r['requests'])}) "
                    f"| {r['per_minute']:.2f} | {median:.0f} ms | {max(r['latency']):.0f} ms "
                    f"| {r['peak'] / 1024:.1f} MiB |")
    watch = results["watch"]
    median = statistics.median(watch["latency"])
    peak = max(watch["peak"], peak_endless) / 1024
    goal = lambda ok: "yes" if ok else "**no**"
    text = f"""## k8s:// watch against poll

Written by `bench/k8s_watch.sh`; do not edit by hand. {when}, readygate {commit} (release
build, the static binary), against the stand-in API server of bench/k8s_watch.py: {options.pods}
pods watching and {options.pods} polling (their watch refused with 403) wait {minutes:.0f}
minutes for one Job, all at once on the loaded 2-core machine; then the Job completes.

| pods | requests per pod over {minutes:.0f} min (min–max) | per minute | detection, median | detection, worst | peak RSS while waiting |
| --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

Watches that broke (each then costs a GET and a new watch): {broken(results)}.

An endless watch event (one line of `a`s, never ended): peak RSS {peak_endless / 1024:.1f} MiB,
then `{"".join(endless_reason)[:160]}`.

| goal | target | measured | met |
| --- | --- | --- | --- |
| requests per waiting pod, healthy API server | ≤ 1 per minute | {watch['per_minute']:.2f} per minute | {goal(watch['per_minute'] <= 1)} |
| detection after the Job completes | ≤ 200 ms median | {median:.0f} ms | {goal(median <= 200)} |
| memory of a watch | ≤ the single-answer bound ({ANSWER_BOUND_MIB} MiB) | {peak:.1f} MiB | {goal(peak <= ANSWER_BOUND_MIB)} |"""
    sections.replace(root / "bench" / "report.md", "k8s-watch", text)
    print(text)


if __name__ == "__main__":
    main()
