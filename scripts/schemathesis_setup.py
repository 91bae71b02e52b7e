#!/usr/bin/env python3
"""The data scripts/schemathesis.sh tests against, and the configuration that points schemathesis at it.

    schemathesis_setup.py populate URL STATE       apps, notifications, answers, sessions, devices…
    schemathesis_setup.py damage STORE STATE       (service stopped) pending rows made unfit to fire
    schemathesis_setup.py configure URL STATE CONFIG CACHE

STATE is a JSON file the steps share: what `populate` made, for `damage` and `configure`. The owner
token is read from CHIME_OWNER_TOKEN. Standard library only (runs before any virtualenv).
"""
from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

APP = "com.example.schemathesis"
DOOMED = "com.example.schemathesis.doomed"  # DELETE /v1/apps/{app}
CLEARED = "com.example.schemathesis.cleared"  # DELETE /v1/apps/{app}/notifications
ASKED = "com.example.schemathesis.asked"  # POST …/authorization/answer
SUMMARY = "com.example.schemathesis.summary"  # GET and PUT …/summary
UNSUMMARIZED = "com.example.schemathesis.unsummarized"  # DELETE …/summary
# Pending requests of APP that `damage` moves under this name: U+212A KELVIN SIGN, which no route
# admits (identifiers are compared by their scalars), so the scheduler cannot deliver them.
LOOK_ALIKE = "com.example.schemathesis.\u212aiosk"
DELIVERED = 120  # an answer removes a delivered notification: enough for the run's answers
QUARANTINED = 6
BOUND = 60  # seconds, for anything waited for


def call(url, method, path, body=None, headers=None, expect=(200, 201, 204)):
    """One request as the owner; the answer's JSON (None when it has no body) and its headers."""
    request = urllib.request.Request(
        url + path, method=method, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + os.environ["CHIME_OWNER_TOKEN"], "Content-Type": "application/json",
                 **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, raw, answer_headers = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        raise SystemExit(f"schemathesis setup: {method} {path}: {error.code} {error.read()[:500]!r}") from None
    if status not in expect:
        raise SystemExit(f"schemathesis setup: {method} {path}: {status}")
    return (json.loads(raw) if raw else None), answer_headers


def wait_ready(url):
    deadline = time.monotonic() + BOUND
    while True:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"schemathesis setup: {url}/healthz did not answer within {BOUND} s") from None
            time.sleep(0.1)


def sign_in(url):
    """A web session as a browser gets one: a one-time link from the owner, its code traded for
    the cookie. Returns the cookie header's value and the session's CSRF token."""
    link, _ = call(url, "POST", "/v1/session/links")
    request = urllib.request.Request(url + "/v1/session", method="POST", data=json.dumps({"code": link["code"]}).encode(),
                                     headers={"Content-Type": "application/json", "Origin": url})
    with urllib.request.urlopen(request, timeout=10) as response:
        cookie = response.headers["Set-Cookie"].split(";")[0]
        return cookie, json.loads(response.read())["csrfToken"]


