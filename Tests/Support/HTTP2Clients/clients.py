"""HTTP/2 clients from PyPI against a Chime server, for ChimeServerTests (HTTP2Tests).

Each command prints one JSON object on stdout:

  many URL CA TOKEN COUNT          COUNT GETs at once through one httpx (h2) connection
  aioapns HOST PORT CA KEY KEYID TEAMID TOPIC DEVICE[,DEVICE...] [PUSH_TYPE PRIORITY [CASES]]
                                   a push to each device through one aioapns client (one provider token)
  aioapns-cert HOST PORT CA CERTKEY DEVICE
                                   a push with aioapns authenticated by a client certificate (CERTKEY: the
                                   certificate and its key in one PEM file; the topic is the certificate's UID)
  kalyke URL CA KEY KEYID TEAMID TOPIC DEVICE [COUNT]
                                   COUNT pushes (1) with kalyke-apns (an APNs provider library on httpx), signed
                                   with KEY: kalyke opens a new connection and makes a new token for each
  token-changes URL CA KEY KEYID TEAMID TOPIC PATTERN
                                   pushes to URL through one httpx (h2) connection, one for each letter of PATTERN
                                   ("ABA"), each letter a provider token PyJWT signs with KEY when first used
  cert-push URL CA CERT KEY [TOPIC] one POST over HTTP/2 with httpx and a client certificate, no authorization header
  rapid-reset HOST PORT CA PATH N  N streams opened and reset at once (h2), then one real request
  ping-flood HOST PORT CA N        N PINGs without reading the answers, then whether the server ended it
  settings-flood HOST PORT CA N    N SETTINGS frames without reading, as above
  request HOST PORT CA FIELDS      one request with the header list FIELDS (JSON [[name, value], ...]) sent
                                   as it is (h2's own checks of outgoing fields off), its status and body

Hostile clients, frame by frame (each prints how the server answered: GOAWAY and its code, when it
closed the connection, RST_STREAM codes, statuses):
  empty-frames HOST PORT CA KIND N [SECONDS]
                                   N empty frames as fast as they go: KIND data (on one open request),
                                   headers (zero-length, a new stream each) or continuation; pings: PING
                                   acknowledgements nobody asked for
  endless-continuation HOST PORT CA [FRAMES SIZE]
                                   CONTINUATION frames of SIZE bytes that never set END_HEADERS
  hpack-bomb HOST PORT CA [STREAMS REFERENCES]
                                   a 4,000-byte header entered in the server's HPACK table, then
                                   STREAMS requests each referring to it REFERENCES times
  stall HOST PORT CA PATH TOKEN N SECONDS [stream|connection]
                                   N requests for PATH, never a WINDOW_UPDATE (stream windows 0, or the
                                   connection's window left to run out); TOKEN "-" for none
  idle HOST PORT CA N SECONDS      N connections that send the preface, then nothing
  dribble HOST PORT CA PATH INTERVAL SECONDS [all|head]
                                   the preface and a request sent a byte every INTERVAL seconds (head:
                                   only the request's HEADERS frame)
  crowd HOST PORT CA CONNECTIONS STREAMS PATH TOKEN SECONDS
                                   CONNECTIONS connections each opening STREAMS requests whose bodies never come
  probe URL TOKEN TOPIC DEVICE SECONDS [INTERVAL]
                                   a well-behaved client on one h2 connection: /healthz and a push in
                                   turn; latencies, statuses and failures

CA is a PEM file to trust (TLS), or "-" for h2c on plain TCP.
"""
import asyncio
import json
import socket
import ssl
import sys
import threading
import time
import uuid

import h2.config
import h2.connection
import h2.events
import hpack
import httpx


def context(ca: str):
    if ca == "-":
        return None
    made = ssl.create_default_context(cafile=ca)
    made.set_alpn_protocols(["h2"])
    return made


