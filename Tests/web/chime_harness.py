"""Starts `chime serve` on a free port with a temporary data directory and speaks its HTTP API.

Used by the browser tests (Tests/web) and by scripts/screenshots.py. Standard library only.
"""
from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# How long a test waits for a signal (an element, an answer, a server state), in seconds: a bound
# on a hang, not a measure of this machine's speed. Every wait ends as soon as its condition holds,
# so a passing run takes no longer for it.
BOUND = 60

ALARM_CATEGORY = {
    # The alarm example's category, exactly as Examples/ExampleApps/AlarmApp.swift registers it.
    "identifier": "alarm.category",
    "actions": [
        {"identifier": "snooze", "title": "Snooze 5 Sec", "options": []},
        {"identifier": "comment", "title": "Add Comment", "options": [],
         "textInputButtonTitle": "Add", "textInputPlaceholder": "Add Comment Here"},
    ],
    "intentIdentifiers": [],
    "options": [],
}


def chime_binary() -> str:
    candidate = os.path.abspath(os.environ.get("CHIME_BIN") or str(REPO / ".build" / "debug" / "chime"))
    if not os.access(candidate, os.X_OK):
        raise RuntimeError(f"no chime binary at {candidate}; build it or set CHIME_BIN")
    return candidate


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Response:
    def __init__(self, status: int, headers: dict, body: bytes):
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def json(self):
        return json.loads(self.body) if self.body else None

    def __repr__(self):
        return f"<Response {self.status} {self.body[:300]!r}>"


