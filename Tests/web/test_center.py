"""The web notification center in a real browser (headless Chromium), against a real `chime serve`."""
from __future__ import annotations

import json
import re
import threading
from datetime import datetime, timezone

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from chime_harness import ALARM_CATEGORY, BOUND, q, wait_for

DEFAULT = "com.apple.UNNotificationDefaultActionIdentifier"
DISMISS = "com.apple.UNNotificationDismissActionIdentifier"


def record_banner_times(center):
    """Notes the time each banner appears (a MutationObserver in the page)."""
    center.js("""
        window.__bannerTimes = {};
        new MutationObserver(() => {
          for (const note of document.querySelectorAll('#banners article.note')) {
            const id = note.dataset.identifier;
            if (!(id in window.__bannerTimes)) window.__bannerTimes[id] = Date.now();
          }
        }).observe(document.getElementById('banners'), {childList: true, subtree: true});
    """)


def seconds_between(earlier: str, later: str) -> float:
    """The seconds from one of the service's ISO 8601 dates to another."""
    def parse(text):
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (parse(later) - parse(earlier)).total_seconds()


def registered_with_reads_counted(center, bundle: str):
    """Registers an app, waits until the page has finished the reads that registering asked for, and
    starts the count of the page's requests from there (`app_reads`)."""
    app = center.chime.register(bundle)
    wait_for(lambda: center.app_card(app.bundle), BOUND, message="the app in the apps panel")
    # The page takes events one batch after another: once this request shows, every read that
    # registering asked for has finished, so the count starts clean.
    app.add("marker", title="Marker", trigger={"type": "timeInterval", "timeInterval": 7200, "repeats": False})
    wait_for(lambda: center.in_app_card(app.bundle, '.pending-item[data-identifier="marker"]'), BOUND, message="the marker request")
    center.js("performance.setResourceTimingBufferSize(10000); performance.clearResourceTimings()")
    return app


def app_reads(center) -> list[str]:
    """The paths under /v1/apps the page requested since the count started."""
    requested = center.js("return performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)")
    return [path for path in requested if path.startswith("/v1/apps")]


# ---------------------------------------------------------------------------------------------
# Signing in and CSRF


def test_sign_in_link_works_once(driver, chime):
    from conftest import Center
    page = Center(driver, chime)
    driver.delete_all_cookies()
    driver.get(chime.base + "/")
    page.wait_screen("signin")
    assert "chime open" in driver.find_element("id", "signin").text

    url = page.sign_in()
    assert "login=" not in driver.current_url, "the one-time code must leave the address bar"
    assert page.js("return location.hash") == ""
    cookie = driver.get_cookie("chime_session")
    assert cookie and cookie["httpOnly"] and cookie.get("sameSite") == "Strict"
    assert page.js("return document.cookie").find("chime_session") == -1

    # The same link again, in a browser without the session: refused.
    driver.delete_all_cookies()
    driver.get("about:blank")
    driver.get(url)
    page.wait_screen("signin")
    message = wait_for(lambda: driver.find_element("css selector", ".signin-error").text, BOUND, message="the sign-in error")
    assert "already used" in message or "expired" in message
    # A fresh link works.
    page.sign_in()


