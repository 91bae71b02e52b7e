"""An implementation of Chime's cryptography that is not Chime's, for its tests.

Python's cryptography (OpenSSL underneath, but its own key handling, DER and JWK code), PyJWT and
http_ece (Mozilla's Web Push encryption). Each command reads its arguments, prints one JSON object
on standard output, and exits 1 with the reason on standard error when a check fails.

    interop.py make-key                          a P-256 key: {"pem": PKCS#8 .p8 text, "point": base64url}
    interop.py sign-jwt PEM KID ISS IAT          a provider token signed by PyJWT: {"token": …}
    interop.py verify-jwt PUBLIC_PEM TOKEN       PyJWT's verification (ES256 only): {"header": …, "claims": …}
    interop.py verify-jwts PUBLIC_PEM FILE       PyJWT's verification of each token in FILE (a JSON list):
                                                 {"results": [{"ok": true, "header": JSON text, "claims": JSON text} or {"ok": false, "error": …}]}
    interop.py make-subscription                 a user agent's keys: {"private": base64url d, "p256dh": …, "auth": …}
    interop.py decrypt-web-push PRIVATE AUTH BODY  http_ece's aes128gcm decryption: {"plaintext": base64url}
    interop.py push PORT PATH TOPIC TOKEN BODY   a push as a provider sends it, over HTTP/1.1 with http.client:
                                                 {"status": …, "body": …, "apns-id": …}
"""
import base64
import http.client
import json
import os
import sys

import http_ece
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def point(public_key) -> str:
    return b64(public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))


def main(command: str, *arguments: str) -> dict:
    if command == "make-key":
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        return {"pem": pem.decode(), "point": point(key.public_key())}
    if command == "sign-jwt":
        pem, kid, iss, iat = arguments
        token = jwt.encode({"iss": iss, "iat": int(iat)}, pem, algorithm="ES256", headers={"kid": kid})
        return {"token": token}
    if command == "verify-jwt":
        pem, token = arguments
        claims = jwt.decode(token, pem, algorithms=["ES256"], options={"verify_iat": False})
        return {"header": jwt.get_unverified_header(token), "claims": claims}
    if command == "verify-jwts":
        pem, path = arguments
        with open(path) as file:
            tokens = json.load(file)
        results = []
        for token in tokens:
            try:
                claims = jwt.decode(token, pem, algorithms=["ES256"], options={
                    "verify_exp": False, "verify_nbf": False, "verify_iat": False, "verify_aud": False, "verify_iss": False})
                # As JSON text: Python's json writes NaN and lone surrogates, which Chime's reader refuses.
                results.append({"ok": True, "header": json.dumps(jwt.get_unverified_header(token)), "claims": json.dumps(claims)})
            except Exception as error:  # PyJWT's refusal, whatever it is: compared, not raised
                results.append({"ok": False, "error": f"{type(error).__name__}: {error}"})
        return {"results": results}
    if command == "make-subscription":
        key = ec.generate_private_key(ec.SECP256R1())
        private = key.private_numbers().private_value.to_bytes(32, "big")
        return {"private": b64(private), "p256dh": point(key.public_key()), "auth": b64(os.urandom(16))}
    if command == "decrypt-web-push":
        private, auth, body = arguments
        key = ec.derive_private_key(int.from_bytes(unb64(private), "big"), ec.SECP256R1())
        plaintext = http_ece.decrypt(unb64(body), private_key=key, auth_secret=unb64(auth), version="aes128gcm")
        return {"plaintext": b64(plaintext)}
    if command == "push":
        port, path, topic, token, body = arguments
        connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
        connection.request("POST", path, body=body.encode(), headers={
            "authorization": f"bearer {token}", "apns-topic": topic, "apns-push-type": "alert", "content-type": "application/json"})
        response = connection.getresponse()
        answer = {"status": response.status, "body": response.read().decode(), "apns-id": response.getheader("apns-id")}
        connection.close()
        return answer
    raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    try:
        print(json.dumps(main(*sys.argv[1:])))
    except Exception as error:  # the reason, for the test's failure message
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
