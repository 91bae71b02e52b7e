#!/usr/bin/env python3
"""A horde of hostile connections to a server on loopback, in a process of its own (so the probes
of run.py measure the server, not this loop): slowloris connections that send a request head one
byte every --interval seconds and never finish it, and silent connections that send nothing.
A connection the server drops is opened again after --reconnect seconds, so the horde keeps its
size for the whole run, as an attacker would.

    horde.py --port P [--slow 1500] [--silent 1300] [--seconds 40] [--slow-from 127.0.0.2] [--silent-from 127.0.0.3]

Prints "ready" once every connection has been tried, then one JSON line of counts at the end.
Bounded: it stops after --seconds, and after --max-connects connection attempts in all.
"""
import argparse
import errno
import json
import resource
import selectors
import socket
import sys
import time

HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100000


class Conn:
    __slots__ = ("sock", "slow", "source", "sent", "next_send", "connected")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--slow", type=int, default=1500)
    parser.add_argument("--silent", type=int, default=1300)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--interval", type=float, default=5, help="seconds between a slow connection's bytes")
    parser.add_argument("--reconnect", type=float, default=1, help="seconds before a dropped connection is opened again")
    parser.add_argument("--slow-from", default="127.0.0.2")
    parser.add_argument("--silent-from", default="127.0.0.3")
    parser.add_argument("--max-connects", type=int, default=200_000)
    options = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    selector = selectors.DefaultSelector()
    started = time.monotonic()
    deadline = started + options.seconds
    pending = []  # (when, slow) of connections to open
    for index in range(options.slow + options.silent):
        # Spread the first connections over the first second.
        pending.append((started + index / max(1, options.slow + options.silent), index < options.slow))
    stats = {"connects": 0, "refused": 0, "dropped": 0, "maxOpen": 0, "bytesSent": 0}
    open_conns = set()
    announced = False

    def open_one(slow):
        conn = Conn()
        conn.slow = slow
        conn.source = options.slow_from if slow else options.silent_from
        conn.sent = 0
        conn.connected = False
        conn.next_send = time.monotonic() + options.interval
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.bind((conn.source, 0))
        except OSError:
            sock.close()
            stats["refused"] += 1
            return
        conn.sock = sock
        stats["connects"] += 1
        code = sock.connect_ex(("127.0.0.1", options.port))
        if code not in (0, errno.EINPROGRESS):
            sock.close()
            stats["refused"] += 1
            pending.append((time.monotonic() + options.reconnect, slow))
            return
        selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
        open_conns.add(conn)

    def drop(conn):
        selector.unregister(conn.sock)
        conn.sock.close()
        open_conns.discard(conn)
        stats["dropped"] += 1
        pending.append((time.monotonic() + options.reconnect, conn.slow))

    while time.monotonic() < deadline:
        now = time.monotonic()
        due = [item for item in pending if item[0] <= now]
        pending[:] = [item for item in pending if item[0] > now]
        for _, slow in due:
            if stats["connects"] >= options.max_connects:
                break
            open_one(slow)
        if not announced and now > started + 1.5:
            print("ready", flush=True)
            announced = True
        for key, events in selector.select(timeout=0.05):
            conn = key.data
            if events & selectors.EVENT_WRITE and not conn.connected:
                if conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                    drop(conn)
                    continue
                conn.connected = True
                selector.modify(conn.sock, selectors.EVENT_READ, conn)
                if conn.slow:
                    try:
                        conn.sock.send(HEAD[:1])
                        conn.sent = 1
                    except OSError:
                        drop(conn)
                        continue
            if events & selectors.EVENT_READ:
                try:
                    data = conn.sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    drop(conn)
        now = time.monotonic()
        for conn in list(open_conns):
            if conn.slow and conn.connected and now >= conn.next_send:
                conn.next_send = now + options.interval
                try:
                    conn.sock.send(HEAD[conn.sent:conn.sent + 1])
                    conn.sent += 1
                    stats["bytesSent"] += 1
                except OSError:
                    drop(conn)
        stats["maxOpen"] = max(stats["maxOpen"], sum(1 for conn in open_conns if conn.connected))
    stats["openAtEnd"] = sum(1 for conn in open_conns if conn.connected)
    for conn in list(open_conns):
        conn.sock.close()
    print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    sys.exit(main())