def test_state_changes_need_the_cookie_and_the_csrf_token(center):
    chime = center.chime
    app = chime.register("com.example.csrf", allow=None)  # a permission question waits
    answer = f"/v1/apps/{q(app.bundle)}/authorization/answer"
    body = {"allow": True}

    # Without the session cookie (and without a token): refused.
    assert chime.request("POST", answer, body).status == 401
    assert chime.request("DELETE", f"/v1/apps/{q(app.bundle)}").status == 401
    assert chime.request("DELETE", "/v1/session").status == 401

    cookie = center.driver.get_cookie("chime_session")["value"]
    session = {"Cookie": f"chime_session={cookie}"}
    csrf = chime.request("GET", "/v1/session", headers=session).json["csrfToken"]
    # Reading works with the cookie alone.
    assert chime.request("GET", "/v1/apps", headers=session).status == 200
    # A change with the cookie but no CSRF token, a wrong one, or from another origin: refused.
    assert chime.request("POST", answer, body, headers=session).status == 403
    wrong = chime.request("POST", answer, body, headers={**session, "X-CSRF-Token": "0" * 64})
    assert wrong.status == 403 and wrong.json["error"]["code"] == "csrf"
    foreign = chime.request("POST", answer, body, headers={**session, "X-CSRF-Token": csrf, "Origin": "http://evil.example"})
    assert foreign.status == 403
    assert chime.request("GET", f"/v1/apps/{q(app.bundle)}", token=chime.owner_token).json["promptPending"] is True

    # The page itself with a wrong token: refused too.
    status = center.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch(arguments[0], {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': 'nope'},
                             body: JSON.stringify({allow: true})}).then((r) => done(r.status), () => done(-1));
    """, answer)
    assert status == 403

    # And with the right token the same change goes through (the refusals above were the token's).
    assert chime.request("POST", answer, body, headers={**session, "X-CSRF-Token": csrf}).status == 200


# ---------------------------------------------------------------------------------------------
# Live delivery, banners, presentation and sound


def test_scheduled_notification_appears_as_banner_and_in_list(center):
    chime = center.chime
    app = chime.register("com.example.alarm")
    app.set_categories([ALARM_CATEGORY])
    record_banner_times(center)
    chimes = center.chimes()
    # The page learns of the new app from its event and reads its lists once. It takes events one
    # batch after another: once this request shows, those reads have finished, so the count below
    # starts clean (without the marker, a read still under way when the count started was counted).
    app.add("marker", title="Marker", trigger={"type": "timeInterval", "timeInterval": 7200, "repeats": False})
    wait_for(lambda: center.in_app_card(app.bundle, '.pending-item[data-identifier="marker"]'), BOUND, message="the marker request")
    center.js("performance.setResourceTimingBufferSize(10000); performance.clearResourceTimings()")
    app.add("Alarm", title="Alarm", subtitle="First Alarm", body="First Alarm", sound="default",
            categoryIdentifier="alarm.category", trigger={"type": "timeInterval", "timeInterval": 1.5, "repeats": False})

    banner = center.wait_banner(app.bundle, "Alarm")
    delivered = app.delivered()[0]
    shown_at = center.js("return window.__bannerTimes['Alarm']")
    delivered_at = center.js("return Date.parse(arguments[0])", delivered["date"])
    # Live: the banner follows the delivery, drawn from the event stream; the page read no list to
    # find it (a reload would have). How quickly is the machine's business, not this test's.
    assert shown_at >= delivered_at, f"the banner came {delivered_at - shown_at} ms before the delivery"
    paths = center.js("return performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)")
    assert f"/v1/apps/{q(app.bundle)}/notifications" not in paths, paths
    assert "Alarm" in banner.text and "First Alarm" in banner.text
    assert [b.text for b in banner.find_elements("css selector", "button.action")] == ["Snooze 5 Sec", "Add Comment"]

    card = center.wait_note(app.bundle, "Alarm")
    assert "First Alarm" in card.text
    assert card.find_element("css selector", "time").get_attribute("title")  # exact time on hover
    assert card.find_element("css selector", "time").text == "now"
    wait_for(lambda: center.chimes() == chimes + 1, BOUND, message="a chime (the app's settings allow sound)")


def test_presentation_passive_time_sensitive_critical_and_settings(center):
    chime = center.chime
    app = chime.register("com.example.levels", options=["alert", "sound", "badge", "timeSensitive", "criticalAlert"])
    record_banner_times(center)
    chimes = center.chimes()

    app.add("quiet", title="Quiet one", body="passive", sound="default", interruptionLevel="passive")
    center.wait_note(app.bundle, "quiet")
    app.add("urgent", title="Leave now", body="time sensitive", sound="default", interruptionLevel="timeSensitive")
    banner = center.wait_banner(app.bundle, "urgent")
    assert center.banner(app.bundle, "quiet") is None, "a passive notification goes to the list only"
    assert "TIME SENSITIVE" in banner.text.upper()
    assert banner.get_attribute("data-level") == "timeSensitive"
    wait_for(lambda: center.chimes() == chimes + 1, BOUND, message="one chime (the passive one is silent)")
    assert center.js("return document.body.dataset.lastChime") == "timeSensitive"

    app.add("fire", title="Smoke detected", body="critical", sound={"name": "default", "critical": True, "volume": 1.0},
            interruptionLevel="critical")
    critical = center.wait_banner(app.bundle, "fire")
    assert "CRITICAL" in critical.text.upper()
    assert "level-critical" in critical.get_attribute("class")
    wait_for(lambda: center.chimes() == chimes + 2, BOUND, message="a chime for the critical alert")

    # Sounds off in the apps panel: the next notification shows a banner but plays nothing.
    switch = lambda: center.in_app_card(app.bundle, "button.switch[data-setting='soundSetting']")  # noqa: E731
    assert switch().get_attribute("aria-checked") == "true"
    center.press(switch)
    wait_for(lambda: app.call("GET", "/settings").json["soundSetting"] == "disabled", BOUND, message="sounds off on the server")
    wait_for(lambda: switch().get_attribute("aria-checked") == "false", BOUND, message="the switch to show off")
    app.add("silent", title="No sound now", body="banner only", sound="default")
    center.wait_banner(app.bundle, "silent")
    # The page plays an arrival's chime in the step that shows its banner (lists.js flush: render,
    # then announce: banner and sound together), so with the banner up the count is final.
    assert center.chimes() == chimes + 2

    # Banners off: the next one goes to the list only.
    center.press(lambda: center.in_app_card(app.bundle, "button.switch[data-setting='alertSetting']"))
    wait_for(lambda: app.call("GET", "/settings").json["alertSetting"] == "disabled", BOUND, message="banners off on the server")
    app.add("listonly", title="List only", body="no banner")
    center.wait_note(app.bundle, "listonly")
    # Its banner would have been put up in the step that drew the card (lists.js flush).
    assert center.banner(app.bundle, "listonly") is None
    # The critical banner is still up (it waits for the user), the others left.
    assert center.banner(app.bundle, "fire") is not None


# ---------------------------------------------------------------------------------------------
# Answers: snooze, comment, dismiss, default action, auth, failures


class AlarmApp:
    """The alarm example's logic, played over HTTP with the app's token (AlarmApp.swift)."""

    def __init__(self, app):
        self.app = app
        self.responses = []
        self.follower = app.follow(self.on_event)

    def on_event(self, kind, data):
        if kind != "response":
            return
        response = data["response"]
        request = response["notification"]
        content = {k: request[k] for k in ("title", "subtitle", "body", "sound", "categoryIdentifier", "threadIdentifier")}
        if response["actionIdentifier"] == "snooze":
            content.update(body="Snooze 5 Seconds", subtitle="Snooze 5 Seconds")
            self.app.add(request["identifier"], trigger={"type": "timeInterval", "timeInterval": 5, "repeats": False}, **content)
        if response["actionIdentifier"] == "comment":
            content.update(body=response["userText"])
            self.app.add(request["identifier"], trigger=request.get("trigger"), **content)
        self.responses.append(response)

    def stop(self):
        self.follower.stop()
        assert not self.follower.errors, self.follower.errors


def test_snooze_brings_the_alarm_back_five_seconds_later(center):
    chime = center.chime
    app = chime.register("com.example.alarm")
    app.set_categories([ALARM_CATEGORY])
    alarm = AlarmApp(app)
    try:
        app.add("Alarm", title="Alarm", subtitle="First Alarm", body="First Alarm", sound="default",
                categoryIdentifier="alarm.category", trigger={"type": "timeInterval", "timeInterval": 1, "repeats": False})
        center.wait_note(app.bundle, "Alarm")
        center.press(lambda: center.action_button(app.bundle, "Alarm", "snooze"))
        # Shown as sent, then gone from the center (the answer removed it).
        wait_for(lambda: center.js("return document.getElementById('toasts').textContent").find("Sent “Snooze 5 Sec”") >= 0, BOUND,
                 message="the sent confirmation")
        center.wait_gone(app.bundle, "Alarm")
        wait_for(lambda: [r["actionIdentifier"] for r in alarm.responses] == ["snooze"], BOUND, message="the app to hear of the snooze")
        answer = app.outbox()[0]
        assert answer["actionIdentifier"] == "snooze"
        assert [r["identifier"] for r in app.pending()] == ["Alarm"]

        back = center.wait_banner(app.bundle, "Alarm")
        # Dated by the service: due 5 s after the app heard the answer, so at least 5 s after it.
        later = seconds_between(answer["date"], app.delivered()[0]["date"])
        assert later >= 5, f"came back {later:.1f} s after the snooze"
        assert "Snooze 5 Seconds" in back.text
        assert "Snooze 5 Seconds" in center.wait_note(app.bundle, "Alarm").text
    finally:
        alarm.stop()


def test_snooze_on_the_alarm_example_app(center):
    """The real alarm example (Examples/alarm, Swift, Apple's API) connected to the service with
    CHIME_SERVICE: its notification goes off 10 s after start; Snooze in the browser reaches its
    delegate, which schedules it again 5 s later."""
    import os
    import subprocess

    chime = center.chime
    app = chime.register("com.example.alarm")
    env = dict(os.environ, CHIME_SERVICE=chime.base, CHIME_APP_TOKEN=app.token, CHIME_BUNDLE_IDENTIFIER=app.bundle)
    log_path = os.path.join(chime.data_dir, "alarm.log")
    with open(log_path, "wb") as log:
        # stdin stays open (a pipe never written): the example reads answers from it until it ends.
        example = subprocess.Popen([os.environ["ALARM_BIN"], "--exit-after", "60"], env=env, stdin=subprocess.PIPE,
                                   stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: [c["identifier"] for c in app.call("GET", "/categories").json] == ["alarm.category"], BOUND,
                 message="the example to register its category")
        note = center.wait_note(app.bundle, "Alarm")
        assert "First Alarm" in note.text
        first = app.delivered()[0]["date"]
        center.press(lambda: center.action_button(app.bundle, "Alarm", "snooze"))
        center.wait_gone(app.bundle, "Alarm")
        back = center.wait_banner(app.bundle, "Alarm")
        # Dated by the service: due 5 s after the example heard the answer, given after the first.
        later = seconds_between(first, app.delivered()[0]["date"])
        assert later >= 5, f"came back {later:.1f} s after the first alarm"
        assert "Snooze 5 Seconds" in back.text
        wait_for(lambda: app.outbox() == [], BOUND, message="the example to acknowledge the answer")
    finally:
        example.terminate()
        example.wait(timeout=10)
        with open(log_path, "rb") as log:
            output = log.read().decode(errors="replace")
        assert "Connected to the Chime service" in output, output


def test_typed_comment_reaches_the_outbox(center):
    chime = center.chime
    app = chime.register("com.example.alarm")
    app.set_categories([ALARM_CATEGORY])
    alarm = AlarmApp(app)
    try:
        app.add("Alarm", title="Alarm", subtitle="First Alarm", body="First Alarm", sound="default", categoryIdentifier="alarm.category")
        center.wait_note(app.bundle, "Alarm")
        center.press(lambda: center.action_button(app.bundle, "Alarm", "comment"))
        field = wait_for(lambda: center.in_card(app.bundle, "Alarm", "input.reply-input"), BOUND, message="the reply field")
        assert field.get_attribute("placeholder") == "Add Comment Here"
        assert center.in_card(app.bundle, "Alarm", "button.reply-send").text == "Add"
        assert center.driver.switch_to.active_element == field
        text = "Call me at 9 <b>not bold</b> & \"quoted\""
        field.send_keys(text)
        field.send_keys(Keys.ENTER)
        wait_for(lambda: app.outbox(), BOUND, message="the response in the outbox")
        response = app.outbox()[0]
        assert response["actionIdentifier"] == "comment"
        assert response["userText"] == text
        # The app used the comment as the next alarm's body: shown literally.
        wait_for(lambda: (center.note(app.bundle, "Alarm") or center.driver.find_element("id", "list")).text.find(text) >= 0, BOUND,
                 message="the comment as the new body")
    finally:
        alarm.stop()


def test_desktop_reply_link_opens_the_reply_field(driver, chime):
    """A desktop pop-up's text-input action, on a notification server without inline reply, opens
    the center with `#login=CODE&reply=APP/NOTIFICATION/ACTION` (Sources/ChimeServer/Web/WebCenterReplyPrompt.swift)."""
    from conftest import Center, DESKTOP
    page = Center(driver, chime)
    page.viewport(*DESKTOP)
    app = chime.register("com.example.alarm")
    app.set_categories([ALARM_CATEGORY])
    app.add("wake/up now", title="Alarm", body="Get up", categoryIdentifier="alarm.category")
    url = chime.login_url() + "&reply=" + "/".join(q(part) for part in (app.bundle, "wake/up now", "comment"))
    driver.get("about:blank")
    driver.get(url)
    page.wait_screen("center")
    field = wait_for(lambda: page.in_card(app.bundle, "wake/up now", "input.reply-input"), BOUND, message="the reply field the link opens")
    wait_for(lambda: driver.switch_to.active_element == field, BOUND, message="the reply field to have the focus")
    assert "login=" not in driver.current_url and "reply=" not in driver.current_url
    field.send_keys("on my way")
    field.send_keys(Keys.ENTER)
    wait_for(lambda: app.outbox(), BOUND, message="the typed reply in the outbox")
    response = app.outbox()[0]
    assert response["actionIdentifier"] == "comment" and response["userText"] == "on my way"
    driver.get("about:blank")


def test_dismiss_tells_the_app_only_with_custom_dismiss_action(center):
    chime = center.chime
    app = chime.register("com.example.dismiss")
    app.set_categories([
        {"identifier": "plain", "actions": [{"identifier": "ok", "title": "OK"}]},
        {"identifier": "custom", "actions": [{"identifier": "ok", "title": "OK"}], "options": ["customDismissAction"]},
    ])
    app.add("p", title="Plain", body="no dismiss action", categoryIdentifier="plain", threadIdentifier="p")
    app.add("c", title="Custom", body="custom dismiss action", categoryIdentifier="custom", threadIdentifier="c")
    app.add("d", title="Open me", body="the body is the default action", categoryIdentifier="plain", threadIdentifier="d")
    for identifier in ("p", "c", "d"):
        center.wait_note(app.bundle, identifier)

    center.press(lambda: center.in_card(app.bundle, "p", "button.note-close"))
    center.wait_gone(app.bundle, "p")
    center.press(lambda: center.in_card(app.bundle, "c", "button.note-close"))
    center.wait_gone(app.bundle, "c")
    center.press(lambda: center.in_card(app.bundle, "d", "button.note-body"))
    center.wait_gone(app.bundle, "d")

    outbox = app.outbox()
    assert [(r["notification"]["identifier"], r["actionIdentifier"]) for r in outbox] == [("c", DISMISS), ("d", DEFAULT)]
    assert app.delivered() == []


def test_actions_destructive_confirmation_and_failure_keeps_the_notification(center):
    chime = center.chime
    app = chime.register("com.example.mail")
    category = {"identifier": "mail", "actions": [
        {"identifier": "archive", "title": "Archive"},
        {"identifier": "delete", "title": "Delete", "options": ["destructive"]},
        {"identifier": "pay", "title": "Pay", "options": ["authenticationRequired", "foreground"]},
    ]}
    app.set_categories([category])
    app.add("m1", title="Invoice", body="Due today", categoryIdentifier="mail")
    card = center.wait_note(app.bundle, "m1")
    buttons = card.find_elements("css selector", "button.action")
    assert [b.text for b in buttons] == ["Archive", "Delete", "Pay"]
    assert "destructive" in buttons[1].get_attribute("class")
    assert "destructive" not in buttons[0].get_attribute("class")

    # authenticationRequired asks first; Escape (or Cancel) sends nothing.
    center.press(lambda: center.action_button(app.bundle, "m1", "pay"))
    dialog = wait_for(lambda: center.js("const d = document.getElementById('confirm'); return d.open ? d : null"), BOUND, message="the confirmation")
    assert "Pay" in dialog.text
    ActionChains(center.driver).send_keys(Keys.ESCAPE).perform()
    wait_for(lambda: not center.js("return document.getElementById('confirm').open"), BOUND, message="the dialog to close")
    # A sent answer would show "Sending" on the card at once, and stay in the outbox: the end of
    # this test finds exactly one answer there, the confirmed one.
    assert center.in_card(app.bundle, "m1", ".note-status") is None
    assert app.outbox() == []
    assert center.note(app.bundle, "m1") is not None

    # A failure (the service is down when the answer is sent) shows an error and keeps the
    # notification; once the service is back, the notification is still there to answer.
    chime.stop()
    center.press(lambda: center.action_button(app.bundle, "m1", "delete"))
    error = wait_for(lambda: center.in_card(app.bundle, "m1", ".note-status.error"), BOUND, message="the error")
    assert "Could not send “Delete”" in error.text
    assert error.get_attribute("role") == "alert"
    # The error is the end of the failed send (notifications.js answer(): nothing removes the card
    # after it); the notification is still there once the service is back, below.
    assert center.note(app.bundle, "m1") is not None
    chime.start()
    wait_for(lambda: center.js("return window.ChimeCenter.connection") == "live", BOUND, message="the stream to come back")
    assert [n["identifier"] for n in app.delivered()] == ["m1"]
    assert center.wait_note(app.bundle, "m1") is not None

    # Confirmed, it goes through.
    center.press(lambda: center.action_button(app.bundle, "m1", "pay"))
    wait_for(lambda: center.js("return document.getElementById('confirm').open"), BOUND, message="the confirmation")
    center.press(lambda: center.driver.find_element("id", "confirm-ok"))
    wait_for(lambda: app.outbox(), BOUND, message="the confirmed answer")
    assert [r["actionIdentifier"] for r in app.outbox()] == ["pay"]
    center.wait_gone(app.bundle, "m1")


# ---------------------------------------------------------------------------------------------
# Grouping, summaries, hidden previews, clearing


def test_groups_by_app_and_thread_with_summaries(center):
    chime = center.chime
    chat = chime.register("com.example.chat")
    chat.set_categories([
        {"identifier": "message", "categorySummaryFormat": "%u more messages from %@",
         "actions": [{"identifier": "reply", "title": "Reply", "textInputButtonTitle": "Send", "textInputPlaceholder": "Message"}]},
        {"identifier": "news", "actions": []},
    ])
    for name, count in (("Alice", 1), ("Bob", 2), ("Carol", 1), ("Dave", 1)):
        chat.add(f"team-{name}", title=name, body=f"hello from {name}", threadIdentifier="team", categoryIdentifier="message",
                 summaryArgument=name, summaryArgumentCount=count)
    for index in range(3):
        chat.add(f"news-{index}", title=f"Headline {index}", body="news", threadIdentifier="news", categoryIdentifier="news")
    chat.add("solo", title="Alone", body="in its own thread", threadIdentifier="solo")
    other = chime.register("com.example.other")
    other.add("o1", title="Other app", body="another section")

    wait_for(lambda: center.note(other.bundle, "o1") and center.note(chat.bundle, "solo"), BOUND, message="all deliveries")
    sections = center.js("return [...document.querySelectorAll('#list .app-section')].map((s) => s.dataset.app)")
    assert sections == [other.bundle, chat.bundle], "apps with the newest notification first"
    groups = center.js("""return [...document.querySelectorAll('#list .app-section')].find((s) => s.dataset.app === arguments[0])
                           .querySelectorAll('.group')""", chat.bundle)
    assert [g.get_attribute("data-thread") for g in groups] == ["solo", "news", "team"]
    # Collapsed: only the newest of each thread shows, with the summary below.
    wait_for(lambda: center.identifiers(chat.bundle) == ["solo", "news-2", "team-Dave"], BOUND, message="collapsed groups")
    summaries = [s.text for s in center.driver.find_elements("css selector", "#list .stack-summary")]
    assert "2 more notifications" in summaries
    assert "4 more messages from Carol, Bob, and Alice" in summaries

    # Expand with the keyboard, then collapse.
    summary = center.js("""return [...document.querySelectorAll('#list .group')].find((g) => g.dataset.thread === 'team')
                            .querySelector('.stack-summary')""")
    assert summary.get_attribute("aria-expanded") == "false"
    summary.send_keys(Keys.ENTER)
    wait_for(lambda: center.identifiers(chat.bundle) == ["solo", "news-2", "team-Dave", "team-Carol", "team-Bob", "team-Alice"], BOUND,
             message="the expanded thread")
    less = center.driver.switch_to.active_element
    assert less.text == "Show less" and less.get_attribute("aria-expanded") == "true"
    less.send_keys(Keys.ENTER)
    wait_for(lambda: center.identifiers(chat.bundle) == ["solo", "news-2", "team-Dave"], BOUND, message="collapsed again")

    # "Clear" on a group removes that thread only.
    center.press(lambda: center.js("""return [...document.querySelectorAll('#list .group')].find((g) => g.dataset.thread === 'news')
                                        .querySelector('.group-head .text-button:last-child')"""))
    wait_for(lambda: center.identifiers(chat.bundle) == ["solo", "team-Dave"], BOUND, message="the news thread to clear")
    assert sorted(n["identifier"] for n in chat.delivered()) == ["solo", "team-Alice", "team-Bob", "team-Carol", "team-Dave"]


def test_clear_all(center):
    chime = center.chime
    first, second = chime.register("com.example.one"), chime.register("com.example.two")
    second.set_categories([{"identifier": "c", "options": ["customDismissAction"]}])
    for index in range(3):
        first.add(f"a{index}", title=f"One {index}")
        second.add(f"b{index}", title=f"Two {index}", categoryIdentifier="c")
    wait_for(lambda: len(center.identifiers(first.bundle)) + len(center.identifiers(second.bundle)) >= 2, BOUND, message="deliveries")
    wait_for(lambda: len(first.delivered()) == 3 and len(second.delivered()) == 3, BOUND, message="six delivered")
    center.press(lambda: center.driver.find_element("id", "clear-all"))
    wait_for(lambda: center.js("return document.getElementById('confirm').open"), BOUND, message="the confirmation")
    center.press(lambda: center.driver.find_element("id", "confirm-ok"))
    wait_for(lambda: center.driver.find_elements("css selector", "#list .empty"), BOUND, message="the empty center")
    assert first.delivered() == [] and second.delivered() == []
    # The app whose category asks for dismissals heard of each.
    assert sorted(r["notification"]["identifier"] for r in second.outbox()) == ["b0", "b1", "b2"]
    assert first.outbox() == []


def test_hidden_previews_use_the_placeholder(center):
    chime = center.chime
    app = chime.register("com.example.secret")
    app.set_categories([
        {"identifier": "dm", "hiddenPreviewsBodyPlaceholder": "%u new messages", "options": ["hiddenPreviewsShowTitle"]},
        {"identifier": "plain"},
    ])
    app.add("s1", title="From Eve", subtitle="Subject", body="the secret text", categoryIdentifier="dm", threadIdentifier="eve")
    app.add("s2", title="Bank", body="balance 1000", categoryIdentifier="plain", threadIdentifier="bank")
    center.wait_note(app.bundle, "s1")
    center.wait_note(app.bundle, "s2")

    select = lambda: center.in_app_card(app.bundle, "select[data-setting='showPreviewsSetting']")  # noqa: E731
    from selenium.webdriver.support.ui import Select
    Select(select()).select_by_value("never")
    wait_for(lambda: app.call("GET", "/settings").json["showPreviewsSetting"] == "never", BOUND, message="previews off on the server")
    wait_for(lambda: "the secret text" not in center.driver.find_element("id", "list").text, BOUND, message="the body to hide")
    first = wait_for(lambda: center.wait_note(app.bundle, "s1").text, BOUND, message="the first card's text")
    assert "1 new messages" in first and "From Eve" in first and "Subject" not in first
    second = wait_for(lambda: center.wait_note(app.bundle, "s2").text, BOUND, message="the second card's text")
    assert "Notification" in second and "Bank" not in second and "balance" not in second

    Select(select()).select_by_value("whenAuthenticated")
    reveal = wait_for(lambda: center.in_card(app.bundle, "s2", "button.reveal"), BOUND, message="the Show preview button")
    assert "balance" not in center.note(app.bundle, "s2").text
    center.press(lambda: center.in_card(app.bundle, "s2", "button.reveal"))
    wait_for(lambda: "balance 1000" in center.note(app.bundle, "s2").text, BOUND, message="the revealed body")
    assert reveal is not None


# ---------------------------------------------------------------------------------------------
# Apps panel


def test_apps_panel_prompt_settings_requests_and_removal(center):
    chime = center.chime
    asker = chime.register("com.example.asker", allow=None)
    wait_for(lambda: center.in_app_card(asker.bundle, ".prompt"), BOUND, message="the permission prompt")
    prompt = center.in_app_card(asker.bundle, ".prompt")
    assert "would like to send you notifications" in prompt.text
    center.press(lambda: center.in_app_card(asker.bundle, "button[data-answer='allow']"))
    wait_for(lambda: chime.owner("GET", f"/v1/apps/{q(asker.bundle)}").json["settings"]["authorizationStatus"] == "authorized", BOUND,
             message="authorized on the server")
    wait_for(lambda: center.in_app_card(asker.bundle, ".prompt") is None, BOUND, message="the prompt to go")
    assert "Allowed" in center.app_card(asker.bundle).text

    refuser = chime.register("com.example.refuser", allow=None)
    wait_for(lambda: center.in_app_card(refuser.bundle, "button[data-answer='deny']"), BOUND, message="the second prompt")
    center.press(lambda: center.in_app_card(refuser.bundle, "button[data-answer='deny']"))
    wait_for(lambda: chime.owner("GET", f"/v1/apps/{q(refuser.bundle)}").json["settings"]["authorizationStatus"] == "denied", BOUND,
             message="denied on the server")

    # Pending requests with their triggers in words.
    asker.add("weekly", title="Weekly review", trigger={"type": "calendar", "repeats": True,
              "dateComponents": {"weekday": 2, "hour": 8, "minute": 30, "timeZone": "Europe/Berlin"}})
    asker.add("tea", title="Tea", trigger={"type": "timeInterval", "timeInterval": 300})
    asker.add("office", title="At the office", trigger={"type": "location", "region": {
        "identifier": "office", "latitude": 52.52, "longitude": 13.405, "radius": 100, "notifyOnEntry": True, "notifyOnExit": False}})
    asker.add("leave", title="Left the office", trigger={"type": "location", "region": {
        "identifier": "office", "latitude": 52.52, "longitude": 13.405, "radius": 100, "notifyOnEntry": False, "notifyOnExit": True}})
    asker.add("review", title="Review", trigger={"type": "recurrence", "rrule": "FREQ=MONTHLY;BYDAY=-1FR",
              "start": "2027-01-29T09:00", "timeZone": "Europe/Berlin"})
    asker.add("badge", title="Badge", badge=3)
    center.driver.refresh()  # adding requests sends no event; a reload (or the 30 s poll) shows them
    center.wait_screen("center")
    text = wait_for(lambda: center.in_app_card(asker.bundle, ".pending-list").text, BOUND, message="the pending list")
    for words in ("every Monday at 08:30, Europe/Berlin", "in 5 minutes", "when you arrive at office", "when you leave office",
                  "every last Friday, 09:00"):
        assert words in text, f"{words!r} not in {text!r}"
    # "in 5 min" when the page is drawn at once; a few seconds more on a busy machine make it "in 4 min".
    assert re.search(r"Next: in [1-5] min", text), text
    next_time = center.in_app_card(asker.bundle, ".pending-list time")
    assert next_time.get_attribute("title")
    # The badge the app set, on its icon.
    wait_for(lambda: center.in_app_card(asker.bundle, ".app-badge") and center.in_app_card(asker.bundle, ".app-badge").text == "3", BOUND,
             message="the badge")

    # Cancel one request from the panel.
    center.press(lambda: center.js("""return [...document.querySelectorAll('#apps-list .pending-item')]
                                        .find((e) => e.dataset.identifier === 'tea').querySelector('button')"""))
    wait_for(lambda: "tea" not in [r["identifier"] for r in asker.pending()], BOUND, message="the cancelled request")

    # Remove an app (after confirming).
    center.press(lambda: center.in_app_card(refuser.bundle, ".app-footer button"))
    wait_for(lambda: center.js("return document.getElementById('confirm').open"), BOUND, message="the confirmation")
    center.press(lambda: center.driver.find_element("id", "confirm-ok"))
    wait_for(lambda: center.app_card(refuser.bundle) is None, BOUND, message="the app to leave the panel")
    assert refuser.bundle not in [a["bundleIdentifier"] for a in chime.owner("GET", "/v1/apps").json]


# ---------------------------------------------------------------------------------------------
# Hostile text

XSS = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(2)</script>",
    "\"><svg onload=alert(3)>",
    "<iframe src=javascript:alert(4)></iframe>",
    "'><body onload=alert(5)>",
    "<a href=\"javascript:alert(6)\">click</a>",
    "<details open ontoggle=alert(7)>",
    "javascript:alert(8)",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(9)>",
    "<style>*{display:none}</style>",
    "${alert(11)}{{constructor.constructor('alert(11)')()}}",
    "</textarea><script>alert(12)</script>",
    "<input autofocus onfocus=alert(13)>",
    "<video><source onerror=alert(14)></video>",
    "<object data=javascript:alert(15)>",
    "<embed src=javascript:alert(16)>",
    "<marquee onstart=alert(17)>",
    "&lt;b&gt;entity&lt;/b&gt; &amp; <b>bold</b>",
    "<base href=//evil.example/>",
    "<meta http-equiv=refresh content=0;url=javascript:alert(20)>",
    "<form action=javascript:alert(21)><button>x</button></form>",
    "%3Cscript%3Ealert(22)%3C/script%3E",
    "<div style=\"background:url(javascript:alert(23))\">",
    "\u202e<b>rtl</b>\u202c <img src=x:x onerror=alert(24)>",
]


def test_hostile_text_stays_text(center):
    chime = center.chime
    # Bundle identifiers cannot carry markup: the server refuses them.
    refused = chime.request("POST", "/v1/apps", {"bundleIdentifier": XSS[0]}, token=chime.owner_token)
    assert refused.status == 400
    app = chime.register("com.example.hostile")
    categories = []
    for index, payload in enumerate(XSS):
        categories.append({
            "identifier": f"cat{index}",
            "categorySummaryFormat": f"%u {payload} %@",
            "hiddenPreviewsBodyPlaceholder": payload,
            "actions": [
                {"identifier": f"act{index}", "title": payload, "options": ["destructive"] if index % 2 else []},
                {"identifier": f"txt{index}", "title": f"Reply {payload}", "textInputButtonTitle": payload, "textInputPlaceholder": payload},
            ],
        })
    app.set_categories(categories)
    for index, payload in enumerate(XSS):
        thread = f"{payload} thread"
        # Two in each thread so the group collapses with its summary.
        for n in range(2):
            app.add(f"{payload} id{index}/{n}", title=f"{payload} title", subtitle=f"{payload} subtitle", body=f"{payload} body",
                    threadIdentifier=thread, categoryIdentifier=f"cat{index}", summaryArgument=payload)
    app.add("region", title=XSS[0], trigger={"type": "location", "region": {
        "identifier": XSS[1], "latitude": 1, "longitude": 2, "radius": 50}})
    center.driver.refresh()
    center.wait_screen("center")
    wait_for(lambda: len(center.identifiers(app.bundle)) == len(XSS), BOUND, message="every group")

    # Expand every group and open a reply field on one card, so every string is on the page.
    for summary in center.driver.find_elements("css selector", "#list .stack-summary"):
        center.js("arguments[0].click()", summary)
    wait_for(lambda: len(center.identifiers(app.bundle)) == 2 * len(XSS), BOUND, message="the expanded groups")
    center.press(lambda: center.action_button(app.bundle, f"{XSS[0]} id0/1", "txt0"))
    field = wait_for(lambda: center.in_card(app.bundle, f"{XSS[0]} id0/1", "input.reply-input"), BOUND, message="the reply field")
    assert field.get_attribute("placeholder") == XSS[0]
    assert center.in_card(app.bundle, f"{XSS[0]} id0/1", "button.reply-send").text == XSS[0]
    # Collapse one again to show a summary with the hostile format and argument.
    less = center.js("""return [...document.querySelectorAll('#list .group.expanded')].find((g) => g.dataset.thread === arguments[0])
                         .querySelector('.group-head button')""", XSS[5] + " thread")
    center.js("arguments[0].click()", less)
    summary = wait_for(lambda: center.js("""const g = [...document.querySelectorAll('#list .group')].find((g) => g.dataset.thread === arguments[0]);
                                             return g.querySelector('.stack-summary')""", XSS[5] + " thread"), BOUND, message="the summary")
    assert summary.text == f"1 {XSS[5]} {XSS[5]}"

    page_text = center.js("return document.body.textContent")
    for payload in XSS:
        for suffix in (" title", " subtitle", " body", " thread"):
            assert payload.strip() + suffix in page_text or (payload + suffix) in page_text, f"{payload + suffix!r} not shown as text"
        assert payload in page_text
    assert "when you arrive at or leave " + XSS[1] in page_text  # a region watches both unless told

    # Nothing ran, nothing was even attempted, and no element came from the data.
    watchers = center.watchers()
    assert watchers["alerts"] == [], watchers
    assert watchers["violations"] == [], watchers
    rogue = center.js("""
        const bad = [];
        for (const el of document.querySelectorAll('*')) {
          for (const attr of el.attributes) if (attr.name.startsWith('on')) bad.push(el.tagName + ' ' + attr.name);
          if (['IMG', 'IFRAME', 'OBJECT', 'EMBED', 'VIDEO', 'SOURCE', 'MARQUEE', 'MATH', 'BASE', 'META', 'STYLE', 'B', 'TABLE', 'TEXTAREA'].includes(el.tagName)
              && !(el.tagName === 'META' && el.parentElement === document.head)
              && !(el.tagName === 'IMG' && el.id === 'device-qr')) bad.push(el.tagName);  // the page's own QR code
          if (el.tagName === 'A' && el.getAttribute('href') && el.getAttribute('href').startsWith('javascript')) bad.push('A');
          if (el.tagName === 'SCRIPT' && !(el.getAttribute('src') === '/center.js' && el.type === 'module')) bad.push('SCRIPT ' + el.getAttribute('src'));
          if (el.tagName === 'FORM' && !el.classList.contains('reply') && !el.classList.contains('confirm-form')) bad.push('FORM');
          if (el.tagName === 'INPUT' && !el.classList.contains('reply-input')) bad.push('INPUT');
        }
        return bad;
    """)
    assert rogue == [], rogue
    assert center.js("return document.querySelectorAll('script').length") == 1
    assert center.driver.current_url.startswith(chime.base)

    # With previews hidden, each category's hostile placeholder shows instead of the bodies: as text.
    chime.owner("PATCH", f"/v1/apps/{q(app.bundle)}/settings", {"showPreviewsSetting": "never"})
    wait_for(lambda: f"{XSS[3]} body" not in center.js("return document.getElementById('list').textContent"), BOUND,
             message="the bodies to hide")
    placeholders = center.js("return [...document.querySelectorAll('#list .note-text.placeholder')].map((e) => e.textContent)")
    for payload in XSS:
        assert payload in placeholders, f"placeholder {payload!r} not shown as text"
    chime.owner("PATCH", f"/v1/apps/{q(app.bundle)}/settings", {"showPreviewsSetting": "always"})
    wait_for(lambda: f"{XSS[3]} body" in center.js("return document.getElementById('list').textContent"), BOUND,
             message="the bodies to return")
    watchers = center.watchers()
    assert watchers["alerts"] == [] and watchers["violations"] == [], watchers

    # Answering a notification whose identifier is hostile (and holds a /) works.
    target = f"{XSS[2]} id2/0"
    center.press(lambda: center.action_button(app.bundle, target, "act2"))
    wait_for(lambda: app.outbox(), BOUND, message="the answer")
    assert app.outbox()[0]["notification"]["identifier"] == target
    assert app.outbox()[0]["actionIdentifier"] == "act2"


# ---------------------------------------------------------------------------------------------
# Keyboard, phone width, themes, times, reconnecting


def test_keyboard_only(center):
    chime = center.chime
    app = chime.register("com.example.alarm")
    app.set_categories([ALARM_CATEGORY])
    app.add("Alarm", title="Alarm", body="First Alarm", categoryIdentifier="alarm.category")
    center.wait_note(app.bundle, "Alarm")
    # Start from the heading above the list, as a keyboard user arriving there would.
    center.js("document.getElementById('center-title').focus()")

    def active_is_comment():
        active = center.driver.switch_to.active_element
        return active.get_attribute("data-action") == "comment"

    actions = ActionChains(center.driver)
    for _ in range(40):
        if active_is_comment():
            break
        actions.send_keys(Keys.TAB).perform()
    assert active_is_comment(), "Tab reaches the Add Comment button"
    focused = center.driver.switch_to.active_element
    assert center.js("return getComputedStyle(arguments[0]).outlineStyle", focused) != "none", "a visible focus ring"

    ActionChains(center.driver).send_keys(Keys.ENTER).perform()
    field = wait_for(lambda: center.in_card(app.bundle, "Alarm", "input.reply-input"), BOUND, message="the reply field")
    assert center.driver.switch_to.active_element == field
    ActionChains(center.driver).send_keys("first try").perform()
    ActionChains(center.driver).send_keys(Keys.ESCAPE).perform()
    wait_for(lambda: center.in_card(app.bundle, "Alarm", "input.reply-input") is None, BOUND, message="Escape to close the field")
    assert center.driver.switch_to.active_element.get_attribute("data-action") == "comment", "focus returns to the button"

    ActionChains(center.driver).send_keys(Keys.SPACE).perform()
    wait_for(lambda: center.in_card(app.bundle, "Alarm", "input.reply-input"), BOUND, message="the field again")
    ActionChains(center.driver).send_keys(" kept").send_keys(Keys.ENTER).perform()
    wait_for(lambda: app.outbox(), BOUND, message="the typed answer")
    assert app.outbox()[0]["userText"] == "first try kept", "the draft survives closing the field"


def test_phone_width_and_dark_theme(center):
    chime = center.chime
    app = chime.register("com.example.drinking-reminder")
    app.set_categories([{"identifier": "drink", "actions": [
        {"identifier": "done", "title": "Done"}, {"identifier": "notThirsty", "title": "Not thirsty"}], "options": ["customDismissAction"]}])
    app.add("d1", title="Stay hydrated", body="It's time for a glass of water. " * 4, categoryIdentifier="drink")
    center.wait_note(app.bundle, "d1")
    try:
        center.viewport(390, 844, mobile=True)
        assert center.js("return document.documentElement.scrollWidth") <= 390
        assert center.driver.find_element("css selector", ".tabs").is_displayed()
        assert not center.driver.find_element("id", "apps").is_displayed()
        note = center.note(app.bundle, "d1")
        assert note.rect["width"] <= 390 and note.rect["x"] >= 0
        center.press(lambda: center.driver.find_element("id", "tab-apps"))
        wait_for(lambda: center.driver.find_element("id", "apps").is_displayed(), BOUND, message="the apps view")
        assert not center.driver.find_element("id", "center").is_displayed()
        assert center.js("return document.documentElement.scrollWidth") <= 390

        light = center.js("return getComputedStyle(document.body).backgroundColor")
        center.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        dark = center.js("return getComputedStyle(document.body).backgroundColor")
        assert light != dark
        luminance = center.js("""const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number);
                                 return (r + g + b) / 3""")
        assert luminance < 60
    finally:
        center.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        center.viewport(1280, 900)


def test_words_and_relative_times(center):
    # format.js is a module like the rest (nothing global): imported here as the center imports it.
    words = center.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('/format.js').then((F) => { const now = Date.now(); done({
          weekly: F.triggerWords({type: 'calendar', repeats: true, dateComponents: {weekday: 2, hour: 8, minute: 30, timeZone: 'Europe/Berlin'}}),
          daily: F.triggerWords({type: 'calendar', repeats: true, dateComponents: {hour: 7, minute: 0}}),
          once: F.triggerWords({type: 'calendar', repeats: false, dateComponents: {year: 2030, month: 12, day: 24, hour: 18, minute: 0}}),
          monthly: F.triggerWords({type: 'calendar', repeats: true, dateComponents: {day: 1, hour: 9, minute: 15}}),
          interval: F.triggerWords({type: 'timeInterval', timeInterval: 300, repeats: false}),
          hourly: F.triggerWords({type: 'timeInterval', timeInterval: 3600, repeats: true}),
          arrive: F.triggerWords({type: 'location', region: {identifier: 'office', notifyOnEntry: true, notifyOnExit: false}}),
          leave: F.triggerWords({type: 'location', region: {identifier: 'office', notifyOnEntry: false, notifyOnExit: true}}),
          here: Intl.DateTimeFormat().resolvedOptions().timeZone,
          gym: F.triggerWords({type: 'recurrence', rrule: 'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20271231T225959Z', start: '2027-01-05T18:00:00', timeZone: 'Pacific/Chatham'}),
          workday: F.triggerWords({type: 'recurrence', rrule: 'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1', start: '2027-01-01T17:00:00', timeZone: 'Pacific/Chatham'}),
          mornings: F.triggerWords({type: 'recurrence', rrule: 'FREQ=DAILY;COUNT=3', start: '2027-03-27T07:00:00', timeZone: 'Pacific/Chatham'}),
          now: F.relativeTime(new Date(now - 5000), now),
          twoMin: F.relativeTime(new Date(now - 120000), now),
          threeHours: F.relativeTime(new Date(now - 3 * 3600000), now),
          yesterday: F.relativeTime(new Date(now - 26 * 3600000), now),
          inFive: F.relativeTime(new Date(now + 300000), now),
          // Past a week, a date: with its year only when that is not the year of the "now" given
          // (not the browser's clock: these are March 2020 against 30 March 2020).
          sameYear: F.relativeTime(new Date(Date.UTC(2020, 2, 12, 12)), Date.UTC(2020, 2, 30, 12)).includes('2020'),
          lastYear: F.relativeTime(new Date(Date.UTC(2019, 10, 12, 12)), Date.UTC(2020, 2, 30, 12)).includes('2019'),
          summary: F.groupSummary('%u more messages from %@', [{summaryArgument: 'Ann', summaryArgumentCount: 2}, {summaryArgument: 'Ben'}]),
          positional: F.groupSummary('%1$u new from %2$@ (100%%)', [{summaryArgument: 'Ann'}]),
          fallback: F.groupSummary('', [{}, {}]),
          one: F.groupSummary('', [{}]),
          name: F.appDisplayName('com.example.drinking-reminder'),
        }); }).catch((e) => done({error: String(e)}));
    """)
    # A rule's zone is named when it is not the browser's.
    zone = "" if words.pop("here") == "Pacific/Chatham" else ", Pacific/Chatham"
    assert words.pop("gym") == "every other Tuesday and Thursday, 18:00, until 31 Dec 2027" + zone
    assert words.pop("workday") == "the last workday of every month, 17:00" + zone
    assert words.pop("mornings") == "every day, 07:00, 3 times" + zone
    assert words == {
        "weekly": "every Monday at 08:30, Europe/Berlin", "daily": "every day at 07:00", "once": "on 24 December 2030 at 18:00",
        "monthly": "every month on the 1st at 09:15", "interval": "in 5 minutes", "hourly": "every hour",
        "arrive": "when you arrive at office", "leave": "when you leave office",
        "now": "now", "twoMin": "2 min ago", "threeHours": "3 h ago", "yesterday": "yesterday", "inFive": "in 5 min",
        "sameYear": False, "lastYear": True,
        "summary": "3 more messages from Ann and Ben", "positional": "1 new from Ann (100%)", "fallback": "2 more notifications",
        "one": "1 more notification", "name": "Drinking Reminder",
    }

    # Times on the page update by themselves and show the exact time on hover.
    chime = center.chime
    app = chime.register("com.example.clock")
    app.add("t", title="Tick")
    card = center.wait_note(app.bundle, "t")
    time_element = card.find_element("css selector", "time")
    assert time_element.text == "now"
    exact = time_element.get_attribute("title")
    # The year the page shows is the delivery's in the browser's zone: this machine's clock read here
    # (in UTC) disagrees with it around New Year (and the delivery may be a year older than the read).
    year = center.js("return new Date(arguments[0].getAttribute('datetime')).getFullYear()", time_element)
    assert str(year) in exact and ":" in exact, exact
    center.js("arguments[0].dataset.rel = new Date(Date.now() - 180000).toISOString()", time_element)
    wait_for(lambda: time_element.text == "3 min ago", BOUND, interval=0.5, message="the relative time to update")


