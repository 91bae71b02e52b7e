"""The installable web center: the web app manifest and its icons, the service worker, and the
"Notify this device" flow, in real headless Chromium against a real `chime serve`.

Headless Chromium here has no push service (no network, no Google services), so
`pushManager.subscribe` cannot reach one: the subscribe test checks the permission is asked only on
the click and that the page says why it failed. The worker's handlers are checked the way the
browser runs them: a push event delivered by DevTools (`ServiceWorker.deliverPushMessage`, a real
`push` event with the payload Chime's sender encrypts, here unencrypted), then the notification it
shows read back from `registration.getNotifications()`; the click handler is called in the worker
through DevTools (`Runtime.evaluate` on the worker's target), since a synthetic NotificationEvent
cannot be dispatched as a trusted one, and its answer is read from the app's outbox; likewise the
close handler's dismissal. A trimmed push is completed from the service before it shows."""
from __future__ import annotations

import json
import struct
import urllib.request

from chime_harness import ALARM_CATEGORY, BOUND, wait_for
from devtools import DevTools, WorkerPush, active_worker_scope, grant_notifications

# The alarm example's category, with the dismissal told to the app.
ALARM = dict(ALARM_CATEGORY, options=["customDismissAction"])


def get(chime, path):
    with urllib.request.urlopen(chime.base + path, timeout=10) as response:
        return response.status, dict(response.headers), response.read()


