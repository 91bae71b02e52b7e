#!/usr/bin/env python3
"""Event-stream subscribers for Chime's fan-out benchmark (started by http_bench.py).

One process holds COUNT server-sent-event connections to GET /v1/apps/{app}/events on one epoll
loop over raw non-blocking sockets (no asyncio, no third-party packages: the least work per byte).

    fanout_client.py --host 127.0.0.1 --port P --apps APPS.json [--first K] --count 250 --out FILE

APPS.json is a list of [bundle identifier, app token]; connection number K + i (i = 0..COUNT-1)
subscribes to the app at index (K + i) mod the list's length, so processes started with
consecutive ranges spread their connections evenly over the apps.

Protocol with the parent, over stdin/stdout:
  1. prints "ready N" once N connections have their 200 and the stream's first bytes ("retry:"),
     or "failed MESSAGE" and exits 1;
  2. reads "expect E" from stdin: the number of events the parent sent; it then waits until every
     connection has E events, or until --drain seconds pass with nothing new, and
  3. writes FILE (a JSON summary) and FILE.lat (latencies, float64 seconds, one per event and
     connection) and prints "done".

Latency = the time this process read the bytes completing an event (CLOCK_MONOTONIC, the same clock
in every process on the machine) − the "sentAt" the sender put in the request's userInfo
(CLOCK_MONOTONIC just before it wrote the POST). Reads are timestamped as they are made and parsed
only when nothing has arrived for 20 ms (between the sender's rounds), so parsing neither delays
another connection's timestamp nor the next reads; a process's CPU during a round is its reads.
"""
import argparse
import array
import errno
import json
import os
import re
import resource
import select
import socket
import sys
import time

SENT_AT = re.compile(rb'"sentAt":(\d+)')
INDEX = re.compile(rb'"identifier":"fan-[^"]*-(\d+)"')


