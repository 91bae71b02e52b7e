"""The web center over TLS and HTTP/2, in headless Chromium against `chime serve --tls-cert …`: the
certificate is made here (a test CA and a server certificate for 127.0.0.1), and the browser trusts
it by its public key (`--ignore-certificate-errors-spki-list`, the SHA-256 of its
SubjectPublicKeyInfo), so it negotiates ALPN h2 as with any trusted site. Signing in, the live event
stream (server-sent events as DATA frames of an HTTP/2 stream), answering an action and the service
worker (which needs a secure context) are checked, and so is the protocol each request used: the
browser's own word (`nextHopProtocol`) and the server's access log (`protocol=HTTP/2`)."""
from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tempfile

import pytest

from chime_harness import ALARM_CATEGORY, BOUND, Chime, wait_for
from conftest import DESKTOP, Center, make_driver
from devtools import active_worker_scope


def openssl(*arguments: str, cwd: str, stdin: bytes | None = None) -> bytes:
    result = subprocess.run(["openssl", *arguments], cwd=cwd, input=stdin, capture_output=True, timeout=60)
    assert result.returncode == 0, f"openssl {arguments[0]}: {result.stderr.decode(errors='replace')}"
    return result.stdout


def make_certificates(directory: str) -> tuple[str, str, str]:
    """A P-256 test CA, and a certificate it signs for 127.0.0.1 and localhost: (certificate, key, CA)."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "2", "-subj", "/CN=Chime web test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign", cwd=directory)
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=directory)
    with open(os.path.join(directory, "server.ext"), "w") as extensions:
        extensions.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "2", "-extfile", "server.ext", cwd=directory)
    return tuple(os.path.join(directory, name) for name in ("server.pem", "server.key", "ca.pem"))


def public_key_hash(certificate: str) -> str:
    """Base64 of the SHA-256 of the certificate's SubjectPublicKeyInfo, as Chromium's flag takes it."""
    directory = os.path.dirname(certificate)
    pem = openssl("x509", "-in", certificate, "-pubkey", "-noout", cwd=directory)
    der = openssl("pkey", "-pubin", "-outform", "der", cwd=directory, stdin=pem)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


@pytest.fixture(scope="module")
def certificates():
    directory = tempfile.mkdtemp(prefix="chime-web-tls-")
    yield make_certificates(directory)
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def tls_driver(certificates):
    # Without the back-forward cache a page left ends its event stream at once (kept in the cache,
    # Chromium keeps the stream open until the browser quits), so the server logs it.
    browser = make_driver(f"--ignore-certificate-errors-spki-list={public_key_hash(certificates[0])}",
                          "--disable-features=BackForwardCache")
    yield browser
    browser.quit()


@pytest.fixture
def tls_center(tls_driver, certificates):
    chime = Chime(tls=certificates).start()
    page = Center(tls_driver, chime)
    page.viewport(*DESKTOP)
    tls_driver.get_log("browser")
    try:
        page.sign_in()
        yield page
        errors = [entry["message"] for entry in tls_driver.get_log("browser")
                  if entry["level"] == "SEVERE" and "/v1/events" not in entry["message"]]
        assert not errors, f"script errors in the page: {errors}"
    finally:
        tls_driver.get("about:blank")
        chime.close()


def logged_requests(chime: Chime) -> list[dict]:
    """The access log's request lines (`INFO request key=value …`), as dictionaries."""
    with open(chime.log_path, errors="replace") as log:
        lines = [line for line in log if " INFO request " in line]
    return [dict(field.split("=", 1) for field in line.split(" INFO request ", 1)[1].split() if "=" in field) for line in lines]


def test_the_center_over_tls_and_http2(tls_center):
    center, chime = tls_center, tls_center.chime
    driver = center.driver
    assert chime.base.startswith("https://")
    assert center.js("return location.protocol") == "https:" and center.js("return window.isSecureContext") is True
    # Over HTTPS the session cookie is Secure, besides HttpOnly and SameSite=Strict.
    cookie = driver.get_cookie("chime_session")
    assert cookie and cookie["secure"] and cookie["httpOnly"] and cookie.get("sameSite") == "Strict", cookie

    # A notification fires a second after the page is live: it arrives through the event stream
    # (the page's only other source is a reload once a minute), as a banner and in the list.
    app = chime.register("com.example.alarm")
    app.set_categories([ALARM_CATEGORY])
    app.add("Alarm", title="Alarm", body="First Alarm", categoryIdentifier="alarm.category",
            trigger={"type": "timeInterval", "timeInterval": 1, "repeats": False})
    center.wait_banner(app.bundle, "Alarm")
    center.wait_note(app.bundle, "Alarm")
    assert center.js("return window.ChimeCenter.connection") == "live"

    # An action answered in the page reaches the app's outbox.
    center.press(lambda: center.action_button(app.bundle, "Alarm", "snooze"))
    wait_for(lambda: [r["actionIdentifier"] for r in app.outbox()] == ["snooze"], BOUND, message="Snooze in the app's outbox")
    center.wait_gone(app.bundle, "Alarm")

    # The service worker registers over HTTPS (it needs a secure context); the page stays under its CSP.
    assert wait_for(lambda: active_worker_scope(driver), BOUND, message="the service worker to be active") == chime.base + "/"
    assert center.watchers()["violations"] == []

    # The browser's word: the page and everything it fetched went over HTTP/2.
    protocols = center.js("""return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
                             .map((e) => [e.name, e.nextHopProtocol])""")
    assert protocols and all(protocol == "h2" for _, protocol in protocols), protocols

    # The server's word, once the page is left (an event stream is logged when it ends): every
    # request of the browser was HTTP/2 — the page, its modules, the sign-in, the event stream, the
    # answer, the worker's script. (This test's own client speaks HTTP/1.1 over TLS, with a token.)
    driver.get("about:blank")

    def browser_requests():
        requests = logged_requests(chime)
        streams = [r for r in requests if r.get("path") == "/v1/events"]
        return requests if streams else None
    requests = wait_for(browser_requests, BOUND, message="the event stream in the access log")
    seen = {(r.get("method"), r.get("route")): r.get("protocol") for r in requests
            if r.get("route") in ("/", "/{asset}", "/v1/session", "/v1/events",
                                  "/v1/apps/{app}/notifications/{identifier}/responses")}
    expected = {("GET", "/{asset}"), ("POST", "/v1/session"), ("GET", "/v1/events"),
                ("POST", "/v1/apps/{app}/notifications/{identifier}/responses")}
    assert expected <= set(seen), seen
    assert all(protocol == "HTTP/2" for protocol in seen.values()), seen
    events = [r for r in requests if r.get("path") == "/v1/events"]
    assert all(r.get("status") == "200" for r in events), events
