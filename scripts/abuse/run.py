#!/usr/bin/env python3
"""make abuse: bounded attacks on a fresh `chime serve` on loopback, and a table of attack → outcome.

    run.py [--chime .build/release/chime] [--only NAME,...] [--rows WORD,...] [--quick] [--json FILE]

Attacks (each against a fresh server and data directory):
  slowloris     1,500 connections sending a request head one byte every 5 s from 127.0.0.2 and 1,300
                silent ones from 127.0.0.3 (dropped ones reconnect after 1 s); meanwhile 50 GET /healthz
                and 50 adds from 127.0.0.1: p99 of each must be ≤ 100 ms.
  slowloris-same the same horde from 127.0.0.1, the probes' own address.
  flood         20,000 connections opened and closed as fast as possible, and 4 connections sending
                requests with unknown tokens as fast as possible, while adds are probed; with 10,000 apps
                registered, an unknown token must cost what it costs with 10.
  subscribers   100 event streams that never read, then 100 posts of 60 KB: the server stays under
                150 MB, and the subscribers are disconnected.
  streams       one app's token opens 800 event streams (the issue's 768 took every slot): past its share
                (16) each is answered 429 with Retry-After, and another app's stream, the owner's stream,
                GET /healthz and an owner request are answered 200 meanwhile.
  answers       an app in front (an event stream with foreground=true) posts 2,500 willPresent answers for
                distinct 4,000-byte identifiers nobody waits for: each is refused 404, and the server
                grows by at most 8 MB (the issue: +16.8 MiB, kept until the stream closed).
  argv          `chime open` with a desktop (DISPLAY, BROWSER set to a recording script): the browser's
                command line (what every local user reads in /proc/PID/cmdline) must not hold the
                sign-in code; the page it is given is 0600 in a 0700 directory.
  cross-port    a page on another port of 127.0.0.1 (same site: the session cookie goes along) opens an
                app's event stream with ?serviceExtension=true and ?foreground=true in the user's name:
                refused 403, as a write from there is.
  environment   the service runs with PGPASSWORD, AWS_SECRET_ACCESS_KEY and CHIME_DATABASE_URL set; an app's
                launch command dumps its environment: none of them is in it.
  rebinding     requests as a DNS-rebinding page sends them (Host: a name the service was not given) to
                /metrics, /openapi.json, the web center and the API: each 421; /healthz 200; the
                --public-url name and 127.0.0.1 are answered.
  revocation    an app stream when its token is rotated, an app stream when its app is removed, the web
                center's stream when it signs out: each ends within 1 s.
  malformed     requests with broken framing or heads over the limits: each answered within 1 s.
  smuggling     Content-Length with Transfer-Encoding, two lengths, TE with whitespace before the colon:
                refused, and nothing after the head runs as a second request.
  lists         20,000 pending: a list answer is one page (≤ about 1 MiB), 20 concurrent lists do not
                grow the server by more than ~60 MB; 1,200 deliveries of 60 KB keep the event log
                within 64 MiB.
  http2         HTTP/2's own attacks through the h2 library (Tests/Support/HTTP2Clients/clients.py, in the venv
                scripts/http2-test-env.sh makes): rapid reset (CVE-2023-44487, 3,000 streams opened and reset),
                PING and SETTINGS floods of 200,000 frames from a client that does not read, 300 requests at
                once on one connection, a 20 KB header (HPACK's list over the limit): each connection is
                refused or ended (GOAWAY, reset) or served within its limits, the server grows by at most
                20 MB, and /healthz is answered afterwards.
  http2-hostile HTTP/2 clients writing frames themselves (clients.py), each against a fresh server while a
                well-behaved client on its own h2 connection sends GET /healthz and an APNs push in turn
                (every answer 200, p99 ≤ 1 s, during and after), with the server's memory and open files
                sampled: empty DATA, empty CONTINUATION and zero-length HEADERS floods (GOAWAY), PING
                acknowledgements nobody asked for, for 12 s (the others keep their share), CONTINUATION never ended and an HPACK
                dynamic-table bomb (GOAWAY ENHANCE_YOUR_CALM), 4 connections × 128 list pages of 1 MiB
                and an event stream never given a flow-control window (every stream reset within the
                30 s stall time, memory given back), 200 idle connections and a dribbled request (GOAWAY
                NO_ERROR at the 10 s head timeout), 300 connections × 128 streams whose bodies never come
                (GOAWAY NO_ERROR at the 30 s body timeout).
  stores        damaged store files (random bytes in a data page and mid-file, the apps table dropped,
                0 bytes): `chime serve` refuses each, naming the file, and leaves it untouched.

Every loop is bounded in count and time; everything is on 127.0.0.1 (and 127.0.0.2/3, the same
machine). Results go to --json (default .build/abuse/results.json).
"""
import argparse
import hashlib
import http.client
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import LOOPBACK, PeakRSS, Server, latency_summary, raw_exchange, status_lines, timed_request  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = []
RESULTS = {}


def row(attack, outcome, passed, figures):
    ROWS.append((attack, outcome, "yes" if passed else ("–" if passed is None else "NO"), figures))
    print(f"  {attack}: {outcome} [{'pass' if passed else ('n/a' if passed is None else 'FAIL')}] {figures}", file=sys.stderr, flush=True)


def add_body(tag, index, size=0):
    body = {"identifier": f"{tag}-{index}", "title": "probe", "trigger": {"type": "timeInterval", "timeInterval": 3600}}
    if size:
        body["body"] = "x" * size
    return body


def probe_loop(server, token, app, count, spacing):
    """`count` GET /healthz and `count` adds, alternating, `spacing` s apart, each on a new connection."""
    healthz, adds = [], []
    for index in range(count):
        healthz.append(timed_request(server.port, "GET", "/healthz"))
        time.sleep(spacing / 2)
        adds.append(timed_request(server.port, "POST", f"/v1/apps/{app}/requests", body=add_body("probe", index), token=token))
        time.sleep(spacing / 2)
    return latency_summary(healthz), latency_summary(adds)


# MARK: - Slowloris


