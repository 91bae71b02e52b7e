"""What the attacks in scripts/abuse/ share: a fresh `chime serve` on loopback, plain HTTP over raw
sockets (no third-party packages), latency probes and the server's memory.

Everything here talks to 127.0.0.1 (and other 127.x.y.z source addresses, which are this machine
too) and nowhere else; every loop is bounded in count and in time.
"""
import http.client
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

LOOPBACK = "127.0.0.1"


def raise_open_files():
    """Lifts this process's open-files limit to the hard limit (thousands of attack sockets)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class Server:
    """A fresh `chime serve --auto-allow` on a free loopback port with its own data directory."""

    def __init__(self, chime, data_dir=None, extra=(), env=None):
        self.dir = data_dir or tempfile.mkdtemp(prefix="chime-abuse-")
        os.chmod(self.dir, 0o700)
        self.log_path = os.path.join(self.dir, "server.log")
        info = os.path.join(self.dir, "server.json")
        if os.path.exists(info):
            os.unlink(info)
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([chime, "serve", "--data", self.dir, "--listen", f"{LOOPBACK}:0", "--auto-allow",
                                         "--log-format", "json", *extra],
                                        stdout=subprocess.DEVNULL, stderr=self.log, stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 30
        while not os.path.exists(info):
            if self.process.poll() is not None:
                raise RuntimeError(f"chime serve exited with {self.process.returncode}; see {self.log_path}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"chime serve did not start in 30 s; see {self.log_path}")
            time.sleep(0.05)
        time.sleep(0.05)
        with open(info) as file:
            self.url = json.load(file)["url"]
        self.port = int(self.url.rsplit(":", 1)[1])
        with open(os.path.join(self.dir, "owner-token")) as file:
            self.owner = file.read().strip()

    @property
    def pid(self):
        return self.process.pid

    def rss_mb(self):
        try:
            with open(f"/proc/{self.pid}/status") as file:
                for line in file:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def alive(self):
        return self.process.poll() is None

    def request(self, method, path, body=None, token=None, headers=None, timeout=30):
        """One request on a new connection; returns (status, headers, body bytes)."""
        connection = http.client.HTTPConnection(LOOPBACK, self.port, timeout=timeout)
        try:
            all_headers = {"Connection": "close", **(headers or {})}
            if token:
                all_headers["Authorization"] = f"Bearer {token}"
            data = None
            if body is not None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                all_headers["Content-Type"] = "application/json"
            connection.request(method, path, body=data, headers=all_headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def json(self, method, path, body=None, token=None, expect=(200, 201, 204)):
        status, _, data = self.request(method, path, body=body, token=token or self.owner)
        if status not in expect:
            raise RuntimeError(f"{method} {path}: {status} {data[:300]!r}")
        return json.loads(data) if data else None

    def app(self, bundle):
        """Registers and authorizes an app; returns its token."""
        token = self.json("POST", "/v1/apps", {"bundleIdentifier": bundle})["token"]
        self.json("POST", f"/v1/apps/{bundle}/authorization", token=token)
        return token

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class PeakRSS:
    """Samples the server's resident memory every 20 ms in a thread; `peak` in MB."""

    def __init__(self, server):
        self.server = server
        self.peak = server.rss_mb()
        self.start = self.peak
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            self.peak = max(self.peak, self.server.rss_mb())
            time.sleep(0.02)

    def stop(self):
        self.running = False
        self.thread.join()
        return self.peak


def raw_exchange(port, data, timeout=5.0, source=LOOPBACK):
    """Sends raw bytes on a new connection; reads until the server closes it or `timeout` passes.
    Returns (bytes read, seconds until the answer was complete or the wait ended, closed by server)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(timeout)
    started = time.monotonic()
    sock.connect((LOOPBACK, port))
    sock.sendall(data)
    received = b""
    closed = False
    deadline = started + timeout
    try:
        while time.monotonic() < deadline:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                closed = True
                break
            received += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    finally:
        sock.close()
    return received, time.monotonic() - started, closed


def status_lines(data):
    """The status lines of the answers in `data` (an answer's head starts with HTTP/1.)."""
    return [line for line in data.split(b"\r\n") if line.startswith(b"HTTP/1.")]


def timed_request(port, method, path, body=None, token=None, source=LOOPBACK, timeout=5.0):
    """One request on a new connection from `source`, raw; returns (status or 0, seconds)."""
    payload = b"" if body is None else json.dumps(body).encode()
    head = f"{method} {path} HTTP/1.1\r\nHost: {LOOPBACK}\r\nConnection: close\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
    started = time.monotonic()
    try:
        data, _, _ = raw_exchange(port, head.encode() + b"\r\n" + payload, timeout=timeout, source=source)
    except OSError:
        return 0, time.monotonic() - started
    seconds = time.monotonic() - started
    lines = status_lines(data)
    if not lines:
        return 0, seconds
    return int(lines[0].split()[1]), seconds


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def latency_summary(samples):
    """p50 / p99 / max in ms, and how many failed (no answer, or not 2xx)."""
    times = [seconds for status, seconds in samples]
    failed = sum(1 for status, _ in samples if not 200 <= status < 300)
    return {"p50Ms": round(percentile(times, 0.5) * 1000, 1), "p99Ms": round(percentile(times, 0.99) * 1000, 1),
            "maxMs": round(max(times) * 1000, 1) if times else float("nan"), "failed": failed, "count": len(samples)}
