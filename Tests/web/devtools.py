"""The browser's own DevTools connection, for what Selenium does not reach: the service worker's
target, and push messages delivered to the worker.

Used by Tests/web/test_install.py and by scripts/push_screenshot.py. Needs websocket-client (a
dependency of Selenium).
"""
from __future__ import annotations

import itertools
import json
import urllib.request

import websocket

from chime_harness import BOUND, wait_for


class DevTools:
    """The browser's own DevTools connection (beside Selenium's), for the worker's target."""

    def __init__(self, driver):
        address = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        with urllib.request.urlopen(f"http://{address}/json/version", timeout=5) as response:
            url = json.load(response)["webSocketDebuggerUrl"]
        self.socket = websocket.create_connection(url, timeout=15, suppress_origin=True)
        self.ids = itertools.count(1)
        self.events = []

    def send(self, method, params=None, session=None):
        number = next(self.ids)
        message = {"id": number, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            answer = json.loads(self.socket.recv())
            if answer.get("id") == number:
                assert "error" not in answer, f"{method}: {answer['error']}"
                return answer.get("result", {})
            self.events.append(answer)

    def worker_session(self, url_end="/sw.js"):
        def find():
            targets = self.send("Target.getTargets")["targetInfos"]
            return next((t for t in targets if t["type"] == "service_worker" and t["url"].endswith(url_end)), None)
        target = wait_for(find, BOUND, message="the service worker's target")
        return self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]

    def evaluate(self, session, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session)
        assert "exceptionDetails" not in result, f"{expression}: {result['exceptionDetails']}"
        return result["result"].get("value")

    def close(self):
        self.socket.close()


class WorkerPush:
    """Push messages to the service worker that the page of `base` (an origin) registered: DevTools'
    `ServiceWorker.deliverPushMessage` hands the browser a message as its push service would, and
    the browser fires a real `push` event in the worker (the message unencrypted: the push
    service's leg and the decryption are what it skips)."""

    def __init__(self, tools: DevTools, base: str):
        self.tools = tools
        self.base = base
        targets = tools.send("Target.getTargets")["targetInfos"]
        page = next(t["targetId"] for t in targets if t["type"] == "page" and t["url"].startswith(base))
        self.page = tools.send("Target.attachToTarget", {"targetId": page, "flatten": True})["sessionId"]
        tools.send("ServiceWorker.enable", {}, self.page)
        # The browser's own record of push events (DevTools' Background Services panel): the
        # only place that says whether a delivered message reached the worker and how its
        # handler ended, since `deliverPushMessage` answers before the worker has it.
        tools.send("BackgroundService.startObserving", {"service": "pushMessaging"}, self.page)
        tools.send("BackgroundService.setRecording", {"shouldRecord": True, "service": "pushMessaging"}, self.page)
        self.registration = wait_for(self._registration_id, BOUND, message="the worker's registration id")

    def _registration_id(self):
        for event in self.tools.events:
            if event.get("method") == "ServiceWorker.workerRegistrationUpdated":
                for registration in event["params"]["registrations"]:
                    if registration["scopeURL"] == self.base + "/" and not registration.get("isDeleted"):
                        return registration["registrationId"]
        self.tools.send("Runtime.evaluate", {"expression": "1"})  # reads the events that came meanwhile
        return None

    def _worker_statuses(self):
        """The last running status DevTools reported for each version of the registration."""
        statuses = {}
        for event in self.tools.events:
            if event.get("method") == "ServiceWorker.workerVersionUpdated":
                for version in event["params"]["versions"]:
                    if version["registrationId"] == self.registration:
                        statuses[version["versionId"]] = version["runningStatus"]
        return statuses

    def _push_records(self, name: str):
        """The browser's push records of this registration named `name` ("Push event dispatched",
        "Push event completed"), oldest first."""
        return [event["params"]["backgroundServiceEvent"] for event in self.tools.events
                if event.get("method") == "BackgroundService.backgroundServiceEventReceived"
                and event["params"]["backgroundServiceEvent"]["eventName"] == name
                and event["params"]["backgroundServiceEvent"]["serviceWorkerRegistrationId"] == self.registration]

    def deliver(self, message: dict):
        """Delivers `message` as a push and returns once the browser says the worker's `push`
        handler finished with success; fails, saying which, if the browser never dispatched it
        (the worker could not be started: Chromium logs nothing then, and DevTools discards the
        delivery status), if the handler never finished, or if its promise was rejected."""
        dispatched = len(self._push_records("Push event dispatched"))
        completed = len(self._push_records("Push event completed"))
        self.tools.send("ServiceWorker.deliverPushMessage", {"origin": self.base + "/", "registrationId": self.registration,
                                                             "data": json.dumps(message)}, self.page)

        def ended():
            self.tools.send("Target.getTargets")  # reads the events that came meanwhile
            return self._push_records("Push event completed")[completed:] or None
        try:
            records = wait_for(ended, BOUND, message="the push handler to finish")
        except AssertionError:
            if len(self._push_records("Push event dispatched")) > dispatched:
                raise AssertionError("the worker received the push but its handler never finished") from None
            raise AssertionError(f"the browser never dispatched the push (worker statuses {self._worker_statuses()})") from None
        status = {entry["key"]: entry["value"] for entry in records[0]["eventMetadata"]}.get("Status")
        assert status == "Success", f"the worker's push handler ended with {status!r}"


def grant_notifications(driver, base: str):
    driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["notifications"]})


def active_worker_scope(driver):
    """The scope of the page's active service worker, or None while it has none."""
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        navigator.serviceWorker.getRegistration('/').then((r) => done(r && r.active ? r.scope : null), () => done(null));
    """)