async def many(url: str, ca: str, token: str, count: str) -> dict:
    verify = context(ca) if ca != "-" else False
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(http2=True, http1=False, verify=verify, limits=limits,
                                 headers={"authorization": f"Bearer {token}"}) as client:
        answers = await asyncio.gather(*[client.get(url, params={"n": str(index)}) for index in range(int(count))],
                                       return_exceptions=True)
    statuses: dict = {}
    versions = set()
    for answer in answers:
        key = type(answer).__name__ if isinstance(answer, Exception) else str(answer.status_code)
        statuses[key] = statuses.get(key, 0) + 1
        if not isinstance(answer, Exception):
            versions.add(answer.http_version)
    return {"statuses": statuses, "versions": sorted(versions)}


async def push(host, port, ca, key, key_id, team_id, topic, device, push_type="alert", priority="10", cases="[]") -> dict:
    from aioapns import APNs, NotificationRequest, PushType
    from aioapns.connection import APNsDevelopmentClientProtocol, APNsProductionClientProtocol
    # The library's own settings for where APNs is: the host and port of its protocol classes.
    for protocol in (APNsDevelopmentClientProtocol, APNsProductionClientProtocol):
        protocol.APNS_SERVER = host
        protocol.APNS_PORT = int(port)
    client = APNs(key=open(key).read(), key_id=key_id, team_id=team_id, topic=topic, use_sandbox=True,
                  ssl_context=ssl.create_default_context(cafile=ca), max_connection_attempts=1)
    body = {"aps": {"alert": {"title": "From aioapns", "body": "signed with a .p8"}}}
    if push_type == "background":
        body = {"aps": {"content-available": 1}}
    results = []
    # One client, so one provider token, for every device given (comma-separated), in order.
    # CASES (JSON): per device, in order, what changes: push_type, priority, collapse_key, topic.
    changes = json.loads(cases)
    for index, token in enumerate(device.split(",")):
        case = changes[index] if index < len(changes) else {}
        kind = case.get("push_type", push_type)
        message = {"aps": {"content-available": 1}} if kind == "background" else body
        request = NotificationRequest(device_token=token, message=message, notification_id=str(uuid.uuid4()),
                                      push_type=PushType(kind), priority=int(case.get("priority", priority)),
                                      collapse_key=case.get("collapse_key"), apns_topic=case.get("topic"))
        result = await client.send_notification(request)
        results.append({"success": result.is_successful, "status": str(result.status), "reason": result.description,
                        "apnsId": result.notification_id, "sent": request.notification_id})
    return {"results": results}


async def push_with_certificate(host, port, ca, certificate, device) -> dict:
    from aioapns import APNs, NotificationRequest, PushType
    from aioapns.connection import APNsDevelopmentClientProtocol, APNsProductionClientProtocol
    for protocol in (APNsDevelopmentClientProtocol, APNsProductionClientProtocol):
        protocol.APNS_SERVER = host
        protocol.APNS_PORT = int(port)
    client = APNs(client_cert=certificate, use_sandbox=True, ssl_context=ssl.create_default_context(cafile=ca),
                  max_connection_attempts=1)
    request = NotificationRequest(device_token=device, message={"aps": {"alert": {"title": "From aioapns", "body": "with a certificate"}}},
                                  notification_id=str(uuid.uuid4()), push_type=PushType.ALERT)
    result = await client.send_notification(request)
    return {"success": result.is_successful, "status": str(result.status), "reason": result.description,
            "apnsId": result.notification_id, "sent": request.notification_id}


async def post_with_certificate(url, ca, certificate, key, topic=None) -> dict:
    made = context(ca)
    made.load_cert_chain(certificate, key)
    headers = {"apns-topic": topic} if topic else {}
    async with httpx.AsyncClient(http2=True, http1=False, verify=made) as client:
        answer = await client.post(url, headers=headers, content=b'{"aps": {"alert": "with httpx and a certificate"}}')
    body = answer.json() if answer.content else {}
    return {"status": answer.status_code, "version": answer.http_version, "reason": body.get("reason"),
            "uniqueId": answer.headers.get("apns-unique-id")}


