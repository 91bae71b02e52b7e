#!/usr/bin/env python3
"""Web Push fan-out: one delivery to 1,000 and 10,000 subscribed devices (issue 23).

For each size N, on this machine's loopback only:

1. A push-service double (Tests/Support/CryptoInterop/push_service.py) hands out N subscriptions
   (each with its own P-256 key and auth secret, as a browser's `PushSubscription.toJSON()`).
2. A fresh release `chime serve` (`--web-push-endpoints` listing the double) gets them through
   `POST /v1/web-push/subscriptions` (the owner's token; one app each).
3. Timed: one `POST /v1/apps/{app}/requests` of a notification with a title, a body and the Alarm
   category; the clock stops when the double has received all N pushes. Reported: the time to the
   last push, the 50th/99th percentile of arrival, pushes per second, and chime serve's CPU time
   divided by N (µs per push: encryption, VAPID, HTTP, the store's push queue).
4. Checked: every push answered 201 by the double, one in 50 (and the first) decrypted by http_ece
   with the subscriber's key and its VAPID token verified by PyJWT (as in the tests).

The peer, in the same run against the same double and subscriptions: pywebpush (the Python
library a self-hosted service typically sends Web Push with), 64 threads each with its own
keep-alive session, sending a payload of the same size. Its wall time and its own CPU time per
push give the ratios Chime/pywebpush.

    webpush_bench.py --chime .build/release/chime [--sizes 1000,10000] [--quick] [--json FILE]

Writes a table to stdout and the figures as JSON (Benchmarks/out/webpush.json by default).
"""
import argparse
import base64
import concurrent.futures
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks", "http"))
from http_bench import proc_ticks, request  # noqa: E402 (the HTTP benchmark's helpers)
DOUBLE = os.path.join(ROOT, "Tests", "Support", "CryptoInterop", "push_service.py")
APP = "com.example.alarm"
TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_EVERY = 50
LIVE = []


def fail(message):
    print(f"webpush-bench: {message}", file=sys.stderr)
    for process in LIVE:
        if process.poll() is None:
            process.kill()
    sys.exit(1)


def say(text):
    """Progress on stderr: one line each, whatever stderr is."""
    print(f"webpush-bench: {text}", file=sys.stderr, flush=True)


def call(host, port, method, path, token=None, body=None, timeout=120):
    return request(host, port, method, path, token, body, timeout)


