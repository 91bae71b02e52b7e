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

CA is a PEM file to trust (TLS), or "-" for h2c on plain TCP.
"""
import asyncio
import json
import socket
import ssl
import sys
import uuid

import h2.config
import h2.connection
import h2.events
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
    raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