async def push_with_kalyke(base, ca, key, key_id, team_id, topic, device, count="1") -> dict:
    # kalyke-apns has no host setting: its base URL is a property, given Chime's here; it trusts the
    # system's store through truststore, which reads the CA from SSL_CERT_FILE.
    import os
    from dataclasses import dataclass
    from kalyke import ApnsClient, ApnsConfig, Payload, PayloadAlert
    os.environ["SSL_CERT_FILE"] = ca

    @dataclass(frozen=True)
    class ChimeClient(ApnsClient):
        @property
        def _base_url(self) -> str:
            return base

    client = ChimeClient(use_sandbox=True, team_id=team_id, auth_key_id=key_id, auth_key_filepath=key)
    apns_ids = []
    for _ in range(int(count)):
        try:
            apns_ids.append(await client.send_message(device_token=device, apns_config=ApnsConfig(topic=topic),
                                                      payload=Payload(alert=PayloadAlert(title="From kalyke", body="signed with a .p8 key"))))
        except Exception as error:  # kalyke raises an exception class named after APNs' reason
            return {"success": False, "reason": type(error).__name__, "delivered": len(apns_ids)}
    return {"success": True, "apnsId": apns_ids[0], "delivered": len(apns_ids)}


async def token_changes(url, ca, key, key_id, team_id, topic, pattern) -> dict:
    import time
    import jwt
    pem = open(key).read()
    tokens: dict = {}
    results = []
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(http2=True, http1=False, verify=context(ca), limits=limits) as client:
        for letter in pattern:
            if letter not in tokens:
                tokens[letter] = jwt.encode({"iss": team_id, "iat": int(time.time())}, pem, algorithm="ES256", headers={"kid": key_id})
            answer = await client.post(url, content=b'{"aps": {"alert": "token changes"}}', headers={
                "authorization": f"bearer {tokens[letter]}", "apns-topic": topic, "apns-push-type": "alert"})
            body = answer.json() if answer.content else {}
            results.append({"status": answer.status_code, "reason": body.get("reason"), "version": answer.http_version})
    return {"results": results, "distinct": len(set(tokens.values()))}


def raw(host: str, port: str, ca: str):
    sock = socket.create_connection((host, int(port)), timeout=30)
    made = context(ca)
    if made is not None:
        sock = made.wrap_socket(sock, server_hostname=host)
    connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    connection.initiate_connection()
    sock.sendall(connection.data_to_send())
    return sock, connection


def read_until_closed(sock, connection, want_stream=None, seconds=20):
    """Reads events until the server ends the connection (GOAWAY or close) or the stream ends."""
    sock.settimeout(seconds)
    answer = {"goaway": None, "status": None, "reset": 0, "closed": False}
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                answer["closed"] = True
                return answer
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.ConnectionTerminated):
                    answer["goaway"] = event.error_code.name if hasattr(event.error_code, "name") else str(event.error_code)
                if isinstance(event, h2.events.StreamReset):
                    answer["reset"] += 1
                    if event.stream_id == want_stream:
                        return answer
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == want_stream:
                    answer["status"] = int(dict(event.headers)[":status"])
                if isinstance(event, h2.events.StreamEnded) and event.stream_id == want_stream:
                    return answer
            pending = connection.data_to_send()
            if pending:
                sock.sendall(pending)
    except (ConnectionError, ssl.SSLError, OSError, h2.exceptions.ProtocolError) as error:
        answer["closed"] = True
        answer["error"] = type(error).__name__
        return answer


def headers(host: str, port: str, path: str):
    return [(":method", "GET"), (":scheme", "https"), (":authority", f"{host}:{port}"), (":path", path)]


def rapid_reset(host, port, ca, path, count) -> dict:
    """Opens and resets COUNT streams, then asks for /healthz on the same connection."""
    sock, connection = raw(host, port, ca)
    try:
        for _ in range(int(count)):
            stream = connection.get_next_available_stream_id()
            connection.send_headers(stream, headers(host, port, path), end_stream=True)
            connection.reset_stream(stream)
            sock.sendall(connection.data_to_send())
        stream = connection.get_next_available_stream_id()
        connection.send_headers(stream, headers(host, port, "/healthz"), end_stream=True)
        sock.sendall(connection.data_to_send())
    except (ConnectionError, ssl.SSLError, OSError) as error:
        return {"goaway": None, "status": None, "closed": True, "error": type(error).__name__}
    return read_until_closed(sock, connection, want_stream=stream)


