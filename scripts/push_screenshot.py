#!/usr/bin/env python3
"""A pushed notification on the desktop, for scripts/push-screenshot.sh (which runs this in its
private desktop session and takes the picture).

Starts `chime serve` (serving Web/ from disk), delivers the alarm example's notification, signs
Chromium in to the web center, grants it notifications, closes the center's tab (about:blank, as
on a phone with no tab open) and sends the notification as Chime pushes it to the service worker
the center registered: DevTools' ServiceWorker.deliverPushMessage gives the browser the push
message (unencrypted: the push service and the decryption are skipped), the worker's `push`
handler calls showNotification, and Chromium on Linux hands the notification to the desktop's
notification server (org.freedesktop.Notifications on $DBUS_SESSION_BUS_ADDRESS: here dunst).

Prints "shown" once dunst shows the pop-up, then keeps Chromium and the service running until its
standard input closes.
"""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests" / "web"))

from chime_harness import ALARM_CATEGORY, Chime, wait_for  # noqa: E402
from devtools import DevTools, WorkerPush, active_worker_scope, grant_notifications  # noqa: E402
from screenshots import REPO, js, make_driver  # noqa: E402

BODY = "Time to get up — Snooze, or add a comment from the pop-up's menu."


def message(app: str, notification: dict) -> dict:
    """The push message Chime's sender makes of a delivered notification (WebPushMessage.show)."""
    def action(described: dict) -> dict:
        entry = {"id": described["identifier"], "title": described["title"], "options": described["options"]}
        if "textInputButtonTitle" in described:
            entry["input"] = {"button": described["textInputButtonTitle"], "placeholder": described["textInputPlaceholder"]}
        return entry
    return {"v": 1, "kind": "show", "app": app, "id": notification["identifier"], "title": notification["title"],
            "subtitle": notification["subtitle"], "body": notification["body"], "badge": None, "level": "active",
            "thread": "", "date": notification["date"], "sound": True, "banner": True,
            "category": ALARM_CATEGORY["identifier"], "dismiss": True, "truncated": False,
            "actions": [action(described) for described in ALARM_CATEGORY["actions"]]}


def popups() -> int:
    answer = subprocess.run(["dunstctl", "count", "displayed"], capture_output=True, text=True, timeout=10)
    return int(answer.stdout.strip() or "0")


def main():
    # Stopped by push-screenshot.sh's clean-up: the browser and the service are stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    chime = Chime(web_dir=str(REPO / "Web")).start()
    driver = tools = None
    try:
        app = chime.register("com.example.alarm")
        app.set_categories([dict(ALARM_CATEGORY, options=["customDismissAction"])])
        app.add("Alarm", title="Alarm", subtitle="First Alarm", body=BODY, sound="default",
                categoryIdentifier=ALARM_CATEGORY["identifier"])
        delivered = wait_for(app.delivered, 10, message="the alarm delivered")[0]

        driver = make_driver()
        # Allowed before the page and its worker first load (a worker reads the permission when it starts).
        grant_notifications(driver, chime.base)
        driver.get(chime.login_url())
        wait_for(lambda: js(driver, "return window.ChimeCenter && window.ChimeCenter.connection") == "live", 15,
                 message="the center")
        wait_for(lambda: active_worker_scope(driver), 15, message="the service worker to be active")
        tools = DevTools(driver)
        push = WorkerPush(tools, chime.base)
        driver.get("about:blank")
        if popups() != 0:
            raise RuntimeError("push-screenshot: a pop-up before the push")
        push.deliver(message(app.bundle, delivered))
        wait_for(lambda: popups() == 1, 15, message="dunst to show the pushed notification")
        print("shown", flush=True)
        sys.stdin.read()
    finally:
        if tools:
            tools.close()
        if driver:
            driver.quit()
        chime.close()


if __name__ == "__main__":
    main()