def test_reconnects_after_the_server_restarts(center):
    chime = center.chime
    app = chime.register("com.example.restart")
    assert center.js("return document.getElementById('connection').dataset.state") == "live"
    chime.stop()
    wait_for(lambda: center.js("return document.getElementById('connection').dataset.state") in ("reconnecting", "offline"), BOUND,
             message="the lost connection to show")
    assert center.js("return document.getElementById('connection').textContent") != "Live"
    chime.start()
    wait_for(lambda: center.js("return window.ChimeCenter.connection") == "live", BOUND, message="the stream to come back")
    app.add("after", title="After the restart", body="still live")
    center.wait_banner(app.bundle, "after")
    center.wait_note(app.bundle, "after")


def test_a_resumed_stream_replays_what_it_missed(center):
    """The browser reconnects by itself with Last-Event-ID: the service replays the logged events it
    missed (a removal while it was away), so the page reads no delivered list again, only what the
    unlogged hints would have told (apps, categories, scheduled requests)."""
    chime = center.chime
    app = chime.register("com.example.resume")
    app.add("a", title="Away", threadIdentifier="one")
    app.add("b", title="Still here", threadIdentifier="two")
    center.wait_note(app.bundle, "a")
    center.wait_note(app.bundle, "b")
    center.js("performance.setResourceTimingBufferSize(10000); performance.clearResourceTimings()")
    chime.stop()
    wait_for(lambda: center.js("return window.ChimeCenter.connection") != "live", BOUND, message="the lost connection")
    chime.start()
    app.call("DELETE", "/notifications?identifier=a")  # before or after the browser is back: logged either way
    center.wait_gone(app.bundle, "a")
    wait_for(lambda: center.js("return window.ChimeCenter.connection") == "live", BOUND, message="the stream to come back")
    requests_read = f"/v1/apps/{q(app.bundle)}/requests"

    def paths():
        return center.js("return performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)")
    wait_for(lambda: requests_read in paths(), BOUND, message="the scheduled requests read again")
    assert f"/v1/apps/{q(app.bundle)}/notifications" not in paths(), paths()
    assert center.identifiers(app.bundle) == ["b"]