def flood(host, port, ca, count, kind) -> dict:
    sock, connection = raw(host, port, ca)
    # Stop reading: the server's acknowledgements pile up on its side.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sent = 0
    try:
        for index in range(int(count)):
            if kind == "ping":
                connection.ping(index.to_bytes(8, "big"))
            else:
                connection.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100 + index % 2})
            sock.sendall(connection.data_to_send())
            sent += 1
    except (ConnectionError, ssl.SSLError, OSError) as error:
        return {"sent": sent, "closed": True, "error": type(error).__name__}
    answer = read_until_closed(sock, connection, seconds=20)
    answer["sent"] = sent
    return answer


def request(host, port, ca, fields) -> dict:
    """One request whose header list is sent exactly as given, even where h2 would refuse it."""
    sock = socket.create_connection((host, int(port)), timeout=30)
    made = context(ca)
    if made is not None:
        sock = made.wrap_socket(sock, server_hostname=host)
    config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8", validate_outbound_headers=False,
                                       normalize_outbound_headers=False)
    connection = h2.connection.H2Connection(config=config)
    connection.initiate_connection()
    stream = connection.get_next_available_stream_id()
    connection.send_headers(stream, [tuple(field) for field in json.loads(fields)], end_stream=True)
    sock.sendall(connection.data_to_send())
    sock.settimeout(20)
    answer = {"status": None, "body": "", "reset": None}
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return answer
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                    answer["status"] = int(dict(event.headers)[":status"])
                if isinstance(event, h2.events.DataReceived) and event.stream_id == stream:
                    answer["body"] += event.data.decode("utf-8", "replace")
                    connection.acknowledge_received_data(event.flow_controlled_length, stream)
                if isinstance(event, h2.events.StreamReset) and event.stream_id == stream:
                    answer["reset"] = event.error_code.name if hasattr(event.error_code, "name") else str(event.error_code)
                    return answer
                if isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                    return answer
            pending = connection.data_to_send()
            if pending:
                sock.sendall(pending)
    finally:
        sock.close()



# MARK: - Hostile HTTP/2 clients, frame by frame (make abuse, HTTP2AbuseTests)
#
# These write frames themselves (h2 refuses to send most of them) with a small HPACK encoder of
# their own that never indexes, except where the attack is the index. Every loop is bounded in count
# and in time; everything goes to the host given (loopback in the tests and make abuse).

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def settings(values: dict) -> bytes:
    return frame(SETTINGS, 0, 0, b"".join(key.to_bytes(2, "big") + value.to_bytes(4, "big") for key, value in values.items()))


def hpack_integer(value: int, prefix: int, first: int = 0) -> bytes:
    limit = (1 << prefix) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def hpack_string(text) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return hpack_integer(len(data), 7) + data


def hpack_field(name, value, indexing=False) -> bytes:
    """A literal field with a new name: without indexing, or with incremental indexing (it enters the
    decoder's dynamic table, at index 62 when it is the newest)."""
    return (b"\x40" if indexing else b"\x00") + hpack_string(name) + hpack_string(value)


def hpack_indexed(index: int) -> bytes:
    return hpack_integer(index, 7, 0x80)


def request_block(method: str, path: str, authority: str, extra=()) -> bytes:
    block = hpack_field(":method", method) + hpack_field(":scheme", "http") + hpack_field(":path", path)
    block += hpack_field(":authority", authority)
    for name, value in extra:
        block += hpack_field(name, value)
    return block


ERROR_NAMES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 3: "FLOW_CONTROL_ERROR", 4: "SETTINGS_TIMEOUT",
               5: "STREAM_CLOSED", 6: "FRAME_SIZE_ERROR", 7: "REFUSED_STREAM", 8: "CANCEL", 9: "COMPRESSION_ERROR",
               10: "CONNECT_ERROR", 11: "ENHANCE_YOUR_CALM", 12: "INADEQUATE_SECURITY", 13: "HTTP_1_1_REQUIRED"}


