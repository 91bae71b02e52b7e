"""A Web Push service double on loopback, for Chime's Web Push tests and benchmark.

It hands out subscriptions (a user agent's keys made with Python's cryptography), and for every
push it receives (RFC 8030 POST /push/ID) it records the request's headers and size, decrypts the
body with the subscriber's private key by http_ece (Mozilla's aes128gcm, not Chime's code), and
verifies the VAPID token (RFC 8292) with PyJWT against the key in the Authorization header: ES256,
aud = this service's origin, exp in the future and at most 24 hours ahead, sub mailto: or https:.
It answers 201 unless told otherwise for a subscription (a list of statuses, with Retry-After).

    push_service.py PORT_FILE      listens on 127.0.0.1, writes {"port": N} to PORT_FILE (renamed into place), then serves

Control (JSON):
    POST /subscribe                       -> {"endpoint", "expirationTime": null, "keys": {"p256dh", "auth"}}
    POST /answers/ID {"statuses": [429, 201], "retryAfter": "1"}   the next answers for ID, in order
    GET  /requests?after=N                -> the requests recorded after the first N
    GET  /wait?count=N&timeout=S          -> waits until N pushes were received (or S seconds), then /requests
    POST /decrypt {"on": false}           decrypts nothing (the default: every push)
    POST /sample {"every": N}             decrypts and verifies one push in N, for a benchmark's
                                          thousands (the others are recorded with their headers)
    POST /reset                           forgets the requests recorded so far
    POST /hold {"count": N}               the next N pushes get no answer: each is held until its
                                          sender closes the connection (a sender cut off while
                                          stopping), and is not recorded
    GET  /held?count=N&released=R&timeout=S  -> {"holding", "released"} once N pushes are held and R were
                                          let go (or S seconds)
"""
import base64
import json
import select
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import http_ece
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Service:
    def __init__(self):
        self.lock = threading.Condition()
        self.subscribers = {}      # id -> (private key, auth)
        self.answers = {}          # id -> [(status, retry-after)]
        self.requests = []
        self.next_id = 0
        self.decrypt = True
        self.every = 1             # decrypt and verify one push in `every`
        self.hold = 0              # how many of the next pushes are held unanswered
        self.holding = 0           # pushes held now
        self.released = 0          # held pushes whose sender closed the connection

    def subscribe(self, origin: str) -> dict:
        key = ec.generate_private_key(ec.SECP256R1())
        auth = bytes(__import__("os").urandom(16))
        with self.lock:
            self.next_id += 1
            sid = f"s{self.next_id}"
            self.subscribers[sid] = (key, auth)
        point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return {"endpoint": f"{origin}/push/{sid}", "expirationTime": None, "keys": {"p256dh": b64(point), "auth": b64(auth)}}

    def receive(self, sid: str, headers, body: bytes, origin: str) -> tuple:
        record = {"subscription": sid, "size": len(body), "headers": {k.lower(): v for k, v in headers.items()}, "time": time.time()}
        with self.lock:
            subscriber = self.subscribers.get(sid)
            queued = self.answers.get(sid) or []
            status, retry_after = queued.pop(0) if queued else (201 if subscriber else 404, None)
            sampled = len(self.requests) % self.every == 0
        if subscriber and self.decrypt and sampled:
            key, auth = subscriber
            try:
                plaintext = http_ece.decrypt(body, private_key=key, auth_secret=auth, version="aes128gcm")
                record["payload"] = json.loads(plaintext)
                record["plaintextSize"] = len(plaintext)
            except Exception as error:  # recorded for the test to see
                record["decryptError"] = repr(error)
        if sampled:
            record["vapid"] = self.verify_vapid(headers.get("Authorization", ""), origin)
        record["status"] = status
        with self.lock:
            self.requests.append(record)
            self.lock.notify_all()
        return status, retry_after

    @staticmethod
    def verify_vapid(authorization: str, origin: str) -> dict:
        try:
            scheme, _, rest = authorization.partition(" ")
            if scheme.lower() != "vapid":
                return {"error": f"scheme {scheme!r}"}
            parts = dict(item.strip().split("=", 1) for item in rest.split(","))
            public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(parts["k"]))
            claims = jwt.decode(parts["t"], public, algorithms=["ES256"], audience=origin, options={"require": ["exp", "aud", "sub"]})
            header = jwt.get_unverified_header(parts["t"])
            if claims["exp"] > time.time() + 24 * 3600:
                return {"error": "exp more than 24 h ahead", "claims": claims}
            if not (claims["sub"].startswith("mailto:") or claims["sub"].startswith("https:")):
                return {"error": "sub is neither mailto: nor https:", "claims": claims}
            return {"ok": True, "claims": claims, "header": header, "k": parts["k"]}
        except Exception as error:
            return {"error": repr(error)}