def test_new_apps_requests_and_categories_show_at_once(center):
    """The owner's stream announces new apps, scheduled requests and category changes: the page
    shows them from those events, without waiting for its once-a-minute reload (which reads the
    whole list of apps: the test finds no such read)."""
    chime = center.chime
    # The page's first load read the list before its stream was live; a reload would read it again.
    started = center.js("performance.setResourceTimingBufferSize(10000); return performance.now()")
    app = chime.register("com.example.hints")
    wait_for(lambda: center.app_card(app.bundle), BOUND, message="the new app's card")
    app.add("later", title="Water the plants", trigger={"type": "timeInterval", "timeInterval": 3600, "repeats": False})
    item = wait_for(lambda: center.in_app_card(app.bundle, '.pending-item[data-identifier="later"]'), BOUND,
                    message="the scheduled request in the apps panel")
    assert "Water the plants" in item.get_attribute("textContent")
    app.set_categories([{"identifier": "plants", "actions": [{"identifier": "water", "title": "Watered"}]}])
    app.add("now", title="Plants", categoryIdentifier="plants")
    card = center.wait_note(app.bundle, "now")
    assert "Watered" in card.text
    app.set_categories([{"identifier": "plants", "actions": [{"identifier": "water", "title": "Done watering"}]}])
    wait_for(lambda: "Done watering" in center.wait_note(app.bundle, "now").text, BOUND, message="the changed category's buttons")
    reloads = center.js("""return performance.getEntriesByType('resource')
        .filter((e) => e.startTime >= arguments[0] && ['/v1/apps', '/v1/focus'].includes(new URL(e.name).pathname))
        .map((e) => new URL(e.name).pathname)""", started)
    assert reloads == [], f"the page reloaded everything ({reloads}) instead of following the events"