class Wire:
    """One raw HTTP/2 connection: what the attacker sends, and what the server answered, read by a
    thread of its own (so a server that answers is never blocked by an attacker that does not read,
    unless the attack is not reading). SETTINGS are acknowledged; nothing else is."""

    def __init__(self, host, port, ca, local_settings=None, preface=True, acknowledges=True):
        sock = socket.create_connection((host, int(port)), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        made = context(ca)
        if made is not None:
            sock = made.wrap_socket(sock, server_hostname=host)
        self.sock = sock
        self.authority = f"{host}:{port}"
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.goaway = None
        self.goaway_at = None
        self.closed_at = None
        self.error = None
        self.resets = {}
        self.statuses = {}
        self.data = {}
        self.ended = set()
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 1 << 16
        self._block = {}
        # A client dribbling its preface must not have an acknowledgement put in the middle of it.
        self.acknowledges = preface and acknowledges
        # Set once the server's SETTINGS is acknowledged: the acknowledgement is sent by the reader
        # thread, so a client that must not have it land inside a header block waits for this.
        self.acknowledged = threading.Event()
        if preface:
            self.send(PREFACE + settings(local_settings or {}))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def send(self, data: bytes) -> bool:
        """False when the server has ended the connection."""
        try:
            with self.lock:
                self.sock.sendall(data)
            return True
        except (OSError, ssl.SSLError) as error:
            self.error = self.error or type(error).__name__
            return False

    def _read(self):
        buffer = b""
        self.sock.settimeout(None)
        try:
            while True:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    break
                buffer += chunk
                while len(buffer) >= 9:
                    length = int.from_bytes(buffer[:3], "big")
                    if len(buffer) < 9 + length:
                        break
                    kind, flags, stream = buffer[3], buffer[4], int.from_bytes(buffer[5:9], "big") & 0x7FFFFFFF
                    payload = buffer[9:9 + length]
                    buffer = buffer[9 + length:]
                    self._frame(kind, flags, stream, payload)
        except (OSError, ssl.SSLError) as error:
            self.error = self.error or type(error).__name__
        self.closed_at = time.monotonic() - self.started

    def _frame(self, kind, flags, stream, payload):
        if kind == SETTINGS and not flags & ACK and self.acknowledges:
            self.send(frame(SETTINGS, ACK, 0))
            self.acknowledged.set()
        elif kind == GOAWAY and len(payload) >= 8:
            self.goaway = ERROR_NAMES.get(int.from_bytes(payload[4:8], "big"), str(int.from_bytes(payload[4:8], "big")))
            self.goaway_at = time.monotonic() - self.started
        elif kind == RST_STREAM and len(payload) >= 4:
            self.resets[stream] = ERROR_NAMES.get(int.from_bytes(payload[:4], "big"), "?")
        elif kind in (HEADERS, CONTINUATION):
            if kind == HEADERS:
                padding = payload[0] if flags & 0x8 else 0
                start = (1 if flags & 0x8 else 0) + (5 if flags & 0x20 else 0)
                payload = payload[start:len(payload) - padding]
            self._block[stream] = self._block.get(stream, b"") + payload
            if flags & END_HEADERS:
                fields = dict(self.decoder.decode(self._block.pop(stream)))
                if ":status" in fields:
                    self.statuses[stream] = int(fields[":status"])
            if flags & END_STREAM:
                self.ended.add(stream)
        elif kind == DATA:
            padding = payload[0] if flags & 0x8 else 0
            self.data[stream] = self.data.get(stream, 0) + len(payload) - (1 + padding if flags & 0x8 else 0)
            if flags & END_STREAM:
                self.ended.add(stream)

    def wait(self, seconds, until=None):
        """Waits until the server ends the connection, `until()` holds, or `seconds` pass."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.closed_at is None and not (until and until()):
            time.sleep(0.02)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def outcome(self) -> dict:
        statuses: dict = {}
        for status in self.statuses.values():
            statuses[str(status)] = statuses.get(str(status), 0) + 1
        resets: dict = {}
        for code in self.resets.values():
            resets[code] = resets.get(code, 0) + 1
        return {"goaway": self.goaway, "goawayAt": None if self.goaway_at is None else round(self.goaway_at, 2),
                "closed": self.closed_at is not None, "closedAt": None if self.closed_at is None else round(self.closed_at, 2),
                "error": self.error, "statuses": statuses, "resets": resets}


def empty_frames(host, port, ca, kind, count, seconds="20") -> dict:
    """COUNT frames with nothing in them, as fast as the connection takes them (for at most SECONDS):
    `data`: empty DATA frames on one open request (`pings`: PING acknowledgements nobody asked for, valid
    frames the server reads and drops, as a client sending without pause); `headers`: zero-length HEADERS frames, a new stream
    each; `continuation`: zero-length CONTINUATION frames after a HEADERS frame without END_HEADERS."""
    wire = Wire(host, port, ca)
    count, limit = int(count), float(seconds)
    if kind == "data":
        wire.send(frame(HEADERS, END_HEADERS, 1, request_block("POST", "/healthz", wire.authority)))
        batch = frame(DATA, 0, 1) * 1000
    elif kind == "pings":
        batch = frame(PING, ACK, 0, bytes(8)) * 1000
    elif kind == "continuation":
        # A SETTINGS acknowledgement between the HEADERS and its CONTINUATION frames would be a
        # protocol error of the client's own (RFC 9113, 6.10): acknowledge first.
        wire.acknowledged.wait(10)
        wire.send(frame(HEADERS, 0, 1, request_block("GET", "/healthz", wire.authority)))
        batch = frame(CONTINUATION, 0, 1) * 1000
    else:
        batch = None
    sent, stream = 0, 1
    deadline = time.monotonic() + limit
    while sent < count and time.monotonic() < deadline and wire.closed_at is None:
        if batch is None:
            chunk = b"".join(frame(HEADERS, END_HEADERS | END_STREAM, stream + 2 * index) for index in range(1000))
            stream += 2000
        else:
            chunk = batch
        if not wire.send(chunk):
            break
        sent += 1000
    sending = time.monotonic() - wire.started
    wire.wait(max(1.0, deadline - time.monotonic()))
    answer = wire.outcome()
    answer.update({"sent": sent, "sendingSeconds": round(sending, 2)})
    wire.close()
    return answer


def endless_continuation(host, port, ca, frames="64", size="16384") -> dict:
    """A HEADERS frame and then CONTINUATION frames of SIZE bytes of one header's value, END_HEADERS
    never set: how far the server lets the header block grow."""
    wire = Wire(host, port, ca)
    head = request_block("GET", "/healthz", wire.authority)
    # Fields of 100 bytes, each complete, frame after frame: the header list grows, the block never ends.
    field = hpack_field("x-endless", "e" * 100)
    fill = (field * (int(size) // len(field) + 1))[:int(size) // len(field) * len(field)]
    sent = 0
    if wire.send(frame(HEADERS, 0, 1, head)):
        for _ in range(int(frames)):
            if not wire.send(frame(CONTINUATION, 0, 1, fill)):
                break
            sent += 1
    wire.wait(15)
    answer = wire.outcome()
    answer.update({"sent": sent, "blockBytes": len(head) + sent * len(fill)})
    wire.close()
    return answer


def hpack_bomb(host, port, ca, streams="50", references="16000") -> dict:
    """SETTINGS_HEADER_TABLE_SIZE as large as it goes, a 4,000-byte header entered into the server's
    decoding table, then STREAMS requests each referring to it REFERENCES times (one byte each, 4 KB
    decoded): a header list of tens of MB from a block of 16 KB."""
    wire = Wire(host, port, ca, local_settings={1: 0x7FFFFFFF})
    first = request_block("GET", "/healthz", wire.authority) + hpack_field("x-bomb", "b" * 4000, indexing=True)
    wire.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, first))
    wire.wait(10, until=lambda: 1 in wire.statuses or 1 in wire.resets)
    sent = 0
    for index in range(int(streams)):
        block = request_block("GET", "/healthz", wire.authority) + hpack_indexed(62) * int(references)
        chunks = [block[offset:offset + 16384] for offset in range(0, len(block), 16384)]
        stream = 3 + 2 * index
        frames = [frame(HEADERS, (END_HEADERS if len(chunks) == 1 else 0) | END_STREAM, stream, chunks[0])]
        for position, chunk in enumerate(chunks[1:], start=2):
            frames.append(frame(CONTINUATION, END_HEADERS if position == len(chunks) else 0, stream, chunk))
        if not wire.send(b"".join(frames)):
            break
        sent += 1
    last = 3 + 2 * (sent - 1)
    wire.wait(20, until=lambda: last in wire.statuses or last in wire.resets or wire.goaway is not None)
    answer = wire.outcome()
    answer.update({"sent": sent, "decodedPerRequest": int(references) * 4032, "first": wire.statuses.get(1) or wire.resets.get(1)})
    wire.close()
    return answer


def stall(host, port, ca, path, token, streams, seconds, window="stream") -> dict:
    """STREAMS requests for PATH and never a WINDOW_UPDATE: `stream` sets SETTINGS_INITIAL_WINDOW_SIZE
    to 0 (no stream may send a byte); `connection` leaves the streams' windows open and lets the
    connection's 65,535 bytes run out. Waits SECONDS for the server to end it."""
    initial = {4: 0} if window == "stream" else {4: 0x7FFFFFFF}
    wire = Wire(host, port, ca, local_settings=initial)
    extra = [("authorization", f"Bearer {token}")] if token != "-" else []
    opened = []
    for index in range(int(streams)):
        stream = 1 + 2 * index
        if not wire.send(frame(HEADERS, END_HEADERS | END_STREAM, stream, request_block("GET", path, wire.authority, extra))):
            break
        opened.append(stream)
    wire.wait(float(seconds), until=lambda: all(stream in wire.ended or stream in wire.resets for stream in opened))
    answer = wire.outcome()
    answer.update({"opened": len(opened), "dataBytes": sum(wire.data.values()),
                   "unfinished": len([stream for stream in opened if stream not in wire.ended and stream not in wire.resets])})
    wire.close()
    return answer


def idle(host, port, ca, count, seconds) -> dict:
    """COUNT connections that send the preface and their SETTINGS, then nothing: when the server ends each."""
    wires = []
    for _ in range(int(count)):
        try:
            wires.append(Wire(host, port, ca))
        except OSError as error:
            return {"opened": len(wires), "error": type(error).__name__}
    deadline = time.monotonic() + float(seconds)
    while time.monotonic() < deadline and any(wire.closed_at is None for wire in wires):
        time.sleep(0.05)
    closed = sorted(wire.closed_at for wire in wires if wire.closed_at is not None)
    goaways: dict = {}
    for wire in wires:
        goaways[str(wire.goaway)] = goaways.get(str(wire.goaway), 0) + 1
        wire.close()
    return {"opened": len(wires), "closed": len(closed), "firstClosedAt": round(closed[0], 2) if closed else None,
            "lastClosedAt": round(closed[-1], 2) if closed else None, "goaways": goaways}


def dribble(host, port, ca, path, interval, seconds, part="all") -> dict:
    """The preface, SETTINGS and a request for PATH sent a byte every INTERVAL seconds (PART `head`:
    the preface and SETTINGS at once, the request's HEADERS frame a byte at a time): whether it is
    answered or ended, and when (for at most SECONDS)."""
    wire = Wire(host, port, ca, preface=part == "head", acknowledges=False)
    message = frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block("GET", path, wire.authority))
    if part != "head":
        message = PREFACE + settings({}) + message
    sent = 0
    deadline = time.monotonic() + float(seconds)
    while sent < len(message) and time.monotonic() < deadline and wire.closed_at is None:
        if not wire.send(message[sent:sent + 1]):
            break
        sent += 1
        time.sleep(float(interval))
    wire.wait(max(0.5, deadline - time.monotonic()), until=lambda: 1 in wire.ended or 1 in wire.resets)
    answer = wire.outcome()
    answer.update({"sentBytes": sent, "ofBytes": len(message)})
    wire.close()
    return answer