class Chime:
    """One `chime serve` process; with `tls` = (certificate, key, CA file) it serves HTTPS (ALPN
    h2 and http/1.1), and this client trusts the CA file."""

    def __init__(self, data_dir: str | None = None, port: int | None = None, web_dir: str | None = None,
                 extra_args: list[str] | None = None, tls: tuple[str, str, str] | None = None):
        self.binary = chime_binary()
        self.owns_data = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="chime-web-")
        self.port = port or free_port()
        self.web_dir = web_dir
        self.extra_args = list(extra_args or [])
        self.tls = tls
        if tls:
            self.extra_args += ["--tls-cert", tls[0], "--tls-key", tls[1]]
        self.process: subprocess.Popen | None = None
        self.log_path = os.path.join(self.data_dir, "serve.log")

    @property
    def base(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        """A new HTTP/1.1 connection to the service (TLS, trusting the test CA, when it serves TLS)."""
        if self.tls:
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                               context=ssl.create_default_context(cafile=self.tls[2]))
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def start(self, timeout: float = 30.0) -> "Chime":
        env = dict(os.environ)
        if self.web_dir:
            env["CHIME_WEB_DIR"] = self.web_dir
        else:
            env.pop("CHIME_WEB_DIR", None)
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--data", self.data_dir, "--listen", f"127.0.0.1:{self.port}", "--desktop", "off", *self.extra_args],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chime serve exited with {self.process.returncode}: {self.log()}")
            try:
                if self.request("GET", "/healthz").status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"chime serve did not answer within {timeout} s: {self.log()}")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None

    def close(self):
        self.stop()
        if self.owns_data:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    @property
    def owner_token(self) -> str:
        return Path(self.data_dir, "owner-token").read_text().strip()

    def login_url(self) -> str:
        """A one-time sign-in link, as `chime open --print` prints it."""
        problems = []
        for _ in range(3):
            result = subprocess.run([self.binary, "open", "--print", "--data", self.data_dir],
                                    capture_output=True, text=True, timeout=30)
            if result.returncode == 0 and result.stdout.strip():
                if problems:
                    print(f"chime open needed {len(problems) + 1} tries: {problems}")
                return result.stdout.strip().splitlines()[-1]
            problems.append(f"exit {result.returncode}: {result.stderr.strip()}")
            time.sleep(0.3)
        raise RuntimeError(f"chime open --print failed: {problems}; server log: {self.log()}")

    # HTTP

    def request(self, method: str, path: str, body=None, token: str | None = None,
                headers: dict | None = None, timeout: float = 15.0) -> Response:
        connection = self.connection(timeout)
        sent = dict(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        if token:
            sent["Authorization"] = f"Bearer {token}"
        try:
            connection.request(method, path, body=data, headers=sent)
            response = connection.getresponse()
            return Response(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            connection.close()

    def owner(self, method: str, path: str, body=None, expect=(200, 201, 204)) -> Response:
        response = self.request(method, path, body, token=self.owner_token)
        if response.status not in expect:
            raise AssertionError(f"{method} {path} → {response.status}: {response.body[:500]!r}")
        return response

    def register(self, bundle: str, allow: bool | None = True, ask: bool = True, options: list[str] | None = None) -> "App":
        """Registers an app; it asks for permission (unless `ask` is false) and the owner answers
        `allow` (None: the question stays open, for the center to answer)."""
        created = self.owner("POST", "/v1/apps", {"bundleIdentifier": bundle}).json
        app = App(self, bundle, created["token"])
        if ask:
            app.request_authorization(options)
            if allow is not None:
                self.owner("POST", f"/v1/apps/{q(bundle)}/authorization/answer", {"allow": allow})
        return app


def q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


class App:
    """An app using the service with its own token, as an app process would."""

    def __init__(self, chime: Chime, bundle: str, token: str):
        self.chime = chime
        self.bundle = bundle
        self.token = token

    @property
    def path(self) -> str:
        return f"/v1/apps/{q(self.bundle)}"

    def call(self, method: str, tail: str, body=None, expect=(200, 201, 204)) -> Response:
        response = self.chime.request(method, self.path + tail, body, token=self.token)
        if expect and response.status not in expect:
            raise AssertionError(f"{method} {self.path + tail} → {response.status}: {response.body[:500]!r}")
        return response

    def request_authorization(self, options: list[str] | None = None):
        return self.call("POST", "/authorization", {"options": options} if options else None).json

    def set_categories(self, categories: list[dict]):
        return self.call("PUT", "/categories", categories).json

    def add(self, identifier: str, trigger=None, **content) -> dict:
        request = {"identifier": identifier, **content}
        if trigger is not None:
            request["trigger"] = trigger
        return self.call("POST", "/requests", request).json

    def delivered(self) -> list[dict]:
        return self.call("GET", "/notifications").json

    def pending(self) -> list[dict]:
        return self.call("GET", "/requests").json

    def outbox(self) -> list[dict]:
        return self.call("GET", "/responses").json

    def follow(self, on_event) -> "EventFollower":
        return EventFollower(self.chime, self.path + "/events", self.token, on_event)


class EventFollower:
    """Reads server-sent events in a thread and hands each (kind, data) to a callback."""

    def __init__(self, chime: Chime, path: str, token: str, on_event):
        self.connection = chime.connection(30)
        self.connection.request("GET", path, headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"})
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            raise AssertionError(f"GET {path} → {self.response.status}")
        self.connection.sock.settimeout(None)  # a quiet stream is not an error
        self.on_event = on_event
        self.errors: list[BaseException] = []
        self.stopped = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        kind, data = None, []
        try:
            while not self.stopped:
                line = self.response.readline()
                if not line:
                    return
                line = line.decode().rstrip("\r\n")
                if line == "":
                    if data:
                        self.on_event(kind or "message", json.loads("\n".join(data)))
                    kind, data = None, []
                elif line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
        except BaseException as error:  # noqa: BLE001 - reported to the test
            if not self.stopped:
                self.errors.append(error)

    def stop(self):
        self.stopped = True
        try:
            if self.connection.sock:
                self.connection.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()
        self.thread.join(5)


def wait_for(condition, timeout: float = BOUND, interval: float = 0.05, message: str = "condition"):
    """Polls `condition` until it returns something truthy; returns that."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception as error:  # noqa: BLE001 - retried until the deadline
            last_error = error
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {message}" + (f" (last error: {last_error!r})" if last_error else ""))
