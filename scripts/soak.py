#!/usr/bin/env python3
"""make soak: a long steady load on a fresh `chime serve` (loopback only), watching that nothing
grows that should not: the server's resident memory and its open file descriptors, sampled every
SAMPLE seconds, with adds, deliveries, answers and event streams going on all along.

    python3 scripts/soak.py --chime .build/release/chime --seconds 1800 --rate 1000

The load, for --seconds (default 1800), all bounded in time and sent to 127.0.0.1 only:
- --rate single adds a second (default 1,000) over 4 keep-alive connections, each due 1-3 s later;
- one event stream of the app's that stays open and counts deliveries, and one that is closed and
  opened again every 20 s (stream churn);
- the owner answers every 10th delivered notification (the default action), and the app reads its
  outbox and acknowledges what is there every 2 s;
- the app clears its delivered list every 10 s (as the notification center's user would).
Prints a progress line per sample; at the end a summary, and a CSV with every sample (--out).
Exits 1 when a request failed, the server died, a due request was not delivered, or the last
minute's memory or descriptors are more than 20% (and 16 MB / 16 descriptors) above the second
minute's.
"""
import argparse
import csv
import http.client
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "abuse"))
from harness import LOOPBACK, Server, raise_open_files  # noqa: E402

APP = "com.example.soak"
DEFAULT_ACTION = "com.apple.UNNotificationDefaultActionIdentifier"


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.values = {"added": 0, "delivered": 0, "answered": 0, "acknowledged": 0, "cleared": 0, "reconnects": 0, "errors": 0}
        self.first_errors = []
        self.delivered_ids = set()
        self.to_answer = []

    def add(self, name, count=1):
        with self.lock:
            self.values[name] += count

    def error(self, what):
        with self.lock:
            self.values["errors"] += 1
            if len(self.first_errors) < 10:
                self.first_errors.append(what)

    def snapshot(self):
        with self.lock:
            return dict(self.values)


class Connection:
    """A keep-alive HTTP/1.1 connection that reconnects after an error."""

    def __init__(self, port, token):
        self.port, self.token = port, token
        self.connection = None

    def request(self, method, path, body=None):
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(LOOPBACK, self.port, timeout=30)
            headers = {"Authorization": f"Bearer {self.token}"}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
            try:
                self.connection.request(method, path, body=data, headers=headers)
                response = self.connection.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException):
                self.connection.close()
                self.connection = None
                if attempt == 1:
                    raise
        raise RuntimeError("unreachable")


def adder(server, token, rate, deadline, index, workers, counters):
    connection = Connection(server.port, token)
    interval = workers / rate
    next_at = time.monotonic()
    n = index
    while time.monotonic() < deadline:
        now = time.monotonic()
        if now < next_at:
            time.sleep(next_at - now)
        next_at += interval
        body = {"identifier": f"s{n}", "title": f"Soak {n}", "body": "steady load",
                "trigger": {"type": "timeInterval", "timeInterval": 1 + (n % 3)}}
        n += workers
        try:
            status, data = connection.request("POST", f"/v1/apps/{APP}/requests", body)
            if status == 201 or status == 200:
                counters.add("added")
            else:
                counters.error(f"add {status} {data[:200]!r}")
        except Exception as error:  # noqa: BLE001 - every failure is counted and reported
            counters.error(f"add: {error}")


def read_stream(server, token, deadline, counters, reopen_every=None, count=True, done=lambda: False):
    """Reads the app's event stream until the deadline or `done()` (or for `reopen_every` seconds at a time)."""
    while time.monotonic() < deadline and not done():
        until = deadline if reopen_every is None else min(deadline, time.monotonic() + reopen_every)
        sock = socket.create_connection((LOOPBACK, server.port), timeout=5)
        try:
            sock.sendall((f"GET /v1/apps/{APP}/events HTTP/1.1\r\nHost: {LOOPBACK}\r\nAuthorization: Bearer {token}\r\n"
                          "Accept: text/event-stream\r\n\r\n").encode())
            buffer = b""
            event = None
            while time.monotonic() < until and not done():
                sock.settimeout(max(0.05, min(1.0, until - time.monotonic())))
                try:
                    chunk = sock.recv(65536)
                except socket.timeout:
                    continue
                if not chunk:
                    counters.error("an event stream ended by the server")
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    line = line.rstrip(b"\r")
                    if line.startswith(b"event:"):
                        event = line[6:].strip()
                    elif line.startswith(b"data:") and event == b"delivered" and count:
                        try:
                            identifier = json.loads(line[5:])["notification"]["identifier"]
                        except (ValueError, KeyError, TypeError):
                            continue
                        with counters.lock:
                            if identifier not in counters.delivered_ids:
                                counters.delivered_ids.add(identifier)
                                counters.values["delivered"] += 1
                                if len(counters.delivered_ids) % 10 == 0:
                                    counters.to_answer.append(identifier)
                    elif not line:
                        event = None
        except OSError as error:
            counters.error(f"stream: {error}")
        finally:
            sock.close()
        if reopen_every is not None and time.monotonic() < deadline:
            counters.add("reconnects")