def attack_slowloris(options, same_address=False):
    name = "slowloris-same" if same_address else "slowloris"
    server = Server(options.chime)
    try:
        token = server.app("com.example.probe")
        # Warm up the paths the probes take.
        probe_loop(server, token, "com.example.probe", 5, 0.02)
        source = LOOPBACK if same_address else None
        horde = subprocess.Popen([sys.executable, os.path.join(HERE, "horde.py"), "--port", str(server.port),
                                  "--slow", str(options.slow), "--silent", str(options.silent), "--seconds", str(options.horde_seconds),
                                  "--slow-from", source or "127.0.0.2", "--silent-from", source or "127.0.0.3"],
                                 stdout=subprocess.PIPE, text=True)
        ready = horde.stdout.readline().strip()
        if ready != "ready":
            raise RuntimeError(f"horde did not start: {ready}")
        time.sleep(options.settle)  # let the horde reach the server's limits
        admitted_before = None
        healthz, adds = probe_loop(server, token, "com.example.probe", options.probes, 0.1)
        counts = json.loads(horde.stdout.readline() or "{}")
        horde.wait(timeout=options.horde_seconds + 30)
        passed = healthz["p99Ms"] <= 100 and adds["p99Ms"] <= 100 and healthz["failed"] == 0 and adds["failed"] == 0 and server.alive()
        where = "from 127.0.0.1, the probes' address" if same_address else "from 127.0.0.2 (slow) and 127.0.0.3 (silent)"
        row(name, f"{options.slow:,} slow + {options.silent:,} silent {where}: probes answered", passed,
            f"healthz p50/p99/max {healthz['p50Ms']}/{healthz['p99Ms']}/{healthz['maxMs']} ms; add {adds['p50Ms']}/{adds['p99Ms']}/{adds['maxMs']} ms; "
            f"failed {healthz['failed'] + adds['failed']}/{healthz['count'] + adds['count']}; horde: {counts.get('connects', 0):,} connects, "
            f"{counts.get('dropped', 0):,} dropped by the server, at most {counts.get('maxOpen', 0):,} open at once")
        RESULTS[name] = {"healthz": healthz, "add": adds, "horde": counts, "admittedBefore": admitted_before}
    finally:
        server.stop()
        server.remove()


# MARK: - Floods


def attack_flood(options):
    server = Server(options.chime)
    try:
        token = server.app("com.example.probe")
        # 10 apps, then the same measurement with 10,000: an unknown token must not cost more.
        def unknown_cost(samples=200):
            times = []
            for _ in range(samples):
                times.append(timed_request(server.port, "GET", "/v1/apps/com.example.probe/settings", token="no-such-token"))
            return latency_summary(times)

        for index in range(9):
            server.app(f"com.example.few{index}")
        few = unknown_cost()
        started = time.monotonic()
        threads = []
        failures = []

        def register(part):
            for index in range(part, options.apps, 4):
                try:
                    server.json("POST", "/v1/apps", {"bundleIdentifier": f"com.example.many{index}"})
                except Exception as error:  # noqa: BLE001 - counted and reported
                    failures.append(str(error))
                if time.monotonic() - started > 120:
                    return
        for part in range(4):
            thread = threading.Thread(target=register, args=(part,))
            thread.start()
            threads.append(thread)
        for thread in threads:
            thread.join()
        many = unknown_cost()

        # Four connections of unknown tokens and a connect/close flood, while adds are probed.
        stop = threading.Event()
        flood_counts = {"requests": 0, "connects": 0}

        def wrong_tokens():
            deadline = time.monotonic() + 20
            while not stop.is_set() and time.monotonic() < deadline:
                timed_request(server.port, "POST", "/v1/apps/com.example.probe/requests", body=add_body("x", 0), token="wrong-token")
                flood_counts["requests"] += 1

        def connect_flood():
            deadline = time.monotonic() + 20
            while not stop.is_set() and time.monotonic() < deadline and flood_counts["connects"] < options.flood_connects:
                try:
                    sock = socket.create_connection((LOOPBACK, server.port), timeout=2)
                    sock.close()
                except OSError:
                    pass
                flood_counts["connects"] += 1
        workers = [threading.Thread(target=wrong_tokens) for _ in range(4)] + [threading.Thread(target=connect_flood)]
        for worker in workers:
            worker.start()
        time.sleep(0.5)
        adds = []
        for index in range(options.probes):
            adds.append(timed_request(server.port, "POST", "/v1/apps/com.example.probe/requests", body=add_body("flood", index), token=token))
            time.sleep(0.05)
        stop.set()
        for worker in workers:
            worker.join()
        add_summary = latency_summary(adds)
        passed = (many["p50Ms"] <= max(2 * few["p50Ms"], few["p50Ms"] + 1) and add_summary["failed"] == 0 and add_summary["p99Ms"] <= 100
                  and server.alive() and not failures)
        row("flood", f"unknown token with 10 vs {options.apps:,} apps; adds under 4 wrong-token connections and a connect flood", passed,
            f"unknown token p50 {few['p50Ms']} ms (10 apps) vs {many['p50Ms']} ms ({options.apps:,}); adds p50/p99 {add_summary['p50Ms']}/"
            f"{add_summary['p99Ms']} ms, failed {add_summary['failed']}; {flood_counts['requests']:,} wrong-token requests, "
            f"{flood_counts['connects']:,} connects")
        RESULTS["flood"] = {"unknownFew": few, "unknownMany": many, "adds": add_summary, "flood": flood_counts,
                            "registerFailures": len(failures)}
    finally:
        server.stop()
        server.remove()


# MARK: - Subscribers that never read