def test_a_delivery_shows_from_its_event_alone(center):
    """The delivered event carries the notification, its actions, presentation and category: the page
    shows the banner and the card without asking the server for the list, the categories or the apps."""
    chime = center.chime
    app = chime.register("com.example.alarm")
    app.set_categories([ALARM_CATEGORY])
    wait_for(lambda: center.app_card(app.bundle), BOUND, message="the app in the apps panel")
    # The page takes events one batch after another: once this request shows, every read that
    # registering and the categories asked for has finished, so the count below starts clean.
    app.add("marker", title="Marker", trigger={"type": "timeInterval", "timeInterval": 7200, "repeats": False})
    wait_for(lambda: center.in_app_card(app.bundle, '.pending-item[data-identifier="marker"]'), BOUND, message="the marker request")
    center.js("performance.setResourceTimingBufferSize(10000); performance.clearResourceTimings()")
    app.add("now", title="Alarm", body="Wake up", categoryIdentifier="alarm.category", badge=2)
    banner = center.wait_banner(app.bundle, "now")
    assert [b.text for b in banner.find_elements("css selector", "button.action")] == ["Snooze 5 Sec", "Add Comment"]
    center.wait_note(app.bundle, "now")
    requested = center.js("return performance.getEntriesByType('resource').map((e) => e.name)")
    reads = [url for url in requested if "/v1/apps" in url]
    assert reads == [], f"the page read {reads} for a delivery"