def answerer(server, token, deadline, counters):
    owner = Connection(server.port, server.owner)
    app = Connection(server.port, token)
    last_ack = last_clear = time.monotonic()
    while time.monotonic() < deadline:
        with counters.lock:
            batch, counters.to_answer = counters.to_answer, []
        for identifier in batch:
            try:
                status, data = owner.request("POST", f"/v1/apps/{APP}/notifications/{identifier}/responses",
                                             {"actionIdentifier": DEFAULT_ACTION})
                if status in (200, 201):
                    counters.add("answered")
                elif status != 404:   # cleared from the delivered list before its answer: fine
                    counters.error(f"answer {status} {data[:200]!r}")
            except Exception as error:  # noqa: BLE001
                counters.error(f"answer: {error}")
        now = time.monotonic()
        try:
            if now - last_ack >= 2:
                last_ack = now
                status, data = app.request("GET", f"/v1/apps/{APP}/responses?limit=1000")
                if status == 200:
                    for response in json.loads(data):
                        ack, _ = app.request("POST", f"/v1/apps/{APP}/responses/{response['id']}/ack")
                        if ack == 200:
                            counters.add("acknowledged")
                        else:
                            counters.error(f"ack {ack}")
                else:
                    counters.error(f"outbox {status}")
            if now - last_clear >= 10:
                last_clear = now
                status, _ = app.request("DELETE", f"/v1/apps/{APP}/notifications")
                if status in (200, 204):
                    counters.add("cleared")
                else:
                    counters.error(f"clear {status}")
        except Exception as error:  # noqa: BLE001
            counters.error(f"outbox: {error}")
        time.sleep(0.1)


def memory(pid):
    """RssAnon and RssFile in MB: the heap apart from the store's mapped and cached file pages."""
    values = {"RssAnon:": 0.0, "RssFile:": 0.0}
    try:
        with open(f"/proc/{pid}/status") as file:
            for line in file:
                key = line.split(":", 1)[0] + ":"
                if key in values:
                    values[key] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return round(values["RssAnon:"], 1), round(values["RssFile:"], 1)


def descriptors(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chime", required=True)
    parser.add_argument("--seconds", type=int, default=1800)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=10)
    parser.add_argument("--out", default="soak.csv")
    options = parser.parse_args()
    raise_open_files()
    server = Server(options.chime, extra=("--max-streams-per-app", "64"))
    token = server.app(APP)
    counters = Counters()
    started = time.monotonic()
    deadline = started + options.seconds
    workers = 4
    threads = [threading.Thread(target=adder, args=(server, token, options.rate, deadline, i, workers, counters), daemon=True)
               for i in range(workers)]
    # The counting stream stays until every acknowledged add was seen delivered (at most 60 s after
    # the last add: the last ones are due 1-3 s after it, later on a loaded machine).
    def all_seen():
        values = counters.snapshot()
        return time.monotonic() >= deadline and values["delivered"] >= values["added"]
    threads.append(threading.Thread(target=read_stream, args=(server, token, deadline + 60, counters, None, True, all_seen), daemon=True))
    threads.append(threading.Thread(target=read_stream, args=(server, token, deadline, counters, 20, False), daemon=True))
    threads.append(threading.Thread(target=answerer, args=(server, token, deadline, counters), daemon=True))
    for thread in threads:
        thread.start()
    samples = []
    with open(options.out, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["seconds", "rss_mb", "fds", "added", "delivered", "answered", "acknowledged", "errors", "anon_mb", "file_mb"])
        while server.alive() and (time.monotonic() < deadline or (not all_seen() and time.monotonic() < deadline + 60)):
            time.sleep(min(options.sample, max(0.1, deadline - time.monotonic())) if time.monotonic() < deadline else 1)
            values = counters.snapshot()
            sample = (round(time.monotonic() - started, 1), round(server.rss_mb(), 1), descriptors(server.pid), values["added"],
                      values["delivered"], values["answered"], values["acknowledged"], values["errors"], *memory(server.pid))
            samples.append(sample)
            writer.writerow(sample)
            file.flush()
            print(f"soak: {sample[0]:7.1f} s  RSS {sample[1]:6.1f} MB (heap {sample[8]:.1f}, files {sample[9]:.1f})  fds {sample[2]:4d}  added {sample[3]}  delivered {sample[4]}  "
                  f"answered {sample[5]}  acknowledged {sample[6]}  errors {sample[7]}", file=sys.stderr, flush=True)
    for thread in threads:
        thread.join(timeout=10)
    alive = server.alive()
    pending = server.json("GET", f"/v1/apps/{APP}/requests?limit=1000") if alive else None
    server.stop()
    values = counters.snapshot()
    failures = []
    if not alive:
        failures.append(f"the server died; see {server.log_path}")
    if values["errors"]:
        failures.append(f"{values['errors']} requests failed, first: {counters.first_errors}")
    if pending is not None and values["delivered"] + len(pending) < values["added"]:
        failures.append(f"{values['added']} added, {values['delivered']} delivered, {len(pending)} still pending")

    def window(start, end):
        return [s for s in samples if start <= s[0] < end]
    second_minute = window(60, 120) or samples[:1]
    last_minute = window(options.seconds - 60, options.seconds + 10) or samples[-1:]
    rss_early, rss_late = max(s[1] for s in second_minute), max(s[1] for s in last_minute)
    fds_early, fds_late = max(s[2] for s in second_minute), max(s[2] for s in last_minute)
    if rss_late > rss_early * 1.2 and rss_late - rss_early > 16:
        failures.append(f"memory grew: {rss_early} MB in the second minute, {rss_late} MB in the last")
    if fds_late > fds_early * 1.2 and fds_late - fds_early > 16:
        failures.append(f"descriptors grew: {fds_early} in the second minute, {fds_late} in the last")
    print(json.dumps({"seconds": options.seconds, "rate": options.rate, **values, "pendingAtEnd": len(pending or []),
                      "rssMB": {"secondMinute": rss_early, "lastMinute": rss_late, "peak": max(s[1] for s in samples)},
                      "fds": {"secondMinute": fds_early, "lastMinute": fds_late, "peak": max(s[2] for s in samples)},
                      "csv": options.out, "failures": failures}, indent=2))
    server.remove()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