def attack_subscribers(options):
    # All the subscribers use one app's token: past the default share of 16 they would be refused.
    server = Server(options.chime, extra=("--max-streams-per-app", str(options.subscribers)))
    try:
        token = server.app("com.example.subs")
        memory = PeakRSS(server)
        sockets = []
        for _ in range(options.subscribers):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect((LOOPBACK, server.port))
            sock.sendall(f"GET /v1/apps/com.example.subs/events HTTP/1.1\r\nHost: {LOOPBACK}\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
            sockets.append(sock)
        time.sleep(0.5)
        start_rss = server.rss_mb()
        for index in range(options.posts):
            body = {"identifier": f"big-{index}", "title": "big", "body": "y" * 60_000}
            server.json("POST", "/v1/apps/com.example.subs/requests", body, token=token, expect=(201,))
        time.sleep(1.0)
        peak = memory.stop()
        # A subscriber that was disconnected reads the end of its stream after what was queued.
        ended = 0
        for sock in sockets:
            sock.settimeout(5)
            try:
                while sock.recv(1 << 20):
                    pass
                ended += 1
            except ConnectionResetError:
                ended += 1
            except socket.timeout:
                pass
            sock.close()
        passed = peak < 150 and ended == len(sockets) and server.alive()
        row("subscribers", f"{options.subscribers} streams that never read, {options.posts} posts of 60 KB", passed,
            f"server RSS {start_rss:.0f} MB before the posts, peak {peak:.0f} MB (limit 150); {ended}/{len(sockets)} subscribers disconnected")
        RESULTS["subscribers"] = {"rssBeforeMB": round(start_rss, 1), "peakMB": round(peak, 1), "disconnected": ended}
    finally:
        server.stop()
        server.remove()


# MARK: - One app's streams


def open_stream(port, path, token):
    """Opens an event stream on a new connection; returns (socket, status). A refused one is closed."""
    sock = socket.create_connection((LOOPBACK, port), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {LOOPBACK}:{port}\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 65536:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    lines = status_lines(head)
    status = int(lines[0].split()[1]) if lines else 0
    if status != 200:
        sock.close()
        return None, status, head
    return sock, status, head


def attack_streams(options):
    server = Server(options.chime)
    try:
        greedy = server.app("com.example.greedy")
        other = server.app("com.example.other")
        held, statuses, retry_after = [], {}, set()
        started = time.monotonic()
        for _ in range(options.greedy_streams):
            sock, status, head = open_stream(server.port, "/v1/apps/com.example.greedy/events", greedy)
            statuses[status] = statuses.get(status, 0) + 1
            if sock:
                held.append(sock)
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"retry-after:"):
                    retry_after.add(line.split(b":", 1)[1].strip().decode())
        opened_in = time.monotonic() - started
        probes = {}
        sock, probes["another app's stream"], _ = open_stream(server.port, "/v1/apps/com.example.other/events", other)
        if sock:
            sock.close()
        sock, probes["the owner's stream"], _ = open_stream(server.port, "/v1/events", server.owner)
        if sock:
            sock.close()
        probes["GET /healthz"] = timed_request(server.port, "GET", "/healthz")[0]
        probes["GET /v1/apps (owner)"] = timed_request(server.port, "GET", "/v1/apps", token=server.owner)[0]
        for sock in held:
            sock.close()
        passed = (statuses.get(200, 0) == 16 and statuses.get(429, 0) == options.greedy_streams - 16 and retry_after == {"5"}
                  and all(status == 200 for status in probes.values()) and server.alive())
        row("streams", f"one app token opens {options.greedy_streams} event streams; others probed", passed,
            f"{statuses.get(200, 0)} streams 200, {statuses.get(429, 0)} answered 429 (Retry-After {', '.join(sorted(retry_after)) or 'none'}) "
            f"in {opened_in:.1f} s; " + "; ".join(f"{name} {status}" for name, status in probes.items()))
        RESULTS["streams"] = {"statuses": statuses, "probes": probes}
    finally:
        server.stop()
        server.remove()


# MARK: - willPresent answers nobody waits for


def attack_answers(options):
    server = Server(options.chime)
    try:
        token = server.app("com.example.front")
        sock, status, _ = open_stream(server.port, "/v1/apps/com.example.front/events?foreground=true", token)
        if status != 200:
            raise RuntimeError(f"the foreground stream was answered {status}")
        connection = http.client.HTTPConnection(LOOPBACK, server.port, timeout=10)
        body = json.dumps({"options": ["banner"]}).encode()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

        def answer(index):
            identifier = f"{index:06d}" + "x" * 3994
            connection.request("POST", f"/v1/apps/com.example.front/notifications/{identifier}/presentation", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            return response.status

        for index in range(100):  # warm up the paths and the allocator
            answer(index)
        before = server.rss_mb()
        statuses = {}
        started = time.monotonic()
        for index in range(100, 100 + options.answers):
            status = answer(index)
            statuses[status] = statuses.get(status, 0) + 1
        seconds = time.monotonic() - started
        after = server.rss_mb()
        connection.close()
        sock.close()
        passed = statuses == {404: options.answers} and after - before <= 8 and server.alive()
        row("answers", f"{options.answers:,} willPresent answers for distinct 4,000-byte identifiers while in front", passed,
            f"answered {', '.join(f'{count:,}× {status}' for status, count in sorted(statuses.items()))} in {seconds:.1f} s; "
            f"server RSS {before:.1f} → {after:.1f} MB (limit +8)")
        RESULTS["answers"] = {"statuses": statuses, "rssBeforeMB": round(before, 1), "rssAfterMB": round(after, 1)}
    finally:
        server.stop()
        server.remove()


# MARK: - The sign-in code on a command line


def attack_argv(options):
    server = Server(options.chime)
    try:
        record = os.path.join(server.dir, "browser")
        os.makedirs(record)
        script = os.path.join(record, "browser.sh")
        with open(script, "w") as file:
            file.write("#!/bin/sh\n"
                       f"tr '\\0' ' ' < /proc/$$/cmdline > '{record}/cmdline'\n"
                       "page=$(printf '%s' \"$1\" | sed 's|^file://||')\n"
                       f"stat -c '%a' \"$page\" \"$(dirname \"$page\")\" > '{record}/modes'\n"
                       f"touch '{record}/done'\n")
        os.chmod(script, 0o755)
        environment = {**os.environ, "DISPLAY": ":99", "BROWSER": script}
        result = subprocess.run([options.chime, "open", "--data", server.dir], env=environment, capture_output=True, text=True, timeout=30)
        code = result.stdout.strip().rsplit("=", 1)[-1]
        deadline = time.monotonic() + 10
        while not os.path.exists(os.path.join(record, "done")) and time.monotonic() < deadline:
            time.sleep(0.02)
        with open(os.path.join(record, "cmdline")) as file:
            cmdline = file.read()
        with open(os.path.join(record, "modes")) as file:
            modes = file.read().split()
        passed = bool(code) and code not in cmdline and "login=" not in cmdline and modes == ["600", "700"]
        row("argv", "chime open starts the browser; its command line is read as another local user would", passed,
            f"browser argv: {cmdline.strip()[:120]}; code in it: {'yes' if code and code in cmdline else 'no'}; page/dir modes {'/'.join(modes)}")
        RESULTS["argv"] = {"cmdline": cmdline, "modes": modes}
    finally:
        server.stop()
        server.remove()


# MARK: - Session reads that change behaviour, launched apps' environment


def sign_in(server):
    link = server.json("POST", "/v1/session/links")
    status, headers, data = server.request("POST", "/v1/session", body={"code": link["code"]})
    return headers.get("Set-Cookie", "").split(";")[0], json.loads(data)["csrfToken"]


def attack_cross_port(options):
    server = Server(options.chime)
    try:
        server.app("com.example.victim")
        cookie, _ = sign_in(server)
        statuses = {}
        for query in ("serviceExtension=true", "foreground=true"):
            for name, headers in (("Origin of another port", {"Origin": f"http://{LOOPBACK}:{server.port + 1}"}),
                                  ("Sec-Fetch-Site: same-site", {"Sec-Fetch-Site": "same-site"})):
                status, _, _ = server.request("GET", f"/v1/apps/com.example.victim/events?{query}", headers={"Cookie": cookie, **headers}, timeout=5)
                statuses[f"{query}, {name}"] = status
        passed = all(status == 403 for status in statuses.values()) and server.alive()
        row("cross-port", "a page on another 127.0.0.1 port opens streams as the app's extension / front with the session", passed,
            "; ".join(f"{name}: {status}" for name, status in statuses.items()))
        RESULTS["cross-port"] = statuses
    finally:
        server.stop()
        server.remove()


def attack_environment(options):
    secrets = {"PGPASSWORD": "abuse-pg-secret", "AWS_SECRET_ACCESS_KEY": "abuse-aws-secret",
               "CHIME_DATABASE_URL": "postgresql://chime:abuse-url-secret@127.0.0.1:1/none"}
    # The URL must not reach the service itself as its store: it is what the launched app must not see.
    environment = {**os.environ, **{key: value for key, value in secrets.items() if key != "CHIME_DATABASE_URL"}}
    server = Server(options.chime, env=environment)
    try:
        dump = os.path.join(server.dir, "launched-env.txt")
        bundle = "com.example.launched"
        token = server.json("POST", "/v1/apps", {"bundleIdentifier": bundle, "launch": ["/bin/sh", "-c", f"env > '{dump}'"]})["token"]
        server.json("POST", f"/v1/apps/{bundle}/authorization", token=token)
        server.json("POST", f"/v1/apps/{bundle}/requests", {"identifier": "n", "title": "t"}, token=token)
        server.json("POST", f"/v1/apps/{bundle}/notifications/n/responses", {"actionIdentifier": "com.apple.UNNotificationDefaultActionIdentifier"})
        deadline = time.monotonic() + 20
        while not os.path.exists(dump) and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(dump) as file:
            launched = file.read()
        leaked = [key for key, value in secrets.items() if key != "CHIME_DATABASE_URL" and value in launched]
        names = sorted(line.split("=", 1)[0] for line in launched.splitlines() if "=" in line)
        passed = not leaked and server.alive()
        row("environment", "the service's secrets in the environment of an app it launches", passed,
            f"leaked: {', '.join(leaked) or 'none'}; the launched app got {len(names)} variables: {', '.join(names)[:200]}")
        RESULTS["environment"] = {"leaked": leaked, "variables": names}
    finally:
        server.stop()
        server.remove()


# MARK: - DNS rebinding


def attack_rebinding(options):
    server = Server(options.chime, extra=("--public-url", "https://chime.example.org"))
    try:
        statuses = {}
        for path in ("/metrics", "/openapi.json", "/", "/v1/apps", "/healthz"):
            status, _, _ = server.request("GET", path, token=server.owner if path == "/v1/apps" else None,
                                          headers={"Host": f"rebind.attacker.example:{server.port}"})
            statuses[f"{path} as rebind.attacker.example"] = status
        statuses["/metrics as chime.example.org"] = server.request("GET", "/metrics", headers={"Host": "chime.example.org"})[0]
        statuses["/metrics as 127.0.0.1"] = server.request("GET", "/metrics")[0]
        passed = all(status == (200 if "healthz" in name or "rebind" not in name else 421) for name, status in statuses.items()) and server.alive()
        row("rebinding", "requests with a Host the service was not given (DNS rebinding)", passed,
            "; ".join(f"{name}: {status}" for name, status in statuses.items()))
        RESULTS["rebinding"] = statuses
    finally:
        server.stop()
        server.remove()


# MARK: - Revoked credentials


class StreamWatch:
    """Reads an event stream in a thread and notes when it ends."""

    def __init__(self, port, path, headers):
        self.sock = socket.create_connection((LOOPBACK, port), timeout=10)
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {LOOPBACK}:{port}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
                           + "\r\n").encode())
        self.first = self.sock.recv(4096)
        self.ended_at = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while True:
                if not self.sock.recv(65536):
                    break
        except OSError:
            pass
        self.ended_at = time.monotonic()

    def wait(self, since, limit=5.0):
        if self.ended_at is not None and self.ended_at < since:
            raise RuntimeError("the stream ended before the credential changed")
        self.thread.join(timeout=limit)
        self.sock.close()
        return None if self.ended_at is None else self.ended_at - since