def png_size(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def wait_worker(center):
    return wait_for(lambda: active_worker_scope(center.driver), BOUND, message="the service worker to be active")


def test_manifest_is_valid_and_its_icons_are_served(center):
    chime = center.chime
    status, headers, body = get(chime, "/manifest.webmanifest")
    assert status == 200 and headers["Content-Type"] == "application/manifest+json"
    manifest = json.loads(body)
    assert manifest["name"] and manifest["short_name"] == "Chime"
    assert manifest["display"] == "standalone" and manifest["start_url"] == "/" and manifest["scope"] == "/" and manifest["id"] == "/"
    assert manifest["theme_color"].startswith("#") and manifest["background_color"].startswith("#")
    sizes = {}
    for icon in manifest["icons"]:
        status, headers, data = get(chime, icon["src"])
        assert status == 200 and headers["Content-Type"] == icon["type"], icon
        if icon["type"] == "image/png":
            width, height = png_size(data)
            assert f"{width}x{height}" == icon["sizes"], icon
            sizes.setdefault(icon["purpose"], set()).add(width)
    assert sizes == {"any": {192, 512}, "maskable": {512}}
    # Chromium's own reading of it: the page links it, and it parses without errors.
    result = center.driver.execute_cdp_cmd("Page.getAppManifest", {})
    assert result["url"] == chime.base + "/manifest.webmanifest"
    assert result["errors"] == [], result["errors"]
    assert json.loads(result["data"])["short_name"] == "Chime"
    assert center.watchers()["violations"] == []


def test_service_worker_registers_and_caches_nothing(center):
    chime = center.chime
    status, headers, body = get(chime, "/sw.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert b'addEventListener("fetch"' not in body, "the worker must not answer (or cache) requests"
    assert wait_worker(center) == chime.base + "/"
    # The page stays under its CSP with the worker and manifest.
    assert center.watchers()["violations"] == []


def test_notify_this_device_asks_only_on_the_click(center):
    driver = center.driver
    center.press(lambda: driver.find_element("id", "tab-apps"))
    wait_for(lambda: driver.find_elements("id", "notify-device"), BOUND, message="the Notify this device button")
    # Loading the page asked nothing: the permission is still the browser's default.
    assert center.js("return Notification.permission") == "default"
    grant_notifications(driver, center.chime.base)
    button = wait_for(lambda: driver.find_elements("id", "notify-device"), BOUND, message="the Notify this device button")[0]
    assert button.text == "Notify this device"
    assert wait_for(lambda: driver.find_elements("id", "install-hint") or driver.find_elements("id", "install-app"), BOUND)
    wait_worker(center)
    center.press(lambda: driver.find_element("id", "notify-device"))
    # Offline headless Chromium has no push service: either it subscribed (then the service has
    # this device) or the page says the subscription failed; it never stays busy.
    def settled():
        if driver.find_elements("id", "device-subscription"):
            return "subscribed"
        errors = driver.find_elements("css selector", "#device-push .device-error")
        return "failed: " + errors[0].text if errors else None
    outcome = wait_for(settled, BOUND, message="the subscription to finish")
    if outcome == "subscribed":
        records = center.chime.request("GET", "/v1/web-push/subscriptions").json()
        assert len(records) == 1
        center.press(lambda: driver.find_element("id", "device-remove"))
        wait_for(lambda: driver.find_elements("id", "notify-device"), BOUND, message="the button back after removing")
        assert center.chime.request("GET", "/v1/web-push/subscriptions").json() == []
    else:
        assert "Could not turn on notifications" in outcome, outcome
    print("subscribe outcome:", outcome)


def test_worker_shows_a_push_and_answers_from_the_notification(center_notifying):
    center = center_notifying
    driver, chime = center.driver, center.chime
    app = chime.register("com.example.alarm")
    app.set_categories([ALARM])
    app.add("wake", title="Alarm", body="Wake up", categoryIdentifier="alarm.category")
    wait_worker(center)
    tools = DevTools(driver)
    try:
        payload = {"v": 1, "kind": "show", "app": app.bundle, "id": "wake", "title": "Alarm", "subtitle": "", "body": "Wake up",
                   "badge": 1, "level": "active", "category": "alarm.category", "dismiss": True, "truncated": False,
                   "actions": [{"id": "snooze", "title": "Snooze 5 Sec", "options": []},
                               {"id": "comment", "title": "Add Comment", "options": [],
                                "input": {"button": "Send", "placeholder": "Type a comment"}}]}
        push = WorkerPush(tools, chime.base)
        # A real push event, delivered by the browser to the registered worker.
        push.deliver(payload)
        shown = wait_for(lambda: shown_notifications(center) or None, BOUND, message="the pushed notification shown")
        assert len(shown) == 1
        assert shown[0]["title"] == "Alarm" and shown[0]["body"] == "Wake up"
        assert shown[0]["tag"] == json.dumps([app.bundle, "wake"], separators=(",", ":"))
        assert shown[0]["actions"][0] == ["snooze", "Snooze 5 Sec"]
        assert shown[0]["data"]["app"] == app.bundle and shown[0]["data"]["dismiss"] is True
        print("shown:", shown[0])
        worker = tools.worker_session()
        # Snooze, pressed on the notification: the answer reaches the app.
        tools.evaluate(worker, """self.registration.getNotifications().then((all) =>
            self.ChimeWorker.handleClick(all[0], "snooze", null)).then(() => true)""")
        outbox = wait_for(lambda: app.outbox() or None, BOUND, message="Snooze in the app's outbox")
        assert outbox[0]["actionIdentifier"] == "snooze"
        # A close push (the service removed it): the notification goes.
        push.deliver({"v": 1, "kind": "close", "app": app.bundle, "ids": ["wake"]})
        wait_for(lambda: shown_notifications(center) == [], BOUND, message="the close push to close it")
        # A trimmed push (truncated: true) is completed from the service before it shows.
        app.add("long", title="Alarm", body="Wake up, the taxi is here", categoryIdentifier="alarm.category")
        trimmed = dict(payload, id="long", body="Wake up, th…", truncated=True)
        push.deliver(trimmed)
        shown = wait_for(lambda: shown_notifications(center) or None, BOUND, message="the trimmed push shown")
        assert shown[0]["body"] == "Wake up, the taxi is here"
        # Closed by the user: the category asked for customDismissAction, so the app hears of it.
        tools.evaluate(worker, """self.registration.getNotifications().then((all) =>
            self.ChimeWorker.handleClose(all[0])).then(() => true)""")
        wait_for(lambda: any(r["actionIdentifier"] == "com.apple.UNNotificationDismissActionIdentifier" for r in app.outbox()), BOUND,
                 message="the dismissal in the app's outbox")
    finally:
        tools.close()


def shown_notifications(center):
    """What the worker's registration shows now, read from the page."""
    return center.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((all) => done(all.map((n) => ({
          title: n.title, body: n.body, tag: n.tag, actions: n.actions.map((a) => [a.action, a.title]), data: n.data}))),
          (e) => done([String(e)]));
    """)