def populate(url, state_path):
    wait_ready(url)
    for name in (APP, DOOMED, CLEARED, ASKED, SUMMARY, UNSUMMARIZED):
        call(url, "POST", "/v1/apps", {"bundleIdentifier": name})
        call(url, "POST", f"/v1/apps/{name}/authorization", {"options": ["alert", "sound", "badge"]})
    call(url, "PUT", f"/v1/apps/{APP}/categories", [{
        "identifier": "schemathesis.category", "options": [],
        "actions": [{"identifier": "ok", "title": "OK", "options": []},
                    {"identifier": "reply", "title": "Reply", "options": [], "textInputButtonTitle": "Send",
                     "textInputPlaceholder": "Message"}]}])
    # Escalating, so each has a receipt (kept after it is answered); the first alert again comes
    # after the run.
    delivered = [f"schemathesis.delivered.{n}" for n in range(DELIVERED)]
    call(url, "POST", f"/v1/apps/{APP}/requests", [
        {"identifier": identifier, "title": "Delivered", "categoryIdentifier": "schemathesis.category",
         "escalateEvery": 3600, "escalateFor": 7200} for identifier in delivered])
    call(url, "POST", f"/v1/apps/{APP}/requests", [
        {"identifier": "schemathesis.pending", "title": "Pending",
         "trigger": {"type": "timeInterval", "timeInterval": 3600, "repeats": True}}])
    poisoned = [f"schemathesis.poisoned.{n}" for n in range(QUARANTINED)]
    call(url, "POST", f"/v1/apps/{APP}/requests", [
        {"identifier": identifier, "title": "Poisoned", "trigger": {"type": "timeInterval", "timeInterval": 86400}}
        for identifier in poisoned])
    # Two answered: the outbox has entries (their ids for …/responses/{id}).
    answers = [call(url, "POST", f"/v1/apps/{APP}/notifications/{identifier}/responses", {"actionIdentifier": "ok"})[0]["id"]
               for identifier in delivered[:2]]
    call(url, "POST", f"/v1/apps/{CLEARED}/requests", [{"identifier": f"cleared.{n}", "title": "Cleared"} for n in range(3)])
    for name in (SUMMARY, UNSUMMARIZED):
        call(url, "PUT", f"/v1/apps/{name}/summary", {"times": ["08:00", "18:00"], "timeZone": "UTC"})
    device = call(url, "GET", f"/v1/apps/{APP}/device-token")[0]["deviceToken"]
    focus, doomed_focus = "Schemathesis", "Schemathesis doomed"
    for name in (focus, doomed_focus):
        call(url, "PUT", "/v1/focus/" + urllib.parse.quote(name), {"allowedApps": [APP]})
    # A subscriber's key as a browser makes it: a point on P-256 (a fixed one; only its form and that
    # it is on the curve are checked) and a 16-byte secret.
    keys = {"p256dh": "BO6CoUsJauLe1pFeh_UEM2GnOGB5jFsaVPQhNfjve_js2eCOfq0L2Tw5rt8xDU-o_BfHVUSt4sZGA7W8PZH5JwE",
            "auth": "oNxY6A5uAn0qUPWKu3V_Pw"}
    subscription, doomed_subscription = (
        call(url, "POST", "/v1/web-push/subscriptions",
             {"endpoint": f"http://127.0.0.1:9/schemathesis/{n}", "keys": keys, "name": n})[0]["id"]
        for n in ("kept", "doomed"))
    kept_session, ended_session = sign_in(url), sign_in(url)
    with open(state_path, "w") as f:
        json.dump({"delivered": delivered, "poisoned": poisoned, "answers": answers, "device": device, "focus": focus,
                   "doomedFocus": doomed_focus, "subscription": subscription, "doomedSubscription": doomed_subscription,
                   "keptSession": kept_session, "endedSession": ended_session}, f)


def damage(store_path, state_path):
    with open(state_path) as f:
        state = json.load(f)
    with sqlite3.connect(store_path) as db:
        marks = ",".join("?" * len(state["poisoned"]))
        moved = db.execute(f"UPDATE pending SET app = ?, next_fire = ? WHERE app = ? AND identifier IN ({marks})",
                           [LOOK_ALIKE, time.time(), APP, *state["poisoned"]]).rowcount
    if moved != len(state["poisoned"]):
        raise SystemExit(f"schemathesis setup: moved {moved} of {len(state['poisoned'])} pending rows "
                         "(the pending table's layout changed?)")