def attack_revocation(options):
    server = Server(options.chime)
    try:
        outcomes = {}
        token = server.app("com.example.rev")
        watch = StreamWatch(server.port, "/v1/apps/com.example.rev/events", {"Authorization": f"Bearer {token}"})
        time.sleep(0.2)
        since = time.monotonic()
        server.json("POST", "/v1/apps/com.example.rev/token")
        outcomes["rotated token"] = watch.wait(since)
        token = server.json("POST", "/v1/apps/com.example.rev/token")["token"]
        watch = StreamWatch(server.port, "/v1/apps/com.example.rev/events", {"Authorization": f"Bearer {token}"})
        time.sleep(0.2)
        since = time.monotonic()
        server.json("DELETE", "/v1/apps/com.example.rev")
        outcomes["app removed"] = watch.wait(since)
        link = server.json("POST", "/v1/session/links")
        status, headers, data = server.request("POST", "/v1/session", body={"code": link["code"]})
        cookie = headers.get("Set-Cookie", "").split(";")[0]
        csrf = json.loads(data)["csrfToken"]
        watch = StreamWatch(server.port, "/v1/events", {"Cookie": cookie})
        time.sleep(0.2)
        since = time.monotonic()
        server.request("DELETE", "/v1/session", headers={"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": server.url})
        outcomes["signed out"] = watch.wait(since)
        passed = all(value is not None and value <= 1.0 for value in outcomes.values())
        row("revocation", "event streams end when their credential does", passed,
            "; ".join(f"{name}: {'still open after 5 s' if value is None else f'closed in {value * 1000:.1f} ms'}" for name, value in outcomes.items()))
        RESULTS["revocation"] = {name: value for name, value in outcomes.items()}
    finally:
        server.stop()
        server.remove()


# MARK: - Malformed requests and smuggling shapes