def test_removals_settings_and_app_changes_apply_in_place(center):
    """Removed, settings, categories, expired and app events change the page where they are: it reads
    no list and no record again (an app event carries the app's record), and shows them."""
    chime = center.chime
    app = chime.register("com.example.inplace")
    app.set_categories([{"identifier": "c", "actions": [{"identifier": "x", "title": "Old button"}]}])
    app.add("keep", title="Keep me", body="kept body", threadIdentifier="one", categoryIdentifier="c")  # two threads: no stack hides one
    app.add("gone", title="Remove me", threadIdentifier="two")
    app.add("later", title="Later", trigger={"type": "timeInterval", "timeInterval": 3600, "repeats": False})
    # Falls due in 3 s, after its expiration (at the add): it expires instead of being delivered.
    app.add("stale", title="Too late", expiresIn=0, trigger={"type": "timeInterval", "timeInterval": 3, "repeats": False})
    center.wait_note(app.bundle, "keep")
    center.wait_note(app.bundle, "gone")
    # The page takes events one batch after another: once this request shows, every read the
    # events above asked for has finished, so the count below starts clean.
    app.add("marker", title="Marker", trigger={"type": "timeInterval", "timeInterval": 7200, "repeats": False})
    wait_for(lambda: center.in_app_card(app.bundle, '.pending-item[data-identifier="marker"]'), BOUND, message="the marker request")
    center.js("performance.setResourceTimingBufferSize(10000); performance.clearResourceTimings()")

    app.call("DELETE", "/notifications?identifier=gone")
    center.wait_gone(app.bundle, "gone")
    app.call("DELETE", "/requests?identifier=later")
    wait_for(lambda: center.in_app_card(app.bundle, '.pending-item[data-identifier="later"]') is None, BOUND,
             message="the cancelled request to leave the apps panel")
    chime.owner("PATCH", f"/v1/apps/{q(app.bundle)}/settings", {"alertSetting": "disabled", "showPreviewsSetting": "never"})
    wait_for(lambda: center.in_app_card(app.bundle, '[data-setting="alertSetting"]').get_attribute("aria-checked") == "false", BOUND,
             message="the Banners switch to turn off")
    wait_for(lambda: "kept body" not in center.js("return document.getElementById('list').textContent"), BOUND,
             message="the preview to hide")
    app.set_categories([{"identifier": "c", "actions": [{"identifier": "x", "title": "New button"}]}])
    wait_for(lambda: "New button" in center.wait_note(app.bundle, "keep").text, BOUND, message="the changed category's button")
    wait_for(lambda: center.in_app_card(app.bundle, '.pending-item[data-identifier="stale"]') is None, BOUND,
             message="the expired request to leave the apps panel")
    chime.owner("PATCH", f"/v1/apps/{q(app.bundle)}", {"launch": "/opt/inplace/bin/inplace --quiet"})
    line = wait_for(lambda: center.in_app_card(app.bundle, ".launch-command"), BOUND, message="the launch command")
    assert line.text == "/opt/inplace/bin/inplace --quiet"
    assert center.identifiers(app.bundle) == ["keep"]

    requested = center.js("return performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname + new URL(e.name).search)")
    reads = [url for url in requested if url.startswith("/v1/apps")]
    assert reads == [], f"the page read {reads} for removals, settings, categories, an expiry and an app change"