def crowd(host, port, ca, connections, streams, path, token, seconds) -> dict:
    """CONNECTIONS connections, each opening STREAMS POST requests for PATH whose bodies never come
    (at most SETTINGS_MAX_CONCURRENT_STREAMS are taken): how many streams were refused, and when the
    server ended the connections (for at most SECONDS)."""
    wires = []
    extra = [("content-type", "application/json"), ("content-length", "1000")]
    if token != "-":
        extra.append(("authorization", f"Bearer {token}"))
    refused_to_connect = 0
    for _ in range(int(connections)):
        try:
            wire = Wire(host, port, ca)
        except OSError:
            refused_to_connect += 1
            continue
        wires.append(wire)
        wire.send(b"".join(frame(HEADERS, END_HEADERS, 1 + 2 * index, request_block("POST", path, wire.authority, extra))
                           for index in range(int(streams))))
    opened_at = time.monotonic()
    deadline = opened_at + float(seconds)
    while time.monotonic() < deadline and any(wire.closed_at is None for wire in wires):
        time.sleep(0.05)
    closed = sorted(wire.closed_at for wire in wires if wire.closed_at is not None)
    resets: dict = {}
    goaways: dict = {}
    statuses: dict = {}
    for wire in wires:
        for key, value in wire.outcome()["resets"].items():
            resets[key] = resets.get(key, 0) + value
        for key, value in wire.outcome()["statuses"].items():
            statuses[key] = statuses.get(key, 0) + value
        goaways[str(wire.goaway)] = goaways.get(str(wire.goaway), 0) + 1
        wire.close()
    return {"connections": len(wires), "notConnected": refused_to_connect, "closed": len(closed),
            "lastClosedAt": round(closed[-1], 2) if closed else None, "resets": resets, "statuses": statuses, "goaways": goaways}