MALFORMED = [
    ("600 query arguments", b"GET /v1/apps?" + b"&".join(b"a%d=1" % i for i in range(600)) + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    ("Transfer-Encoding: gzip", b"POST /v1/apps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc", 400),
    ("Transfer-Encoding: xchunked", b"POST /v1/apps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 400),
    ("Transfer-Encoding: chunked, identity", b"POST /v1/apps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 400),
    ("Transfer-Encoding: gzip, chunked", b"POST /v1/apps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
    ("a 20 KB header", b"GET /v1/apps HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20000 + b"\r\n\r\n", 431),
    ("a 12 KB target", b"GET /v1/apps?q=" + b"a" * 12000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    ("a NUL in a header", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400),
    ("no Host", b"GET /healthz HTTP/1.1\r\n\r\n", 400),
    ("a folded header", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", 400),
    ("a terminal escape in the method", b"G\x1b[31mET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("a bad Content-Length", b"POST /v1/apps HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\n", 400),
    ("a 40 KB header (past libmicrohttpd's buffer)", b"GET /v1/apps HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 40000 + b"\r\n\r\n", 431),
]

SMUGGLING = [
    ("Content-Length and Transfer-Encoding", b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("two Content-Length values", b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 34\r\n\r\n"
     b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("Transfer-Encoding with whitespace before the colon", b"POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 34\r\n\r\n"
     b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("Transfer-Encoding twice (chunked, then identity)", b"POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n"
     b"0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
]


def attack_malformed(options):
    server = Server(options.chime)
    try:
        slowest = 0.0
        details = []
        passed = True
        for name, data, expected in MALFORMED:
            answer, seconds, closed = raw_exchange(server.port, data, timeout=5)
            lines = status_lines(answer)
            status = int(lines[0].split()[1]) if lines else 0
            json_body = b'{"error"' in answer
            slowest = max(slowest, seconds)
            ok = status == expected and closed and seconds <= 1.0
            passed = passed and ok
            note = "" if json_body else " (libmicrohttpd's own answer, not JSON)"
            if len(lines) > 1:
                note += f" ({len(lines)} status lines: libmicrohttpd 0.9.75 writes its error head twice)"
            details.append(f"{name} → {status or 'none'} in {seconds * 1000:.0f} ms{note}")
            RESULTS.setdefault("malformed", {})[name] = {"status": status, "ms": round(seconds * 1000, 1), "json": json_body,
                                                        "statusLines": len(lines)}
        row("malformed", f"{len(MALFORMED)} malformed requests answered, connection closed", passed,
            f"slowest {slowest * 1000:.0f} ms; " + "; ".join(details))
        passed = True
        details = []
        for name, data in SMUGGLING:
            answer, seconds, closed = raw_exchange(server.port, data, timeout=5)
            lines = status_lines(answer)
            ok = len(lines) == 1 and lines[0].split()[1] in (b"400", b"501") and closed
            passed = passed and ok
            details.append(f"{name} → {b' / '.join(line.split(b' ', 2)[1] for line in lines).decode() or 'none'}")
            RESULTS.setdefault("smuggling", {})[name] = {"answers": [line.decode() for line in lines]}
        row("smuggling", "each refused with one answer; the smuggled request never runs", passed, "; ".join(details))
    finally:
        server.stop()
        server.remove()


# MARK: - Lists and the event log


def attack_lists(options):
    server = Server(options.chime)
    try:
        token = server.app("com.example.lists")
        for batch in range(options.pending // 500):
            server.json("POST", "/v1/apps/com.example.lists/requests", [add_body("p", batch * 500 + index) for index in range(500)],
                        token=token, expect=(201,))
        status, headers, data = server.request("GET", "/v1/apps/com.example.lists/requests?limit=1000", token=token)
        page_bytes = len(data)
        link = headers.get("Link", "")
        memory = PeakRSS(server)
        before = server.rss_mb()
        threads = [threading.Thread(target=lambda: server.request("GET", "/v1/apps/com.example.lists/requests?limit=1000", token=token))
                   for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        peak = memory.stop()
        # The event log: deliveries of 60 KB.
        for index in range(options.deliveries):
            server.json("POST", "/v1/apps/com.example.lists/requests", {"identifier": f"big-{index % 50}", "title": "big", "body": "z" * 60_000},
                        token=token, expect=(201,))
        server.stop()
        store = sqlite3.connect(os.path.join(server.dir, "chime.sqlite"))
        events, event_bytes = store.execute("SELECT count(*), coalesce(sum(length(body)), 0) FROM events").fetchone()
        store.close()
        file_mb = sum(os.path.getsize(os.path.join(server.dir, name)) for name in os.listdir(server.dir) if name.startswith("chime.sqlite")) / 1e6
        bound = 64 << 20
        passed = page_bytes <= (1 << 20) + 70_000 and "rel=\"next\"" in link and peak - before < 60 and event_bytes <= bound
        row("lists", f"{options.pending:,} pending listed; 20 concurrent lists; {options.deliveries:,} deliveries of 60 KB", passed,
            f"a page is {page_bytes / 1024:.0f} KiB with a Link to the next; 20 concurrent lists: RSS {before:.0f} → peak {peak:.0f} MB; "
            f"event log {events:,} events, {event_bytes / 1e6:.1f} MB (bound 67.1 MB); store files {file_mb:.0f} MB")
        RESULTS["lists"] = {"pageBytes": page_bytes, "rssBeforeMB": round(before, 1), "rssPeakMB": round(peak, 1),
                            "events": events, "eventBytes": event_bytes, "storeMB": round(file_mb, 1)}
    finally:
        server.stop()
        server.remove()


# MARK: - One app filling the store


def attack_storage(options):
    """One app adds 48 KB batches as fast as it can against --app-max-mb 8: it must get 507 naming it, while
    another app still adds and the owner and /healthz are served."""
    server = Server(options.chime, extra=("--app-max-mb", "8"))
    try:
        filler = server.app("com.example.filler")
        other = server.app("com.example.other")
        statuses, first_refusal, message, added = {}, None, "", 0
        started = time.monotonic()
        for batch in range(1_000):  # bounded: 48 MB offered against an 8 MB quota
            body = [add_body("f", batch * 12 + index, size=4_000) for index in range(12)]
            status, _, data = server.request("POST", "/v1/apps/com.example.filler/requests", body=body, token=filler)
            statuses[status] = statuses.get(status, 0) + 1
            if status == 201:
                added += 12
            elif status == 507 and first_refusal is None:
                first_refusal = batch
                message = json.loads(data)["error"]["message"]
            if first_refusal is not None and batch >= first_refusal + 20:
                break
        elapsed = time.monotonic() - started
        probes = {
            "another app's add": server.request("POST", "/v1/apps/com.example.other/requests", body=add_body("o", 0), token=other)[0],
            "GET /healthz": server.request("GET", "/healthz")[0],
            "GET /v1/apps (owner)": server.request("GET", "/v1/apps", token=server.owner)[0],
            "the filler's list": server.request("GET", "/v1/apps/com.example.filler/requests?limit=10", token=filler)[0],
        }
        server.stop()
        store = sqlite3.connect(os.path.join(server.dir, "chime.sqlite"))
        kept = store.execute("SELECT coalesce(sum(length(request)), 0) FROM pending WHERE app = 'com.example.filler'").fetchone()[0]
        store.close()
        passed = (first_refusal is not None and "com.example.filler" in message and kept <= 8 << 20
                  and probes["another app's add"] == 201 and all(status == 200 for name, status in probes.items() if name != "another app's add"))
        row("storage", "one app adds 48 KB batches against --app-max-mb 8; others probed", passed,
            f"{added:,} requests added, then 507 from batch {first_refusal} on ({statuses.get(507, 0)} refusals) in {elapsed:.1f} s; "
            f"the app keeps {kept / 1e6:.1f} MB of records (bound 8.4 MB); " + "; ".join(f"{name} {status}" for name, status in probes.items()))
        RESULTS["storage"] = {"statuses": statuses, "added": added, "keptBytes": kept, "probes": probes}
    finally:
        server.stop()
        server.remove()


# MARK: - Damaged stores


def damage(path, how):
    if how == "data page":
        store = sqlite3.connect(path)
        page = store.execute("SELECT pageno FROM dbstat WHERE name = 'pending' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET 2").fetchone()[0]
        store.close()
        with open(path, "r+b") as file:
            file.seek((page - 1) * 4096 + 64)
            file.write(os.urandom(960))
    elif how == "middle of the file":
        size = os.path.getsize(path)
        with open(path, "r+b") as file:
            file.seek(size // 2)
            file.write(os.urandom(8192))
    elif how == "apps table dropped":
        store = sqlite3.connect(path)
        store.execute("DROP TABLE apps")
        store.commit()
        store.close()
    elif how == "0 bytes":
        open(path, "wb").close()


def attack_stores(options):
    server = Server(options.chime)
    source = server.dir
    try:
        token = server.app("com.example.store")
        for batch in range(6):
            server.json("POST", "/v1/apps/com.example.store/requests", [add_body("s", batch * 500 + index) for index in range(500)],
                        token=token, expect=(201,))
        server.stop()
        details = []
        passed = True
        for how in ["data page", "middle of the file", "apps table dropped", "0 bytes"]:
            directory = source + "-" + how.replace(" ", "-")
            shutil.copytree(source, directory)
            for name in ["server.json", "server.log"]:
                if os.path.exists(os.path.join(directory, name)):
                    os.unlink(os.path.join(directory, name))
            path = os.path.join(directory, "chime.sqlite")
            damage(path, how)
            before = hashlib.sha256(open(path, "rb").read()).hexdigest()
            started = time.monotonic()
            result = subprocess.run([options.chime, "serve", "--data", directory, "--listen", f"{LOOPBACK}:0"], capture_output=True,
                                    text=True, timeout=60)
            seconds = time.monotonic() - started
            after = hashlib.sha256(open(path, "rb").read()).hexdigest()
            refused = result.returncode != 0 and path in result.stderr
            ok = refused and before == after
            passed = passed and ok
            message = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
            details.append(f"{how}: {'refused' if refused else 'STARTED'} in {seconds:.1f} s, file {'untouched' if before == after else 'CHANGED'}")
            RESULTS.setdefault("stores", {})[how] = {"exit": result.returncode, "seconds": round(seconds, 2), "untouched": before == after,
                                                     "message": message[:400]}
            shutil.rmtree(directory, ignore_errors=True)
        row("stores", "damaged store files refused at start, left untouched", passed, "; ".join(details))
    finally:
        server.remove()


# MARK: - HTTP/2


def http2_python():
    result = subprocess.run([os.path.join(HERE, "..", "http2-test-env.sh")], capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise RuntimeError(f"http2-test-env.sh: {result.stderr[-400:]}")
    return result.stdout.strip()


def h2_client(python, *arguments, timeout=120):
    script = os.path.join(HERE, "..", "..", "Tests", "Support", "HTTP2Clients", "clients.py")
    started = time.monotonic()
    result = subprocess.run([python, script, *arguments], capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"clients.py {arguments[0]}: {result.stderr[-400:]}")
    return json.loads(result.stdout), time.monotonic() - started


def attack_http2(options):
    python = http2_python()
    server = Server(options.chime)
    try:
        port = str(server.port)
        peak = PeakRSS(server)
        details, passed = [], True
        reset, seconds = h2_client(python, "rapid-reset", LOOPBACK, port, "-", "/healthz", "3000")
        ended = reset.get("goaway") is not None or reset.get("closed")
        passed &= bool(ended) and reset.get("status") is None
        details.append(f"rapid reset x3000: {'ended' if ended else 'SERVED'} ({reset.get('goaway') or reset.get('error')}) in {seconds:.1f} s")
        for kind in ("ping-flood", "settings-flood"):
            flood, seconds = h2_client(python, kind, LOOPBACK, port, "-", "200000")
            cut = (flood.get("closed") or flood.get("goaway") is not None) and flood.get("error") not in ("TimeoutError", "timeout")
            passed &= bool(cut)
            details.append(f"{kind}: {flood.get('sent')} sent, {'ended' if cut else 'NOT ENDED'} "
                           f"({flood.get('goaway') or flood.get('error')}) in {seconds:.1f} s")
        many, seconds = h2_client(python, "many", f"http://{LOOPBACK}:{port}/healthz", "-", server.owner, "300")
        passed &= many.get("statuses") == {"200": 300}
        details.append(f"300 at once on one connection: {many.get('statuses')} in {seconds:.1f} s")
        big = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "-H",
                              "X-Big: " + "b" * 20000, f"http://{LOOPBACK}:{port}/healthz"], capture_output=True, text=True, timeout=60)
        passed &= big.stdout == "431"
        details.append(f"20 KB header: {big.stdout}")
        healthz = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge",
                                  f"http://{LOOPBACK}:{port}/healthz"], capture_output=True, text=True, timeout=60)
        top = peak.stop()
        passed &= healthz.stdout == "200" and top - peak.start <= 20
        details.append(f"/healthz after: {healthz.stdout}; RSS {peak.start:.1f} -> peak {top:.1f} MB")
        RESULTS["http2"] = {"rapidReset": reset, "details": details}
        row("http2", "rapid reset, PING/SETTINGS floods, many streams, oversized headers: ended or bounded", passed, "; ".join(details))
    finally:
        server.stop()
        server.remove()


def h2_probe(python, server, token, device, seconds):
    """A well-behaved client on one h2 connection for `seconds` (clients.py probe), started now."""
    script = os.path.join(HERE, "..", "..", "Tests", "Support", "HTTP2Clients", "clients.py")
    return subprocess.Popen([python, script, "probe", f"http://{LOOPBACK}:{server.port}", token, "com.example.probe", device,
                             str(seconds), "0.2"], stdout=subprocess.PIPE, text=True)


def probe_ok(answer):
    """Every probe answered 200 with p99 at most 1 s."""
    return (not answer.get("failures") and all(key.endswith(" 200") for key in answer.get("statuses", {}))
            and answer["healthz"].get("count", 0) > 0 and answer["push"].get("count", 0) > 0
            and answer["healthz"].get("p99Ms", 1e9) <= 1000 and answer["push"].get("p99Ms", 1e9) <= 1000)


def open_files(server):
    try:
        return len(os.listdir(f"/proc/{server.pid}/fd"))
    except OSError:
        return 0


def hostile_row(options, python, name, outcome, arguments, judge, seconds, setup=None, rss_bound=100, settle=0.0, copies=1):
    """One hostile client (clients.py ARGUMENTS; PORT and TOKEN filled in) against a fresh server, a
    probe beside it for `seconds` and one after it; `judge(answer)` says whether the attack got the
    right answer. Memory: the peak over the start (at most `rss_bound` MB), or, after `settle` s, what
    is left. With `copies`, that many hostile clients at once, each on its own connection; `judge`
    then gets {"connections": [each client's answer]}. With --rows, only rows whose name holds one of
    its words run."""
    if options.rows and not any(word in name for word in options.rows.split(",")):
        return
    server = Server(options.chime)
    try:
        token = server.app("com.example.probe")
        device = server.json("GET", "/v1/apps/com.example.probe/device-token", token=token)["deviceToken"]
        extra = setup(server) if setup else {}
        peak = PeakRSS(server)
        files = [open_files(server)]
        sampling = threading.Event()

        def sample():
            while not sampling.is_set():
                files.append(open_files(server))
                time.sleep(0.1)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        during = h2_probe(python, server, token, device, seconds)
        filled = [argument.replace("PORT", str(server.port)).replace("TOKEN", extra.get("token", token)) for argument in arguments]
        if copies == 1:
            answer, took = h2_client(python, *filled, timeout=seconds + 120)
        else:
            answers = [None] * copies

            def attack(index):
                answers[index] = h2_client(python, *filled, timeout=seconds + 120)
            attackers = [threading.Thread(target=attack, args=(index,)) for index in range(copies)]
            for attacker in attackers:
                attacker.start()
            for attacker in attackers:
                attacker.join()
            if any(one is None for one in answers):
                raise RuntimeError(f"{name}: a hostile client failed")
            answer, took = {"connections": [one[0] for one in answers]}, max(one[1] for one in answers)
        probe_during = json.loads(during.communicate(timeout=seconds + 60)[0])
        if settle:
            time.sleep(settle)
        left = server.rss_mb()
        after, _ = h2_client(python, "probe", f"http://{LOOPBACK}:{server.port}", token, "com.example.probe", device, "2", "0.2")
        sampling.set()
        sampler.join()
        top = peak.stop()
        grown = (left if settle else top) - peak.start
        verdict, said = judge(answer)
        passed = verdict and probe_ok(probe_during) and probe_ok(after) and server.alive() and grown <= rss_bound
        row(name, outcome, passed,
            f"{said} in {took:.1f} s; probe during: healthz p50/p99/max {probe_during['healthz'].get('p50Ms')}/{probe_during['healthz'].get('p99Ms')}/"
            f"{probe_during['healthz'].get('maxMs')} ms, push {probe_during['push'].get('p50Ms')}/{probe_during['push'].get('p99Ms')}/"
            f"{probe_during['push'].get('maxMs')} ms, {sum(probe_during['statuses'].values())} answered, failed "
            f"{sum(probe_during['failures'].values())}; after: {'all 200' if probe_ok(after) else after}; RSS {peak.start:.0f} → peak {top:.0f} MB"
            + (f", {left:.0f} MB {settle:.0f} s after" if settle else "") + f"; open files {files[0]} → at most {max(files)}")
        RESULTS[name] = {"attack": answer, "probeDuring": probe_during, "probeAfter": after, "rssStartMB": round(peak.start, 1),
                         "rssPeakMB": round(top, 1), "rssLeftMB": round(left, 1), "openFilesMax": max(files)}
    finally:
        server.stop()
        server.remove()


def goaway_judge(*codes):
    def judge(answer):
        return answer.get("goaway") in codes, f"GOAWAY {answer.get('goaway')} after {answer.get('sent')} sent"
    return judge


def list_pages(server):
    """An app with 2,000 pending requests: a list page of 1,000 is about 1 MiB."""
    token = server.app("com.example.lists")
    for batch in range(40):
        server.json("POST", "/v1/apps/com.example.lists/requests", [
            {"identifier": f"p-{batch}-{index}", "title": "x" * 200, "body": "y" * 500, "trigger": {"type": "timeInterval", "timeInterval": 3600}}
            for index in range(50)], token=token, expect=(201,))
    return {"token": token}


def attack_http2_hostile(options):
    python = http2_python()
    local = ["127.0.0.1", "PORT", "-"]
    hostile_row(options, python, "h2 empty DATA", "2,000,000 empty DATA frames on one request", ["empty-frames", *local, "data", "2000000", "10"],
                goaway_judge("ENHANCE_YOUR_CALM"), 4)
    hostile_row(options, python, "h2 empty CONTINUATION", "empty CONTINUATION frames after a HEADERS frame",
                ["empty-frames", *local, "continuation", "1000000", "10"], goaway_judge("ENHANCE_YOUR_CALM"), 4)
    hostile_row(options, python, "h2 empty HEADERS", "zero-length HEADERS frames, a new stream each", ["empty-frames", *local, "headers", "1000000", "10"],
                goaway_judge("ENHANCE_YOUR_CALM", "PROTOCOL_ERROR"), 4)
    hostile_row(options, python, "h2 unasked PING acks", "PING acknowledgements nobody asked for, as fast as they go for 12 s", ["empty-frames", *local, "pings", "1000000000", "12"],
                lambda answer: (answer.get("goaway") in ("NO_ERROR", None) and answer.get("sent", 0) > 0,
                                f"{answer.get('sent'):,} frames sent, the connection ended at its idle deadline (GOAWAY {answer.get('goaway')} at {answer.get('goawayAt')} s)"), 12)
    hostile_row(options, python, "h2 CONTINUATION never ended", "64 CONTINUATION frames of 16 KB of header fields, END_HEADERS never set",
                ["endless-continuation", *local, "64", "16384"], lambda answer: (answer.get("goaway") == "ENHANCE_YOUR_CALM",
                                                                               f"GOAWAY {answer.get('goaway')} after {answer.get('sent')} frames"), 4)
    hostile_row(options, python, "h2 HPACK bomb", "a 4,000-byte header in the decoding table, then 200 requests of 16,000 references (64 MB each)",
                ["hpack-bomb", *local, "200", "16000"],
                lambda answer: (answer.get("first") == 200 and answer.get("goaway") == "ENHANCE_YOUR_CALM",
                                f"first request {answer.get('first')}, then GOAWAY {answer.get('goaway')}"), 4)

    def stalled(answer):
        ended = answer.get("unfinished") == 0 and answer.get("resets", {}).get("ENHANCE_YOUR_CALM") == answer.get("opened")
        return ended, (f"{answer.get('opened')} streams, {sum(answer.get('statuses', {}).values())} answered (headers only, "
                       f"{answer.get('dataBytes')} bytes of body), resets {answer.get('resets')}, GOAWAY {answer.get('goaway')}")

    hostile_row(options, python, "h2 stalled window", "128 list pages of 1 MiB asked on a connection whose stream windows are 0",
                ["stall", *local, "/v1/apps/com.example.lists/requests?limit=1000", "TOKEN", "128", "60", "stream"], stalled, 45,
                setup=list_pages, rss_bound=150, settle=5)
    hostile_row(options, python, "h2 stalled windows x4", "4 connections, each asking 128 list pages of 1 MiB with its stream windows 0",
                ["stall", *local, "/v1/apps/com.example.lists/requests?limit=1000", "TOKEN", "128", "60", "stream"],
                lambda answer: (all(stalled(one)[0] for one in answer["connections"]),
                                "; ".join(stalled(one)[1] for one in answer["connections"][:1]) + f" (x{len(answer['connections'])})"), 45,
                setup=list_pages, rss_bound=400, settle=5, copies=4)
    hostile_row(options, python, "h2 stalled connection window", "128 list pages of 1 MiB; the connection's 65,535 bytes left to run out",
                ["stall", *local, "/v1/apps/com.example.lists/requests?limit=1000", "TOKEN", "128", "60", "connection"],
                lambda answer: (answer.get("goaway") == "ENHANCE_YOUR_CALM", f"{sum(answer.get('statuses', {}).values())} answered, "
                                f"resets {answer.get('resets')}, GOAWAY {answer.get('goaway')} at {answer.get('goawayAt')} s"), 45,
                setup=list_pages, rss_bound=150, settle=5)
    hostile_row(options, python, "h2 stalled event stream", "an app's event stream on a connection whose stream windows are 0",
                ["stall", *local, "/v1/apps/com.example.probe/events", "TOKEN", "1", "60", "stream"], stalled, 45)
    hostile_row(options, python, "h2 idle", "200 connections: the preface, then nothing", ["idle", *local, "200", "30"],
                lambda answer: (answer.get("goaways") == {"NO_ERROR": 200}, f"{answer.get('closed')} ended between "
                                f"{answer.get('firstClosedAt')} and {answer.get('lastClosedAt')} s, GOAWAY {answer.get('goaways')}"), 14)
    hostile_row(options, python, "h2 dribble", "the preface and a request a byte every 0.2 s (23 s to send)", ["dribble", *local, "/healthz", "0.2", "40"],
                lambda answer: (answer.get("goaway") == "NO_ERROR" and not answer.get("statuses"),
                                f"GOAWAY {answer.get('goaway')} at {answer.get('goawayAt')} s after {answer.get('sentBytes')} of {answer.get('ofBytes')} bytes"), 14)
    hostile_row(options, python, "h2 crowd", "300 connections × 128 POST streams whose bodies never come",
                ["crowd", *local, "300", "128", "/v1/apps/com.example.probe/requests", "TOKEN", "60"],
                lambda answer: (answer.get("closed") == 300 and answer.get("goaways") == {"NO_ERROR": 300},
                                f"{answer.get('closed')} connections ended by {answer.get('lastClosedAt')} s, GOAWAY {answer.get('goaways')}, "
                                f"resets {answer.get('resets')}"), 34)


ATTACKS = {
    "slowloris": attack_slowloris,
    "slowloris-same": lambda options: attack_slowloris(options, same_address=True),
    "flood": attack_flood,
    "subscribers": attack_subscribers,
    "streams": attack_streams,
    "answers": attack_answers,
    "argv": attack_argv,
    "cross-port": attack_cross_port,
    "environment": attack_environment,
    "rebinding": attack_rebinding,
    "revocation": attack_revocation,
    "malformed": attack_malformed,
    "lists": attack_lists,
    "storage": attack_storage,
    "stores": attack_stores,
    "http2": attack_http2,
    "http2-hostile": attack_http2_hostile,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chime", default=".build/release/chime")
    parser.add_argument("--only", default=",".join(ATTACKS))
    parser.add_argument("--quick", action="store_true", help="smaller numbers, for a smoke run")
    parser.add_argument("--rows", default="", help="http2-hostile: only the rows whose name holds one of these comma-separated words (e.g. stalled)")
    parser.add_argument("--json", default=".build/abuse/results.json")
    options = parser.parse_args()
    options.slow, options.silent, options.probes = 1500, 1300, 50
    options.horde_seconds, options.settle = 40, 5
    options.apps, options.flood_connects = 10_000, 20_000
    options.subscribers, options.posts = 100, 100
    options.greedy_streams, options.answers = 800, 2_500
    options.pending, options.deliveries = 20_000, 1_200
    if options.quick:
        options.slow, options.silent, options.probes, options.horde_seconds, options.settle = 300, 300, 20, 15, 2
        options.apps, options.flood_connects, options.pending, options.deliveries = 500, 2000, 2000, 200
    limit = harness.raise_open_files()
    if limit < options.slow + options.silent + 256:
        sys.exit(f"the open-files limit is {limit}; the attacks need {options.slow + options.silent + 256}")
    started = time.time()
    for name in options.only.split(","):
        if name not in ATTACKS:
            sys.exit(f"unknown attack {name}; known: {', '.join(ATTACKS)}")
        print(f"{name}…", file=sys.stderr, flush=True)
        try:
            ATTACKS[name](options)
        except Exception as error:  # noqa: BLE001 - an attack that cannot run is a failed row
            row(name, f"could not run: {error}", False, "")
    widths = [max(len(str(r[i])) for r in ROWS + [("attack", "outcome", "met", "figures")]) for i in range(3)]
    print(f"Chime abuse run — {time.strftime('%Y-%m-%d %H:%M')} — {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} — "
          f"{time.time() - started:.0f} s")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(("attack", "outcome", "met"), widths)) + " | figures |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|---------|")
    for attack, outcome, met, figures in ROWS:
        print(f"| {attack.ljust(widths[0])} | {outcome.ljust(widths[1])} | {met.ljust(widths[2])} | {figures} |")
    os.makedirs(os.path.dirname(os.path.abspath(options.json)), exist_ok=True)
    with open(options.json, "w") as file:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "rows": ROWS, "results": RESULTS}, file, indent=2, default=str)
    return 0 if all(met != "NO" for _, _, met, _ in ROWS) else 1


if __name__ == "__main__":
    sys.exit(main())