def test_scheduled_requests_apply_from_their_event(center):
    """A scheduled event carries the requests as the pending list has them, with their next date:
    the page shows a new request, and a replaced one's new title and date, without reading the
    pending list. An add of more than 100 requests names none of them, so the list is read."""
    app = registered_with_reads_counted(center, "com.example.scheduling")

    def shown(identifier):
        """The request's name and next date as the apps panel shows them, or None."""
        return center.js("""
            const card = [...document.querySelectorAll('#apps-list .app-card')].find((e) => e.dataset.app === arguments[0]);
            const item = card && card.querySelector(`.pending-item[data-identifier="${arguments[1]}"]`);
            const time = item && item.querySelector('.pending-next time');
            return item ? [item.querySelector('.pending-name').textContent, time ? time.getAttribute('datetime') : null] : null;
        """, app.bundle, identifier)

    def listed(identifier):
        return next(r["nextTriggerDate"] for r in app.pending() if r["identifier"] == identifier)

    app.add("tea", title="Tea", trigger={"type": "timeInterval", "timeInterval": 3600, "repeats": False})
    wait_for(lambda: shown("tea") is not None, BOUND, message="the new request in the apps panel")
    assert shown("tea") == ["Tea", listed("tea")]
    app.add("tea", title="Green tea", trigger={"type": "timeInterval", "timeInterval": 5400, "repeats": False})
    wait_for(lambda: shown("tea") == ["Green tea", listed("tea")], BOUND, message="the replaced request's title and date")

    reads = app_reads(center)
    assert reads == [], f"the page read {reads} for a scheduled request and its replacement"

    app.call("POST", "/requests", [
        {"identifier": f"batch{index}", "title": f"Batch {index}", "trigger": {"type": "timeInterval", "timeInterval": 3600 + index, "repeats": False}}
        for index in range(101)])
    wait_for(lambda: center.in_app_card(app.bundle, ".pending .count").text == "103", BOUND, message="the 101 requests of a large add")
    requested = center.js("return performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)")
    assert f"/v1/apps/{q(app.bundle)}/requests" in requested, "a large add's requests are read"


