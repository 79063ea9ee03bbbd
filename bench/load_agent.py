#!/usr/bin/env python3
"""What a waiter's cluster sees, from inside the waiter's network namespace (bench/load.py).

Run with `ip netns exec NS`: serves DNS on 192.0.2.1:53 as CoreDNS serves a cluster (TTL 5 s:
A for the names given, NODATA for other types of them, NXDOMAIN for every other name, the
negative answers with an SOA whose minimum is 5 s), logs every query, samples the namespace's
TCP counters (ActiveOpens: connection attempts) every 100 ms, and can bring the dependency up
when told (a line on stdin) or serve `503` with `Retry-After`. One JSON line per event on stdout, each with
CLOCK_MONOTONIC time (the same clock in every process); "ready" once everything is bound.
"""

import argparse
import json
import socket
import struct
import sys
import threading
import time

TTL = 5
ADDRESS = "192.0.2.1"
lock = threading.Lock()


def emit(event, **fields):
    with lock:
        print(json.dumps({"t": time.monotonic(), "event": event, **fields}), flush=True)


def parse(query):
    """The question's name, type and where it ends; None if malformed."""
    at, labels = 12, []
    while True:
        if at >= len(query):
            return None
        length = query[at]
        at += 1
        if length == 0:
            break
        labels.append(query[at:at + length].decode("ascii", "replace").lower())
        at += length
    if at + 4 > len(query):
        return None
    (qtype,) = struct.unpack("!H", query[at:at + 2])
    return ".".join(labels), qtype, at + 4


def answer(query, name, qtype, end, records):
    known = name in records
    answers = [records[name]] if known and qtype == 1 else []
    rcode = 0 if known else 3
    header = query[:2] + struct.pack("!HHHHH", 0x8180 | rcode, 1, len(answers), 0 if answers else 1, 0)
    reply = header + query[12:end]
    for ip in answers:
        reply += b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, TTL, 4) + socket.inet_aton(ip)
    if not answers:
        # SOA of the cluster zone: the root names, then serial, refresh, retry, expire, minimum.
        rdata = b"\x00\x00" + struct.pack("!IIIII", 1, 7200, 1800, 86400, TTL)
        reply += b"\x00" + struct.pack("!HHIH", 6, 1, TTL, len(rdata)) + rdata
    return reply


def serve_dns(sock, records):
    while True:
        data, peer = sock.recvfrom(4096)
        parsed = parse(data)
        if parsed is None:
            continue
        name, qtype, end = parsed
        emit("dns", name=name, qtype=qtype, port=peer[1])
        sock.sendto(answer(data, name, qtype, end, records), peer)


def sample_opens():
    while True:
        with open("/proc/net/snmp") as f:
            lines = [line.split() for line in f if line.startswith("Tcp:")]
        values = dict(zip(lines[0][1:], lines[1][1:]))
        emit("opens", count=int(values["ActiveOpens"]))
        time.sleep(0.1)


def come_up(host, port, delay):
    time.sleep(delay)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(64)
    emit("up", port=port)
    while True:
        conn, _ = listener.accept()
        conn.close()


def serve_503(listener, retry_after):
    body = b"busy\n"
    response = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: " + retry_after.encode()
                + b"\r\nContent-Length: " + str(len(body)).encode()
                + b"\r\nConnection: close\r\n\r\n" + body)
    while True:
        conn, _ = listener.accept()
        conn.settimeout(2)
        try:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                request += chunk
            emit("http")
            conn.sendall(response)
        except OSError:
            pass
        conn.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", action="append", default=[], help="NAME=IP")
    parser.add_argument("--busy-port", type=int, help="serve 503 with Retry-After here")
    parser.add_argument("--retry-after", default="3")
    args = parser.parse_args()
    records = dict(r.split("=", 1) for r in args.record)
    dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dns.bind((ADDRESS, 53))
    threads = [threading.Thread(target=serve_dns, args=(dns, records)),
               threading.Thread(target=sample_opens)]
    if args.busy_port:
        busy = socket.socket()
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        busy.bind((ADDRESS, args.busy_port))
        busy.listen(64)
        threads.append(threading.Thread(target=serve_503, args=(busy, args.retry_after)))
    for thread in threads:
        thread.daemon = True
        thread.start()
    time.sleep(0.2)
    emit("ready")
    # Commands until the driver closes stdin: "up HOST PORT DELAY" listens there DELAY s later.
    for line in sys.stdin:
        words = line.split()
        if words[:1] == ["up"]:
            host, port, delay = words[1], int(words[2]), float(words[3])
            threading.Thread(target=come_up, args=(host, port, delay), daemon=True).start()


if __name__ == "__main__":
    main()