async def probe(url, token, topic, device, seconds, interval="0.2") -> dict:
    """A well-behaved client on one httpx h2 connection: GET /healthz and a push to DEVICE
    (authorization: the app's Chime token) in turn, every INTERVAL seconds for SECONDS."""
    latencies: dict = {"healthz": [], "push": []}
    failures: dict = {}
    statuses: dict = {}
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    deadline = time.monotonic() + float(seconds)
    async with httpx.AsyncClient(http2=True, http1=False, verify=False, limits=limits, timeout=10.0) as client:
        while time.monotonic() < deadline:
            for name in ("healthz", "push"):
                started = time.monotonic()
                try:
                    if name == "healthz":
                        answer = await client.get(url + "/healthz")
                    else:
                        answer = await client.post(f"{url}/3/device/{device}", content=b'{"aps": {"alert": "probe"}}', headers={
                            "authorization": f"bearer {token}", "apns-topic": topic, "apns-push-type": "alert"})
                    key = f"{name} {answer.status_code}"
                    statuses[key] = statuses.get(key, 0) + 1
                    latencies[name].append(time.monotonic() - started)
                except Exception as error:  # noqa: BLE001 - counted: a probe that fails is the finding
                    key = f"{name} {type(error).__name__}"
                    failures[key] = failures.get(key, 0) + 1
            await asyncio.sleep(float(interval))

    def summary(values):
        ordered = sorted(values)
        if not ordered:
            return {"count": 0}
        return {"count": len(ordered), "p50Ms": round(ordered[len(ordered) // 2] * 1000, 1),
                "p99Ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 1), "maxMs": round(ordered[-1] * 1000, 1)}
    return {"healthz": summary(latencies["healthz"]), "push": summary(latencies["push"]), "statuses": statuses, "failures": failures}


def main(command: str, *arguments: str) -> dict:
    if command == "many":
        return asyncio.run(many(*arguments))
    if command == "aioapns":
        return asyncio.run(push(*arguments))
    if command == "aioapns-cert":
        return asyncio.run(push_with_certificate(*arguments))
    if command == "kalyke":
        return asyncio.run(push_with_kalyke(*arguments))
    if command == "token-changes":
        return asyncio.run(token_changes(*arguments))
    if command == "cert-push":
        return asyncio.run(post_with_certificate(*arguments))
    if command == "rapid-reset":
        return rapid_reset(*arguments)
    if command == "ping-flood":
        return flood(*arguments, "ping")
    if command == "settings-flood":
        return flood(*arguments, "settings")
    if command == "request":
        return request(*arguments)
    if command == "empty-frames":
        return empty_frames(*arguments)
    if command == "endless-continuation":
        return endless_continuation(*arguments)
    if command == "hpack-bomb":
        return hpack_bomb(*arguments)
    if command == "stall":
        return stall(*arguments)
    if command == "idle":
        return idle(*arguments)
    if command == "dribble":
        return dribble(*arguments)
    if command == "crowd":
        return crowd(*arguments)
    if command == "probe":
        return asyncio.run(probe(*arguments))
    raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