def test_a_repeating_delivery_moves_its_request_in_place(center):
    """A repeating request stays pending after each delivery, with a later next date: its delivered
    event carries that date (nextTriggerDate), so the page moves the request in the apps panel
    without reading the pending list again."""
    app = registered_with_reads_counted(center, "com.example.repeating")

    def next_shown():
        time = center.in_app_card(app.bundle, '.pending-item[data-identifier="water"] .pending-next time')
        return time.get_attribute("datetime") if time else None

    # Every 2 seconds from now (a recurrence rule may repeat more often than a 60 s interval).
    start = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    app.add("water", title="Water", trigger={"type": "recurrence", "rrule": "FREQ=SECONDLY;INTERVAL=2", "start": start, "timeZone": "UTC"})
    first = wait_for(next_shown, BOUND, message="the repeating request in the apps panel")
    center.wait_note(app.bundle, "water")
    wait_for(lambda: (next_shown() or "") > first, BOUND, message="the request moved to its next date after a delivery")
    reads = app_reads(center)
    app.call("DELETE", "/requests?identifier=water")
    assert reads == [], f"the page read {reads} for a repeating request's delivery"


def test_prompts_answers_and_listing_apply_from_their_events(center):
    """A question for permission, its answer and Notification Center turned off and on show from
    their events alone: the app event carries the record (whether a prompt waits, what the app asked
    for), the settings event whether the app's notifications are listed. The page reads nothing."""
    chime = center.chime
    app = chime.register("com.example.listed")
    app.add("shown", title="Shown in the list")
    asker = chime.register("com.example.later", ask=False)
    center.wait_note(app.bundle, "shown")
    wait_for(lambda: center.app_card(asker.bundle), BOUND, message="the second app in the apps panel")
    # Once this request shows, every read the events above asked for has finished.
    app.add("marker", title="Marker", trigger={"type": "timeInterval", "timeInterval": 7200, "repeats": False})
    wait_for(lambda: center.in_app_card(app.bundle, '.pending-item[data-identifier="marker"]'), BOUND, message="the marker request")
    center.js("performance.setResourceTimingBufferSize(10000); performance.clearResourceTimings()")
    # Each change is waited for up to BOUND: that it came from its event, not from a read (the
    # safety reload, or a reread), is what the list of reads at the end shows.

    asker.request_authorization(["alert", "badge"])
    prompt = wait_for(lambda: center.in_app_card(asker.bundle, ".prompt"), BOUND, message="the permission prompt")
    # What the app asked for (requestedOptions), from the event's record.
    assert "alerts and icon badges" in prompt.text, prompt.text
    assert "Asking" in center.app_card(asker.bundle).text
    chime.owner("POST", f"/v1/apps/{q(asker.bundle)}/authorization/answer", {"allow": True})
    wait_for(lambda: center.in_app_card(asker.bundle, ".prompt") is None, BOUND, message="the prompt to go")
    wait_for(lambda: "Allowed" in center.app_card(asker.bundle).text, BOUND, message="the app shown allowed")

    chime.owner("PATCH", f"/v1/apps/{q(app.bundle)}/settings", {"notificationCenterSetting": "disabled"})
    center.wait_gone(app.bundle, "shown")
    wait_for(lambda: "1 delivered notification is hidden" in center.app_card(app.bundle).text, BOUND, message="the hidden count")
    chime.owner("PATCH", f"/v1/apps/{q(app.bundle)}/settings", {"notificationCenterSetting": "enabled"})
    center.wait_note(app.bundle, "shown")
    assert "hidden" not in center.app_card(app.bundle).text

    requested = center.js("return performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname + new URL(e.name).search)")
    reads = [url for url in requested if url.startswith("/v1/apps")]
    assert reads == [], f"the page read {reads} for a prompt, its answer and Notification Center off and on"


def test_the_apps_panel_shows_the_launch_command(center):
    chime = center.chime
    app = chime.register("com.example.organizer")
    chime.owner("PATCH", f"/v1/apps/{q(app.bundle)}", {"launch": "/opt/organizer/bin/organizer --tasks '/srv/my tasks.json'"})
    center.driver.refresh()
    center.wait_screen("center")
    line = wait_for(lambda: center.in_app_card(app.bundle, ".launch-command"), BOUND, message="the launch command")
    assert line.text == "/opt/organizer/bin/organizer --tasks '/srv/my tasks.json'"


def test_phone_layout_at_390_pixels(center):
    """At phone width: the Apps tab says Apps (not "Appsnull"), the title, count and Clear all keep to
    one line each, and a banner slides in below the top bar instead of over it."""
    chime = center.chime
    app = chime.register("com.example.drinking-reminder")
    app.set_categories([{"identifier": "drink", "actions": [
        {"identifier": "done", "title": "Done"}, {"identifier": "notThirsty", "title": "Not thirsty"}]}])
    for index in range(12):
        app.add(f"d{index}", title="Stay hydrated", body="It's time for a glass of water", categoryIdentifier="drink")
    center.wait_note(app.bundle, "d11")
    try:
        center.viewport(390, 844, mobile=True)
        assert center.driver.find_element("id", "tab-apps").text.strip() == "Apps"

        def lines(selector):
            # The distinct tops of the text's line boxes.
            return center.js("""const range = document.createRange();
                                range.selectNodeContents(document.querySelector(arguments[0]));
                                return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size""", selector)
        for selector in ("#center-title", "#center-count", "#clear-all"):
            assert lines(selector) == 1, f"{selector} wraps at 390 px"
        title = center.driver.find_element("id", "center-title")
        assert title.rect["y"] == center.driver.find_element("id", "clear-all").rect["y"] or \
            abs(title.rect["y"] - center.driver.find_element("id", "clear-all").rect["y"]) < 12, "title and Clear all on one row"

        app.add("fresh", title="A new one", body="arrives as a banner", categoryIdentifier="drink")
        banner = center.wait_banner(app.bundle, "fresh")
        topbar = center.driver.find_element("css selector", ".topbar")
        assert banner.rect["y"] >= topbar.rect["y"] + topbar.rect["height"] - 1, "the banner lies over the top bar"
        assert center.js("return document.documentElement.scrollWidth") <= 390
    finally:
        center.viewport(1280, 900)


def test_sign_in_another_device_with_a_qr_code(center):
    """The top bar's "Another device" shows a one-time link to the address the page is open at, as a
    QR code a phone scans; the link signs in once."""
    center.press(lambda: center.driver.find_element("id", "another-device"))
    wait_for(lambda: center.js("return document.getElementById('device').open"), BOUND, message="the dialog")
    link = wait_for(lambda: center.driver.find_element("id", "device-link").text or None, BOUND, message="the link")
    origin = center.js("return location.origin")
    assert link.startswith(origin + "/#login="), link
    source = center.js("return document.getElementById('device-qr').src")
    assert source.startswith("data:image/svg+xml"), source[:60]
    assert center.js("return document.getElementById('device-qr').naturalWidth") > 0, "the QR code draws"
    assert "Valid for" in center.driver.find_element("id", "device-expiry").text
    code = link.split("#login=")[1]
    first = center.chime.request("POST", "/v1/session", {"code": code})
    assert first.status == 201, first
    assert center.chime.request("POST", "/v1/session", {"code": code}).status == 401, "it signs in once"
    center.press(lambda: center.driver.find_element("id", "device-close"))
    wait_for(lambda: not center.js("return document.getElementById('device').open"), BOUND, message="the dialog to close")


def test_deliveries_during_a_list_read_are_kept(center):
    """A delivered event that arrives while the page is reading the app's list (the read started
    before the delivery) stays on the page: the older answer of the read does not drop it."""
    chime = center.chime
    for round in range(4):
        app = chime.register(f"com.example.burst{round}")
        for index in range(12):
            app.add(f"d{index}", title="Stay hydrated", body=f"glass {index}")

        def section_count():
            return center.js("""const s = [...document.querySelectorAll('#list .app-section')].find((e) => e.dataset.app === arguments[0]);
                                return s ? s.querySelector('.count').textContent : null""", app.bundle)
        wait_for(lambda: section_count() == "12", BOUND, message=f"all 12 deliveries of {app.bundle} on the page")