class Conn:
    __slots__ = ("sock", "raw", "buf", "ready", "chunked", "chunk_left", "skip", "received", "count", "duplicates",
                 "closed", "status")

    def __init__(self, sock, capacity):
        self.sock = sock
        self.raw = b""  # bytes as read, before removing the chunked framing
        self.buf = b""  # the decoded body not yet parsed into events
        self.chunked = False
        self.chunk_left = 0  # body bytes left in the current chunk
        self.skip = 0  # framing bytes (the CRLF after a chunk) still to drop
        self.ready = False
        self.received = bytearray(capacity)  # one byte per event index: seen or not
        self.count = 0
        self.duplicates = 0
        self.closed = False
        self.status = None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--apps", required=True, help="a JSON list of [bundle identifier, token]")
    parser.add_argument("--first", type=int, default=0, help="the number of this process's first connection")
    parser.add_argument("--count", type=int, default=250)
    parser.add_argument("--capacity", type=int, default=100_000, help="largest event index expected + 1")
    parser.add_argument("--drain", type=float, default=5.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < args.count + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.count + 256), hard))

    apps = json.load(open(args.apps))
    requests = [(f"GET /v1/apps/{app}/events HTTP/1.1\r\nHost: {args.host}:{args.port}\r\n"
                 f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n").encode() for app, token in apps]
    epoll = select.epoll()
    conns = {}
    for number in range(args.first, args.first + args.count):
        sock = socket.create_connection((args.host, args.port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(requests[number % len(requests)])
        sock.setblocking(False)
        conns[sock.fileno()] = Conn(sock, args.capacity)
        epoll.register(sock.fileno(), select.EPOLLIN)

    latencies = array.array("d")
    ready = 0
    expect = None
    stdin_fd = sys.stdin.fileno()
    epoll.register(stdin_fd, select.EPOLLIN)
    stdin_buf = b""
    last_progress = time.monotonic()
    start = time.monotonic()
    cpu_at_ready = None

    def fail(message):
        print("failed " + message, flush=True)
        sys.exit(1)

    # Reads waiting to be parsed: while events arrive, this process only reads and timestamps; it
    # parses in the pauses (nothing new for 20 ms), so its own parsing does not delay its reads.
    backlog = []
    while True:
        events = epoll.poll(0.02 if backlog else 0.5)
        read_sockets = False
        for fd, _ in events:
            if fd == stdin_fd:
                chunk = os.read(stdin_fd, 4096)
                stdin_buf += chunk
                if not chunk and expect is None:
                    expect = 0  # the parent went away: finish now
                while b"\n" in stdin_buf:
                    line, stdin_buf = stdin_buf.split(b"\n", 1)
                    if line.startswith(b"expect "):
                        expect = int(line.split()[1])
                        last_progress = time.monotonic()
                if not chunk:
                    epoll.unregister(stdin_fd)
                continue
            conn = conns[fd]
            try:
                data = conn.sock.recv(65536)
            except OSError as error:
                if error.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                    continue
                data = b""
            backlog.append((conn, time.monotonic_ns(), data))
            read_sockets = True

        if ready < args.count or not read_sockets or len(backlog) > 200_000:
            batch, backlog = backlog, []
        else:
            batch = []
        for conn, now, data in batch:
            if not data:
                conn.closed = True
                epoll.unregister(conn.sock.fileno())
                continue
            if not conn.ready:
                raw = conn.raw + data
                head_end = raw.find(b"\r\n\r\n")
                if head_end < 0:
                    conn.raw = raw
                    continue
                head = raw[:head_end].lower()
                status_line = raw[:raw.find(b"\r\n")]
                conn.status = int(status_line.split()[1])
                if conn.status != 200:
                    fail(f"GET events answered {status_line.decode(errors='replace')}")
                conn.chunked = b"transfer-encoding: chunked" in head
                conn.raw = b""
                data = raw[head_end + 4:]
                conn.ready = True
                ready += 1
                if ready == args.count:
                    cpu_at_ready = cpu_seconds()
                    print(f"ready {ready}", flush=True)
            buf = conn.buf + (dechunk(conn, data) if conn.chunked else data)
            while True:
                end = buf.find(b"\n\n")
                if end < 0:
                    break
                event, buf = buf[:end], buf[end + 2:]
                sent = SENT_AT.search(event)
                index = INDEX.search(event)
                if sent is None or index is None:
                    continue  # "retry:", heartbeat comments, other events
                i = int(index.group(1))
                if i >= len(conn.received):
                    continue
                if conn.received[i]:
                    conn.duplicates += 1
                    continue
                conn.received[i] = 1
                conn.count += 1
                latencies.append((now - int(sent.group(1))) / 1e9)
                last_progress = time.monotonic()
            conn.buf = buf

        if ready < args.count and time.monotonic() - start > 60:
            fail(f"only {ready} of {args.count} streams opened in 60 s")
        if backlog:
            continue  # still reading a round: the checks below walk every connection
        if all(c.closed for c in conns.values()):
            if expect is None:
                fail("the server closed every stream")
            break
        if expect is not None:
            complete = sum(1 for c in conns.values() if c.count >= expect)
            if complete == len(conns) or time.monotonic() - last_progress > args.drain:
                break

    missed = sum(max(0, (expect or 0) - c.count) for c in conns.values())
    summary = {
        "connections": len(conns),
        "ready": ready,
        "expected": expect,
        "events": len(latencies),
        "missed": missed,
        "duplicates": sum(c.duplicates for c in conns.values()),
        "closedEarly": sum(1 for c in conns.values() if c.closed),
        "cpuSeconds": cpu_seconds(),
        "cpuSecondsAfterReady": cpu_seconds() - (cpu_at_ready or 0),
    }
    latencies.tofile(open(args.out + ".lat", "wb"))
    with open(args.out, "w") as f:
        json.dump(summary, f)
    for conn in conns.values():
        conn.sock.close()
    print("done", flush=True)


def dechunk(conn, data):
    """The body bytes in `data` (Transfer-Encoding: chunked); keeps partial framing in `conn`."""
    raw = conn.raw + data
    out = []
    pos = 0
    while pos < len(raw):
        if conn.skip:
            take = min(conn.skip, len(raw) - pos)
            conn.skip -= take
            pos += take
        elif conn.chunk_left:
            take = min(conn.chunk_left, len(raw) - pos)
            out.append(raw[pos:pos + take])
            conn.chunk_left -= take
            pos += take
            if conn.chunk_left == 0:
                conn.skip = 2  # the CRLF closing the chunk
        else:
            line_end = raw.find(b"\r\n", pos)
            if line_end < 0:
                break  # a size line cut in two: wait for the rest
            size = int(raw[pos:line_end].split(b";")[0], 16)
            pos = line_end + 2
            if size == 0:
                conn.closed = True  # the last chunk: the server ended the stream
                pos = len(raw)
                break
            conn.chunk_left = size
    conn.raw = raw[pos:]
    return b"".join(out)


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