SERVICE = Service()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *arguments):
        pass

    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def reply(self, status: int, value=None, headers=()):
        body = b"" if value is None else json.dumps(value).encode()
        self.send_response(status)
        for name, text in headers:
            self.send_header(name, text)
        self.send_header("Content-Length", str(len(body)))
        if value is not None:
            self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_POST(self):
        path = urlparse(self.path).path
        body = self.body()
        if path == "/subscribe":
            return self.reply(200, SERVICE.subscribe(self.origin()))
        if path.startswith("/answers/"):
            told = json.loads(body or b"{}")
            with SERVICE.lock:
                SERVICE.answers[path.split("/")[2]] = [(status, told.get("retryAfter")) for status in told.get("statuses", [])]
            return self.reply(200, {})
        if path == "/sample":
            SERVICE.every = max(1, int(json.loads(body).get("every", 1)))
            return self.reply(200, {})
        if path == "/reset":
            with SERVICE.lock:
                SERVICE.requests = []
            return self.reply(200, {})
        if path == "/decrypt":
            SERVICE.decrypt = json.loads(body).get("on", True)
            return self.reply(200, {})
        if path == "/hold":
            with SERVICE.lock:
                SERVICE.hold = int(json.loads(body).get("count", 0))
            return self.reply(200, {})
        if path.startswith("/push/"):
            with SERVICE.lock:
                held = SERVICE.hold > 0
                if held:
                    SERVICE.hold -= 1
                    SERVICE.holding += 1
                    SERVICE.lock.notify_all()
            if held:
                return self.hold_until_closed()
            status, retry_after = SERVICE.receive(path.split("/")[2], self.headers, body, self.origin())
            headers = [("Location", f"{self.origin()}/message/{len(SERVICE.requests)}")]
            if retry_after is not None:
                headers.append(("Retry-After", str(retry_after)))
            return self.reply(status, None, headers)
        self.reply(404, {"error": "no such path"})

    def hold_until_closed(self):
        """Answers nothing until the sender closes the connection (at most 300 s), then forgets the push."""
        deadline = time.time() + 300
        while time.time() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable and not self.connection.recv(1, __import__("socket").MSG_PEEK):
                break
        with SERVICE.lock:
            SERVICE.holding -= 1
            SERVICE.released += 1
            SERVICE.lock.notify_all()
        self.close_connection = True

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        if url.path == "/held":
            count = int(query.get("count", ["1"])[0])
            deadline = time.time() + float(query.get("timeout", ["30"])[0])
            with SERVICE.lock:
                released = int(query.get("released", ["0"])[0])
                while (SERVICE.holding < count or SERVICE.released < released) and time.time() < deadline:
                    SERVICE.lock.wait(deadline - time.time())
                return self.reply(200, {"holding": SERVICE.holding, "released": SERVICE.released})
        if url.path == "/wait":
            count = int(query.get("count", ["1"])[0])
            deadline = time.time() + float(query.get("timeout", ["30"])[0])
            with SERVICE.lock:
                while len(SERVICE.requests) < count and time.time() < deadline:
                    SERVICE.lock.wait(deadline - time.time())
        if url.path in ("/wait", "/requests"):
            after = int(query.get("after", ["0"])[0])
            with SERVICE.lock:
                return self.reply(200, SERVICE.requests[after:])
        self.reply(404, {"error": "no such path"})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(sys.argv[1] + ".tmp", "w") as out:
        json.dump({"port": server.server_address[1]}, out)
    __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