def configure(url, state_path, config_path, cache):
    wait_ready(url)
    with open(state_path) as f:
        state = json.load(f)
    deadline = time.monotonic() + BOUND
    while True:
        quarantined = [entry["id"] for entry in call(url, "GET", "/v1/quarantine")[0]]
        if len(quarantined) >= len(state["poisoned"]):
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"schemathesis setup: {len(quarantined)} of {len(state['poisoned'])} damaged rows "
                             f"quarantined after {BOUND} s")
        time.sleep(0.1)

    def strings(values):
        return "[" + ", ".join(json.dumps(str(v)) for v in values) + "]"

    def own(operation, parameter, dictionary, keep_responses=False):
        """An operation whose parameter takes names from a dictionary of its own; unless
        `keep_responses`, not the names other answers showed (they include the first app's)."""
        text = f'\n[[operations]]\ninclude-name = "{operation}"\n'
        text += f'parameters = {{ "{parameter}" = {{ dictionary = "{dictionary}", probability = 0.8 }} }}\n'
        if not keep_responses:
            text += "phases.coverage.extra-data-sources.responses = false\n"
            text += "phases.fuzzing.extra-data-sources.responses = false\n"
        return text

    kept_cookie, _ = state["keptSession"]
    ended_cookie, ended_csrf = state["endedSession"]
    dictionaries = {
        "apps": [APP], "doomed": [DOOMED], "cleared": [CLEARED], "asked": [ASKED], "summary": [SUMMARY],
        "unsummarized": [UNSUMMARIZED], "notifications": state["delivered"], "responses": state["answers"],
        "devices": [state["device"]], "focus": [state["focus"]], "doomed-focus": [state["doomedFocus"]],
        "subscriptions": [state["subscription"]], "doomed-subscriptions": [state["doomedSubscription"]],
        "quarantine": quarantined,
    }
    text = f"""# Written by scripts/schemathesis_setup.py for one run.
[cache]
directory = {json.dumps(cache)}

[auth.openapi.bearer]
bearer = "${{CHIME_OWNER_TOKEN}}"
"""
    for name, values in dictionaries.items():
        text += f"\n[dictionaries.{name}]\nvalues = {strings(values)}\n"
    text += """
[parameters]
"path.app" = { dictionary = "apps", probability = 0.8 }
"path.identifier" = { dictionary = "notifications", probability = 0.8 }
"path.id" = { dictionary = "responses", probability = 0.6 }
"path.token" = { dictionary = "devices", probability = 0.6 }
"header.apns-topic" = { dictionary = "apps", probability = 0.8 }
"path.name" = { dictionary = "focus", probability = 0.8 }
"""
    text += own("DELETE /v1/apps/{app}", "path.app", "doomed")
    text += own("DELETE /v1/apps/{app}/notifications", "path.app", "cleared")
    text += own("POST /v1/apps/{app}/authorization/answer", "path.app", "asked")
    text += own("GET /v1/apps/{app}/summary", "path.app", "summary")
    text += own("PUT /v1/apps/{app}/summary", "path.app", "summary")
    text += own("DELETE /v1/apps/{app}/summary", "path.app", "unsummarized")
    text += own("DELETE /v1/focus/{name}", "path.name", "doomed-focus")
    text += own("PATCH /v1/web-push/subscriptions/{id}", "path.id", "subscriptions", keep_responses=True)
    text += own("DELETE /v1/web-push/subscriptions/{id}", "path.id", "doomed-subscriptions")
    text += own("DELETE /v1/quarantine/{id}", "path.id", "quarantine")
    # The session routes take a browser's cookie, not the owner's token: one session to read, one
    # to end (with its CSRF token and the page's origin, as the web center sends them).
    text += f'\n[[operations]]\ninclude-name = "GET /v1/session"\nheaders = {{ Cookie = {json.dumps(kept_cookie)} }}\n'
    text += (f'\n[[operations]]\ninclude-name = "DELETE /v1/session"\nheaders = {{ Cookie = {json.dumps(ended_cookie)}, '
             f'"X-CSRF-Token" = {json.dumps(ended_csrf)}, Origin = {json.dumps(url)} }}\n')
    with open(config_path, "w") as f:
        f.write(text)


def main(argv):
    commands = {"populate": (populate, 2), "damage": (damage, 2), "configure": (configure, 4)}
    if len(argv) < 2 or argv[1] not in commands or len(argv) - 2 != commands[argv[1]][1]:
        raise SystemExit(__doc__)
    function, _ = commands[argv[1]]
    function(*argv[2:])


if __name__ == "__main__":
    main(sys.argv)