def wait_for_file(path, process, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if process.poll() is not None:
            fail(f"{what} exited with {process.returncode}")
        if time.monotonic() > deadline:
            fail(f"{what} did not start in {seconds} s")
        time.sleep(0.05)
    with open(path) as file:
        return json.load(file)


class Double:
    """The push-service double, in its own process."""

    def __init__(self, python, directory):
        port_file = os.path.join(directory, "double.json")
        self.log = open(os.path.join(directory, "double.log"), "ab")
        self.process = subprocess.Popen([python, DOUBLE, port_file], stdout=subprocess.DEVNULL, stderr=self.log)
        LIVE.append(self.process)
        self.port = wait_for_file(port_file, self.process, "the push-service double")["port"]
        self.origin = f"http://127.0.0.1:{self.port}"

    def call(self, method, path, body=None, timeout=120):
        status, payload = call("127.0.0.1", self.port, method, path, body=body, timeout=timeout)
        if status != 200:
            fail(f"the double answered {status} to {method} {path}: {payload[:200]!r}")
        return json.loads(payload) if payload else None

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.log.close()


class Chime:
    """A fresh release `chime serve` that may push to the double."""

    def __init__(self, binary, directory, double_origin):
        self.dir = tempfile.mkdtemp(prefix="chime-webpush-", dir=directory)
        self.log = open(os.path.join(self.dir, "server.log"), "ab")
        # WEBPUSH_BENCH_PERF=FILE profiles the server (perf record -g; its CPU figure is then perf's own).
        profile = ["perf", "record", "-q", "-g", "-o", os.environ["WEBPUSH_BENCH_PERF"], "--"] if os.environ.get("WEBPUSH_BENCH_PERF") else []
        self.process = subprocess.Popen(
            profile + [binary, "serve", "--data", self.dir, "--listen", "127.0.0.1:0", "--auto-allow", "--desktop", "off",
             "--web-push-endpoints", double_origin + "/", "--web-push-contact", "mailto:bench@example.org"],
            stdout=subprocess.DEVNULL, stderr=self.log, stdin=subprocess.DEVNULL)
        LIVE.append(self.process)
        info = wait_for_file(os.path.join(self.dir, "server.json"), self.process, "chime serve")
        self.host, port = info["url"].split("//", 1)[1].rsplit(":", 1)
        self.port = int(port)
        with open(os.path.join(self.dir, "owner-token")) as file:
            self.owner = file.read().strip()

    def call(self, method, path, token=None, body=None, expect=(200, 201)):
        status, payload = call(self.host, self.port, method, path, token=token or self.owner, body=body)
        if status not in expect:
            fail(f"chime serve answered {status} to {method} {path}: {payload[:300]!r}")
        return json.loads(payload) if payload else None

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self.log.close()
        if code != 0:
            fail(f"chime serve exited {code} on SIGTERM; log in {self.dir}")
        shutil.rmtree(self.dir, ignore_errors=True)


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def check_sample(records, count, origin):
    """Every push 201; the sampled ones decrypted by http_ece and their VAPID verified by PyJWT."""
    if len(records) < count:
        fail(f"only {len(records)} of {count} pushes reached the double")
    statuses = {record["status"] for record in records}
    if statuses != {201}:
        fail(f"the double answered {statuses}")
    sampled = [record for record in records if "vapid" in record]
    bad = [record for record in sampled if not record["vapid"].get("ok") or "payload" not in record]
    if not sampled or bad:
        fail(f"{len(bad)} of {len(sampled)} sampled pushes did not decrypt or verify: {bad[:1]}")
    audiences = {record["vapid"]["claims"]["aud"] for record in sampled}
    if audiences != {origin}:
        fail(f"VAPID audiences {audiences}, expected {origin}")
    return len(sampled), sampled[0].get("plaintextSize", 0), sampled[0]["size"]


def run_chime(binary, double, directory, count):
    chime = Chime(binary, directory, double.origin)
    try:
        status, payload = call(chime.host, chime.port, "POST", "/v1/apps", token=chime.owner, body={"bundleIdentifier": APP})
        if status != 201:
            fail(f"POST /v1/apps answered {status}: {payload[:200]!r}")
        token = json.loads(payload)["token"]
        chime.call("POST", f"/v1/apps/{APP}/authorization", token=token, body={"options": ["alert", "sound", "badge"]})
        chime.call("PUT", f"/v1/apps/{APP}/categories", token=token, body=[{
            "identifier": "alarm.category",
            "actions": [{"identifier": "snooze", "title": "Snooze 5 Sec", "options": []},
                        {"identifier": "comment", "title": "Add Comment", "options": [],
                         "textInputButtonTitle": "Add", "textInputPlaceholder": "Add Comment Here"}]}])
        double.call("POST", "/sample", {"every": SAMPLE_EVERY})
        subscriptions = []
        for index in range(count):
            subscription = double.call("POST", "/subscribe")
            subscription["name"] = f"device {index + 1}"
            subscription["apps"] = [APP]
            chime.call("POST", "/v1/web-push/subscriptions", body=subscription)
            subscriptions.append(subscription)
            if (index + 1) % 1000 == 0 or index + 1 == count:
                say(f"chime, {count}: {index + 1} of {count} subscriptions registered")
        double.call("POST", "/reset")
        ticks0 = proc_ticks(chime.process.pid)
        start = time.time()
        chime.call("POST", f"/v1/apps/{APP}/requests", token=token, body=[{
            "identifier": "wake-up", "title": "Alarm", "subtitle": "First Alarm",
            "body": "Wake up, the alarm you set for 07:00 is ringing", "sound": "default",
            "categoryIdentifier": "alarm.category"}])
        records = double.call("GET", f"/wait?count={count}&timeout=300", timeout=330)
        # The server's CPU once the last push is in (its queue rows are finished just after).
        time.sleep(0.2)
        ticks1 = proc_ticks(chime.process.pid)
        sampled, plaintext, size = check_sample(records, count, double.origin)
        arrivals = [record["time"] - start for record in records]
        return {
            "pushes": count, "seconds": round(max(arrivals), 3), "p50": round(percentile(arrivals, 0.5), 3),
            "p99": round(percentile(arrivals, 0.99), 3), "perSecond": round(count / max(arrivals)),
            "cpuMicrosecondsPerPush": round((ticks1 - ticks0) / TICKS / count * 1e6, 1),
            "checked": sampled, "plaintextBytes": plaintext, "encryptedBytes": size,
        }, subscriptions
    finally:
        chime.stop()


def run_peer(double, subscriptions, plaintext_bytes):
    """pywebpush to the same subscriptions, 64 threads, a keep-alive session each."""
    import requests
    from py_vapid import Vapid02
    from pywebpush import webpush

    vapid = Vapid02()
    vapid.generate_keys()
    data = json.dumps({"title": "Alarm", "body": "x" * max(0, plaintext_bytes - 30)})[:max(plaintext_bytes, 40)]
    local = threading.local()
    failures = []

    def send(subscription):
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = requests.Session()
        response = webpush({"endpoint": subscription["endpoint"], "keys": subscription["keys"]}, data,
                           vapid_private_key=vapid, vapid_claims={"sub": "mailto:bench@example.org"},
                           ttl=86400, requests_session=session)
        if response.status_code != 201:
            failures.append(response.status_code)

    double.call("POST", "/reset")
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=64) as pool:
        list(pool.map(send, subscriptions))
    records = double.call("GET", f"/wait?count={len(subscriptions)}&timeout=300", timeout=330)
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    if failures:
        fail(f"pywebpush: {len(failures)} pushes not answered 201 ({sorted(set(failures))})")
    check_sample(records, len(subscriptions), double.origin)
    arrivals = [record["time"] - start for record in records]
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return {
        "pushes": len(subscriptions), "seconds": round(max(arrivals), 3), "p50": round(percentile(arrivals, 0.5), 3),
        "p99": round(percentile(arrivals, 0.99), 3), "perSecond": round(len(subscriptions) / max(arrivals)),
        "cpuMicrosecondsPerPush": round(cpu / len(subscriptions) * 1e6, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chime", required=True, help="the chime binary (release)")
    parser.add_argument("--sizes", default="1000,10000", help="subscription counts, comma-separated")
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 subscriptions")
    parser.add_argument("--json", default=os.path.join(ROOT, "Benchmarks", "out", "webpush.json"))
    arguments = parser.parse_args()
    sizes = [100, 1000] if arguments.quick else [int(size) for size in arguments.sizes.split(",")]
    binary = os.path.abspath(arguments.chime)
    directory = tempfile.mkdtemp(prefix="webpush-bench-")
    double = Double(sys.executable, directory)
    results = []
    try:
        for count in sizes:
            say(f"{count} subscriptions: chime serve")
            chime, subscriptions = run_chime(binary, double, directory, count)
            say(f"{count} subscriptions: pywebpush")
            peer = run_peer(double, subscriptions, chime["plaintextBytes"])
            results.append({"subscriptions": count, "chime": chime, "pywebpush": peer,
                            "timeRatio": round(chime["seconds"] / peer["seconds"], 3),
                            "cpuRatio": round(chime["cpuMicrosecondsPerPush"] / peer["cpuMicrosecondsPerPush"], 3)})
    finally:
        double.stop()
        shutil.rmtree(directory, ignore_errors=True)

    machine = {"cpus": os.cpu_count(), "machine": platform.machine(), "loadavg": os.getloadavg(),
               "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    os.makedirs(os.path.dirname(arguments.json), exist_ok=True)
    with open(arguments.json, "w") as out:
        json.dump({"machine": machine, "results": results}, out, indent=2)
    print(f"Web Push fan-out ({machine['date']}, {machine['cpus']} CPUs, load {machine['loadavg'][0]:.2f}); "
          f"one delivery to N subscriptions on a loopback push service")
    print(f"{'N':>7} {'who':<10} {'last push s':>11} {'p50 s':>7} {'p99 s':>7} {'pushes/s':>9} {'CPU µs/push':>12}")
    for result in results:
        for who in ("chime", "pywebpush"):
            row = result[who]
            print(f"{result['subscriptions']:>7} {who:<10} {row['seconds']:>11.3f} {row['p50']:>7.3f} {row['p99']:>7.3f} "
                  f"{row['perSecond']:>9} {row['cpuMicrosecondsPerPush']:>12.1f}")
        print(f"{'':>7} {'ratio':<10} time chime/pywebpush {result['timeRatio']:.2f}, CPU per push {result['cpuRatio']:.2f}")


if __name__ == "__main__":
    main()
