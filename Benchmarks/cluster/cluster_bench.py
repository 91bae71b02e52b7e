#!/usr/bin/env python3
"""Chime's cluster benchmark: PostgreSQL and 1, 2 and 3 `chime serve --database` nodes, against one
`chime serve` on SQLite measured the same way in the same run.

    cluster_bench.py [--chime PATH] [--dir DIR] [--nodes 1,2,3] [--only bulk,concurrent,burst,steady]
                     [--seconds S] [--burst N] [--rate R] [--steady-seconds S] [--quick] [--json FILE]

PostgreSQL is a server of the benchmark's own (Debian's binaries, initdb into a fresh directory
under --dir, as the postgres user when run as root, a free loopback port, PostgreSQL's default
durability: every commit is flushed to disk). Each measurement gets a fresh database (or, for
SQLite, a fresh data directory) and fresh nodes; one app is registered through the first node.

8a. bulk adds/s: one wrk per node at once (Benchmarks/http/add.lua, arrays of 100 requests),
    8 connections in all, due in 1 to 30 days.
8b. concurrent adds/s: the same with one request per POST and 64 connections in all.
8c. 100,000 due at one instant: loaded through every node (calendar triggers for one exact second,
    UTC), then the time from that second until nothing is pending (GET /metrics, polled every
    25 ms), and a check that each was delivered once: the log holds exactly one `delivered` event
    per request and the delivered list one row per request.
8d. steady 10,000/s: requests due at exact instants 100 µs apart for --steady-seconds, loaded
    beforehand through every node; a subscriber on the first node's event stream measures lateness
    = when it read the delivery − when it was due (so it includes the event's way to a client).
    With two or more nodes it runs twice: as is, and with the second node killed with SIGKILL a
    third of the way in and started again at half-way. Exactly once: the stream carried every
    request's delivery once (the log keeps only the newest 100,000 events), and the delivered list
    has one row per request.

Every figure comes with where the two cores went: PostgreSQL's processes, the nodes, the load
generator (wrk, this script) and the rest of the machine. Figures are merged into --json under
"cluster"; a table goes to stdout, progress to stderr.
"""
import argparse
import calendar
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "http"))
import http_bench as hb  # noqa: E402  (progress, the machine's load, process accounting, cleanup)

APP = "com.example.cluster"
progress = hb.progress
DELIVERED_DATE = re.compile(rb'"date":"([^"]+)"')
DELIVERED_ID = re.compile(rb'"identifier":"([^"]+)"')


def fail(message):
    progress.done("cluster-bench: " + message)
    sys.exit(1)


def stop_process(process, sig, timeout):
    """Sends `sig` and waits up to `timeout` seconds, then SIGKILL."""
    if process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# MARK: - PostgreSQL


class Postgres:
    """A PostgreSQL server of the benchmark's own, with PostgreSQL's default durability."""

    def __init__(self, parent):
        versions = sorted((int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit()), reverse=True) \
            if os.path.isdir("/usr/lib/postgresql") else []
        self.bin = next((f"/usr/lib/postgresql/{v}/bin" for v in versions if os.path.exists(f"/usr/lib/postgresql/{v}/bin/initdb")), None)
        if not self.bin:
            fail("PostgreSQL's initdb was not found in /usr/lib/postgresql/*/bin; run scripts/install-deps.sh bench")
        self.dir = tempfile.mkdtemp(prefix="chime-pg-", dir=parent)
        self.as_postgres = os.getuid() == 0
        if self.as_postgres:
            user = pwd.getpwnam("postgres")
            os.chown(self.dir, user.pw_uid, user.pw_gid)
        self.run(["initdb", "-D", self.dir + "/data", "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        self.port = free_port()
        log = open(self.dir + "/log", "ab")
        if self.as_postgres:
            os.chown(self.dir + "/log", pwd.getpwnam("postgres").pw_uid, pwd.getpwnam("postgres").pw_gid)
        self.process = subprocess.Popen(self.command(["postgres", "-D", self.dir + "/data", "-c", "listen_addresses=127.0.0.1",
                                                      "-p", str(self.port), "-c", "unix_socket_directories=", "-c", "max_connections=200"]),
                                        stdout=log, stderr=log, stdin=subprocess.DEVNULL, cwd="/")
        hb.LIVE.append(self.process)
        deadline = time.monotonic() + 60
        while True:
            try:
                lines = open(self.dir + "/data/postmaster.pid").read().split("\n")
                if len(lines) > 7 and lines[7].strip() == "ready":
                    break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                fail(f"PostgreSQL did not start; see {self.dir}/log")
            time.sleep(0.02)
        self.counter = 0
        self.version = self.sql("SHOW server_version").strip()

    def command(self, arguments):
        program = [f"{self.bin}/{arguments[0]}"] + arguments[1:]
        return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + program if self.as_postgres else program

    def run(self, arguments):
        result = subprocess.run(self.command(arguments), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd="/", timeout=120)
        if result.returncode != 0:
            fail(f"{arguments[0]} failed: {result.stdout.decode(errors='replace')[-1500:]}")

    def url(self, database="postgres"):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def sql(self, text, database="postgres"):
        result = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", self.url(database), "-c", text],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        if result.returncode != 0:
            fail(f"psql failed: {result.stdout.decode(errors='replace')[-1500:]}")
        return result.stdout.decode()

    def database(self):
        self.counter += 1
        name = f"bench{self.counter}"
        self.sql(f"CREATE DATABASE {name}")
        return name

    def pids(self):
        """The postmaster and its children (backends, writers)."""
        out = [self.process.pid]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    text = open(f"/proc/{entry}/stat").read()
                except OSError:
                    continue
                if int(text[text.rfind(")") + 2:].split()[1]) == self.process.pid:
                    out.append(int(entry))
        return out

    def stop(self):
        stop_process(self.process, signal.SIGINT, 30)  # fast shutdown
        shutil.rmtree(self.dir, ignore_errors=True)


# MARK: - Nodes


class Node:
    """`chime serve` on a data directory of its own: on SQLite there, or on `database` (a URL)."""

    def __init__(self, chime, parent, database=None, directory=None):
        self.chime = chime
        self.database = database
        self.dir = directory or tempfile.mkdtemp(prefix="chime-node-", dir=parent)
        self.process = None

    def start(self):
        info_path = os.path.join(self.dir, "server.json")
        if os.path.exists(info_path):
            os.unlink(info_path)
        # Every delivery is kept (the service's default keeps an app's newest 10,000), so 8c and 8d
        # can check the delivered list holds each request once.
        arguments = [self.chime, "serve", "--data", self.dir, "--listen", "127.0.0.1:0", "--auto-allow", "--app-max-delivered", "0"]
        if self.database:
            arguments += ["--database", self.database]
        log = open(os.path.join(self.dir, "server.log"), "ab")
        self.process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL)
        hb.LIVE.append(self.process)
        deadline = time.monotonic() + 30
        while True:
            try:
                info = json.load(open(info_path))
                if info.get("pid") == self.process.pid:
                    break
            except (OSError, ValueError):
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                fail(f"chime serve did not start; see {self.dir}/server.log")
            time.sleep(0.02)
        self.url = info["url"]
        self.host, port = self.url.split("//", 1)[1].rsplit(":", 1)
        self.port = int(port)

    @property
    def pid(self):
        return self.process.pid

    def call(self, method, path, token, body=None, timeout=60):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        headers = {"Authorization": "Bearer " + token}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def metrics(self, token):
        status, payload = self.call("GET", "/metrics", token)
        if status != 200:
            fail(f"GET /metrics answered {status}")
        return hb.parse_metrics(payload)

    def kill9(self):
        self.process.kill()
        self.process.wait()

    def stop(self):
        if self.process:
            stop_process(self.process, signal.SIGTERM, 60)


class Cluster:
    """`count` nodes on a fresh database (or one node on SQLite), an app registered and allowed."""

    def __init__(self, options, postgres, store, count):
        self.postgres = postgres
        self.store = store
        self.database = postgres.database() if store == "postgresql" else None
        url = postgres.url(self.database) if self.database else None
        self.nodes = [Node(options.chime, options.dir, url) for _ in range(count)]
        self.nodes[0].start()
        self.owner = open(os.path.join(self.nodes[0].dir, "owner-token")).read().strip()
        for node in self.nodes[1:]:
            shutil.copy(os.path.join(self.nodes[0].dir, "owner-token"), os.path.join(node.dir, "owner-token"))
            node.start()
        status, payload = self.nodes[0].call("POST", "/v1/apps", self.owner, json.dumps({"bundleIdentifier": APP}))
        if status != 201:
            fail(f"registering the app: {status} {payload[:200]!r}")
        self.token = json.loads(payload)["token"]
        status, payload = self.nodes[-1].call("POST", f"/v1/apps/{APP}/authorization", self.token, "{}")
        if status != 200:
            fail(f"authorization: {status} {payload[:200]!r}")

    def stop(self):
        for node in self.nodes:
            node.stop()

    def remove(self):
        for node in self.nodes:
            shutil.rmtree(node.dir, ignore_errors=True)

    def delivered_once(self):
        """(delivered events in the log, rows in the delivered list), after the nodes stopped."""
        if self.database:
            events = int(self.postgres.sql("SELECT count(*) FROM chime_events WHERE kind = 'delivered'", self.database))
            rows = int(self.postgres.sql("SELECT count(*) FROM chime_delivered", self.database))
            return events, rows
        database = sqlite3.connect(f"file:{self.nodes[0].dir}/chime.sqlite?mode=ro", uri=True)
        try:
            (events,) = database.execute("SELECT count(*) FROM events WHERE kind = 'delivered'").fetchone()
            (rows,) = database.execute("SELECT count(*) FROM delivered").fetchone()
        finally:
            database.close()
        return events, rows


class Usage:
    """Where the cores went during a measurement: PostgreSQL, the nodes, the load generator, the rest."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.t0 = time.monotonic()
        self.sys0 = hb.system_ticks()
        self.nodes0 = {node.pid: hb.proc_ticks(node.pid) for node in cluster.nodes}
        self.pg0 = {pid: hb.proc_ticks(pid) for pid in cluster.postgres.pids()} if cluster.database else {}
        self.self0 = time.process_time()

    def finish(self, generator_seconds=0.0):
        wall = time.monotonic() - self.t0
        busy1, total1 = hb.system_ticks()
        busy0, total0 = self.sys0
        cores = hb.machine()["nproc"]
        machine = (busy1 - busy0) / max(1, total1 - total0) * cores
        nodes = sum(hb.proc_ticks(node.pid) - self.nodes0.get(node.pid, 0) for node in self.cluster.nodes) / hb.TICKS / wall
        pg = 0.0
        if self.cluster.database:
            pg = sum(hb.proc_ticks(pid) - self.pg0.get(pid, 0) for pid in self.cluster.postgres.pids()) / hb.TICKS / wall
        generator = (generator_seconds + time.process_time() - self.self0) / wall
        return {"wallSeconds": round(wall, 2), "coresBusy": round(machine, 2), "postgresCores": round(pg, 2), "nodeCores": round(nodes, 2),
                "generatorCores": round(generator, 2), "otherCores": round(max(0.0, machine - pg - nodes - generator), 2),
                "loadavg1": hb.loadavg()}


def describe(cpu):
    return (f"cores busy {cpu['coresBusy']:.2f}/{hb.machine()['nproc']}: PostgreSQL {cpu['postgresCores']:.2f}, nodes {cpu['nodeCores']:.2f}, "
            f"load generator {cpu['generatorCores']:.2f}, other {cpu['otherCores']:.2f}")


def limit(cpu):
    """What the figure ran into: a resource within 15% of the whole machine, else the latency of one commit."""
    cores = hb.machine()["nproc"]
    parts = {"PostgreSQL": cpu["postgresCores"], "the nodes": cpu["nodeCores"], "the load generator": cpu["generatorCores"]}
    if cpu["coresBusy"] >= cores * 0.85:
        biggest = max(parts, key=parts.get)
        return f"the {cores} cores (most to {biggest})"
    return "waiting, not CPU (commit latency, claims, round trips)"


# MARK: - Loading


def request_json(identifier, trigger):
    return ('{"identifier":"%s","content":{"title":"Reminder","body":"Time to stretch, drink some water and look away from the screen.",'
            '"sound":"default","threadIdentifier":"cluster","userInfo":{"task":"%s","note":"%s"}},"trigger":%s}'
            % (identifier, identifier, "n" * 120, trigger))


def exact(instant):
    """A calendar trigger for one exact instant (UTC, to the nanosecond)."""
    whole = int(instant)
    t = time.gmtime(whole)
    nanosecond = int(round((instant - whole) * 1e9))
    return ('{"type":"calendar","dateComponents":{"year":%d,"month":%d,"day":%d,"hour":%d,"minute":%d,"second":%d,"nanosecond":%d,'
            '"timeZone":"UTC"}}' % (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, nanosecond))


def load(cluster, items, label, batch=100):
    """POSTs `items` ((identifier, trigger JSON)) in arrays of `batch` (under the 64 KiB body limit), two threads per node; returns seconds."""
    batches = [items[i:i + batch] for i in range(0, len(items), batch)]
    lock = threading.Lock()
    state = {"next": 0, "done": 0, "failed": None}

    def worker(node):
        connection = http.client.HTTPConnection(node.host, node.port, timeout=120)
        headers = {"Authorization": "Bearer " + cluster.token, "Content-Type": "application/json"}
        while True:
            with lock:
                if state["next"] >= len(batches) or state["failed"]:
                    break
                index = state["next"]
                state["next"] += 1
            body = "[" + ",".join(request_json(identifier, trigger) for identifier, trigger in batches[index]) + "]"
            connection.request("POST", f"/v1/apps/{APP}/requests", body=body.encode(), headers=headers)
            response = connection.getresponse()
            payload = response.read()
            with lock:
                if response.status != 201:
                    state["failed"] = f"{response.status} {payload[:200]!r}"
                state["done"] += len(batches[index])
            progress.update(f"{label}: loading {state['done']:,}/{len(items):,}")
        connection.close()

    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(node,)) for node in cluster.nodes for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if state["failed"]:
        fail(f"{label}: loading failed: {state['failed']}")
    return time.monotonic() - start


def sleep_until(instant):
    while True:
        left = instant - time.time()
        if left <= 0:
            return
        time.sleep(min(left, 0.5))


# MARK: - Measurements


def bench_adds(options, postgres, store, count, mode):
    """8a (mode bulk) or 8b (mode add): one wrk per node at once."""
    cluster = Cluster(options, postgres, store, count)
    connections = 8 if mode == "bulk" else 64
    per_node = max(1, connections // count)
    label = f"{'bulk' if mode == 'bulk' else 'concurrent'} adds, {store} × {count}"
    progress.update(f"{label}: {options.seconds} s", force=True)
    usage = Usage(cluster)
    processes = []
    run = f"r{int(time.time() * 1000)}"
    for index, node in enumerate(cluster.nodes):
        out = os.path.join(node.dir, f"wrk-{mode}.json")
        env = dict(os.environ, CHIME_MODE=mode, CHIME_APP=APP, CHIME_TOKEN=cluster.token, CHIME_BULK="100",
                   CHIME_RUN=f"{run}-{index}", CHIME_JSON=out)
        command = ["wrk", "-t", "1", "-c", str(per_node), "-d", f"{options.seconds}s", "--timeout", "10s",
                   "-s", os.path.join(HERE, "..", "http", "add.lua"), node.url]
        processes.append((subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT), out))
    generator = 0.0
    adds = 0
    seconds = 0.0
    for process, out in processes:
        output = process.stdout.read()
        _, status, resources = os.wait4(process.pid, 0)
        generator += resources.ru_utime + resources.ru_stime
        if os.waitstatus_to_exitcode(status) != 0 or not os.path.exists(out):
            fail(f"{label}: wrk failed: {output.decode(errors='replace')[-1500:]}")
        summary = json.load(open(out))
        adds += (summary["requests"] - summary["errorsStatus"]) * (100 if mode == "bulk" else 1)
        seconds = max(seconds, summary["durationUs"] / 1e6)
    cpu = usage.finish(generator)
    pending = int(cluster.nodes[0].metrics(cluster.owner).get("chime_pending", 0))
    cluster.stop()
    cluster.remove()
    rate = adds / seconds if seconds else 0.0
    progress.done(f"{label}: {rate:,.0f} adds/s ({adds:,} in {seconds:.1f} s; {pending:,} pending after); {describe(cpu)}")
    if pending < adds:
        fail(f"{label}: {adds:,} adds were acknowledged but only {pending:,} are pending")
    return {"rate": rate, "adds": adds, "seconds": seconds, "connections": connections, "cpu": cpu, "limit": limit(cpu)}


def bench_burst(options, postgres, store, count, bulk_rate):
    """8c: `options.burst` due at one instant."""
    cluster = Cluster(options, postgres, store, count)
    label = f"{options.burst:,} due at one instant, {store} × {count}"
    instant = int(time.time() + 5 + 1.5 * options.burst / max(bulk_rate, 2000)) + 1
    trigger = exact(instant)
    loaded = load(cluster, [(f"b{i}", trigger) for i in range(options.burst)], label)
    early = instant - time.time()
    if early < 0.5:
        fail(f"{label}: loading took {loaded:.1f} s and ended {-early:.1f} s after the due instant; raise the margin")
    progress.update(f"{label}: loaded in {loaded:.1f} s, waiting {early:.1f} s for the instant", force=True)
    sleep_until(instant - 0.3)
    usage = Usage(cluster)
    sleep_until(instant)
    done = None
    deadline = time.time() + 120
    while time.time() < deadline:
        if cluster.nodes[0].metrics(cluster.owner).get("chime_pending", 1) == 0:
            done = time.time()
            break
        time.sleep(0.025)
    cpu = usage.finish()
    if done is None:
        fail(f"{label}: still pending 120 s after the instant")
    cluster.stop()
    events, rows = cluster.delivered_once()
    cluster.remove()
    once = events == options.burst and rows == options.burst
    elapsed = done - instant
    progress.done(f"{label}: all delivered {elapsed * 1000:,.0f} ms after the instant; log {events:,} deliveries, list {rows:,} "
                  f"({'each once' if once else 'NOT each once'}); {describe(cpu)}")
    return {"seconds": elapsed, "count": options.burst, "deliveredEvents": events, "deliveredRows": rows, "eachOnce": once,
            "cpu": cpu, "limit": limit(cpu)}


class Subscriber:
    """The first node's event stream: lateness of each delivery as this process reads it."""

    def __init__(self, node, token, expected):
        self.expected = expected
        self.lateness = []
        self.seen = set()
        self.duplicates = 0
        self.stopping = False
        self.ready = threading.Event()
        self.connection = http.client.HTTPConnection(node.host, node.port, timeout=300)
        self.connection.request("GET", f"/v1/apps/{APP}/events", headers={"Authorization": "Bearer " + token, "Accept": "text/event-stream"})
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            fail(f"event stream: {self.response.status}")
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    @staticmethod
    def parse(text):
        whole, _, fraction = text.rstrip("Z").partition(".")
        return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + (float("0." + fraction) if fraction else 0.0)

    def run(self):
        while not self.stopping and len(self.seen) < self.expected:
            line = self.response.readline()
            if not line:
                break
            if not line.startswith(b"data: "):
                continue
            received = time.time()
            if b'"kind":"delivered"' not in line:
                continue
            identifier = DELIVERED_ID.search(line)
            due = DELIVERED_DATE.search(line)
            if not identifier or not due:
                continue
            if identifier.group(1) in self.seen:
                self.duplicates += 1
                continue
            self.seen.add(identifier.group(1))
            self.lateness.append(received - self.parse(due.group(1).decode()))

    def stop(self):
        self.stopping = True
        try:
            self.connection.sock.shutdown(2)
        except OSError:
            pass
        self.thread.join(timeout=10)


def bench_steady(options, postgres, store, count, bulk_rate, kill):
    """8d: `options.rate`/s due for `options.steady_seconds`, optionally killing the second node."""
    cluster = Cluster(options, postgres, store, count)
    total = options.rate * options.steady_seconds
    label = f"steady {options.rate:,}/s, {store} × {count}{', a node killed' if kill else ''}"
    start = int(time.time() + 5 + 1.5 * total / max(bulk_rate, 2000)) + 1
    items = [(f"s{i}", exact(start + i / options.rate)) for i in range(total)]
    loaded = load(cluster, items, label)
    if start - time.time() < 0.5:
        fail(f"{label}: loading took {loaded:.1f} s and ended after the first due instant; raise the margin")
    subscriber = Subscriber(cluster.nodes[0], cluster.token, total)
    sleep_until(start - 0.2)
    usage = Usage(cluster)
    events = []
    if kill:
        def killer():
            sleep_until(start + options.steady_seconds / 3)
            cluster.nodes[1].kill9()
            events.append(("killed", time.time() - start))
            sleep_until(start + options.steady_seconds / 2)
            cluster.nodes[1].start()
            events.append(("restarted", time.time() - start))
        chaos = threading.Thread(target=killer)
        chaos.start()
    end = start + options.steady_seconds
    while time.time() < end + 60 and len(subscriber.seen) < total:
        progress.update(f"{label}: {len(subscriber.seen):,}/{total:,} delivered")
        time.sleep(0.25)
    if kill:
        chaos.join()
    cpu = usage.finish()
    subscriber.stop()
    cluster.stop()
    logged, rows = cluster.delivered_once()
    cluster.remove()
    ordered = sorted(subscriber.lateness)

    def percentile(p):
        return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else float("nan")

    missed = total - len(subscriber.seen)
    # The log keeps the newest 100,000 events, fewer than a steady run delivers: here "once" is
    # what the stream showed (each identifier exactly once) and the delivered list's row count.
    once = missed == 0 and subscriber.duplicates == 0 and rows == total
    result = {"rate": options.rate, "seconds": options.steady_seconds, "count": total, "received": len(ordered), "missed": missed,
              "duplicatesOnStream": subscriber.duplicates, "p50": percentile(0.5), "p99": percentile(0.99),
              "max": ordered[-1] if ordered else float("nan"), "deliveredEvents": logged, "deliveredRows": rows, "eachOnce": once,
              "killed": kill, "chaos": events, "cpu": cpu, "limit": limit(cpu)}
    progress.done(f"{label}: lateness p50 {result['p50'] * 1000:.1f} ms, p99 {result['p99'] * 1000:.1f} ms, max {result['max'] * 1000:.1f} ms; "
                  f"missed on the stream {missed}, twice {subscriber.duplicates}; delivered list {rows:,} "
                  f"({'each once' if once else 'NOT each once'}){'; ' + ', '.join(f'{k} at {t:.1f} s' for k, t in events) if events else ''}; "
                  f"{describe(cpu)}")
    return result


# MARK: - Main


def main():
    parser = argparse.ArgumentParser(description="Chime's cluster benchmark: PostgreSQL and 1–3 nodes against SQLite")
    parser.add_argument("--chime", default=".build/release/chime")
    parser.add_argument("--dir", default="Benchmarks/out/stores")
    parser.add_argument("--nodes", default="1,2,3")
    parser.add_argument("--only", default="bulk,concurrent,burst,steady")
    parser.add_argument("--seconds", type=int, default=20, help="wrk duration for 8a and 8b")
    parser.add_argument("--burst", type=int, default=100_000)
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--steady-seconds", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="short runs: 5 s, 20,000 due at once, 2,000/s for 5 s")
    parser.add_argument("--json")
    options = parser.parse_args()
    if options.quick:
        options.seconds, options.burst, options.rate, options.steady_seconds = 5, 20_000, 2_000, 5
    os.makedirs(options.dir, exist_ok=True)
    options.dir = os.path.abspath(options.dir)
    only = set(options.only.split(","))
    counts = [int(n) for n in options.nodes.split(",")]
    configurations = [("sqlite", 1)] + [("postgresql", n) for n in counts]

    postgres = Postgres(options.dir)
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    results = {"started": started, "machine": hb.machine(), "postgres": postgres.version, "configurations": {}}
    progress.done(f"cluster-bench: PostgreSQL {postgres.version} on port {postgres.port}; {hb.machine()}")
    try:
        for store, count in configurations:
            key = f"{store}×{count}"
            entry = results["configurations"].setdefault(key, {})
            bulk_rate = 20_000
            if "bulk" in only:
                entry["bulk"] = bench_adds(options, postgres, store, count, "bulk")
                bulk_rate = entry["bulk"]["rate"]
            if "concurrent" in only:
                entry["concurrent"] = bench_adds(options, postgres, store, count, "add")
            if "burst" in only:
                entry["burst"] = bench_burst(options, postgres, store, count, bulk_rate)
            if "steady" in only:
                entry["steady"] = bench_steady(options, postgres, store, count, bulk_rate, kill=False)
                if store == "postgresql" and count >= 2:
                    entry["steadyKilled"] = bench_steady(options, postgres, store, count, bulk_rate, kill=True)
    finally:
        postgres.stop()
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    print_table(results, options)
    if options.json:
        merged = {}
        if os.path.exists(options.json):
            try:
                merged = json.load(open(options.json))
            except ValueError:
                merged = {}
        merged["cluster"] = results
        json.dump(merged, open(options.json, "w"), indent=2)
    failed = [f"{key} {name}" for key, entry in results["configurations"].items() for name, value in entry.items()
              if isinstance(value, dict) and value.get("eachOnce") is False]
    if failed:
        fail(f"not delivered exactly once: {', '.join(failed)}")


def print_table(results, options):
    configurations = results["configurations"]
    keys = list(configurations)
    sqlite = configurations.get("sqlite×1", {})
    header = "| measurement | " + " | ".join(k.replace("postgresql", "PostgreSQL").replace("sqlite", "SQLite") + (" node" if k.endswith("×1") else " nodes")
                                            for k in keys) + " |"
    print(header)
    print("|" + "---|" * (len(keys) + 1))

    def row(title, name, value, ratio):
        cells = []
        for key in keys:
            entry = configurations[key].get(name)
            if not entry:
                cells.append("")
                continue
            text = value(entry)
            base = sqlite.get(name if name != "steadyKilled" else "steady")
            if key != "sqlite×1" and base and ratio(entry, base):
                text += f" ({ratio(entry, base)})"
            cells.append(text + f"<br>limit: {entry['limit']}")
        print(f"| {title} | " + " | ".join(cells) + " |")

    row("8a. bulk adds/s (arrays of 100, 8 connections)", "bulk", lambda e: f"{e['rate']:,.0f}/s", lambda e, b: f"×{e['rate'] / b['rate']:.2f}")
    row("8b. concurrent adds/s (1 per POST, 64 connections)", "concurrent", lambda e: f"{e['rate']:,.0f}/s",
        lambda e, b: f"×{e['rate'] / b['rate']:.2f}")
    row(f"8c. {options.burst:,} due at one instant → all delivered", "burst",
        lambda e: f"{e['seconds'] * 1000:,.0f} ms{'' if e['eachOnce'] else ' NOT once'}", lambda e, b: f"×{e['seconds'] / b['seconds']:.2f}")
    row(f"8d. steady {options.rate:,}/s: lateness p50 / p99", "steady",
        lambda e: f"{e['p50'] * 1000:.1f} / {e['p99'] * 1000:.1f} ms{'' if e['eachOnce'] else ' NOT once'}",
        lambda e, b: f"p99 ×{e['p99'] / b['p99']:.2f}")
    row("8d. the same, the second node killed and restarted", "steadyKilled",
        lambda e: f"{e['p50'] * 1000:.1f} / {e['p99'] * 1000:.1f} ms (max {e['max'] * 1000:.0f}){'' if e['eachOnce'] else ' NOT once'}",
        lambda e, b: f"p99 ×{e['p99'] / b['p99']:.2f}")


if __name__ == "__main__":
    main()
