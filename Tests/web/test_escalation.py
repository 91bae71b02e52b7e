"""Notifications that repeat until answered (escalation, Chime's addition) in the web center: the
card's mark and receipt, kept up to date by `realerted` events, the banner and sound again, and the
Receipts list once answered; a window that ends unanswered. Against a `chime serve` whose shortest
escalation interval is 1 s (the default, 10 s, would make the test wait)."""
from __future__ import annotations

import os

import pytest

from chime_harness import BOUND, Chime, q, wait_for
from conftest import signed_in

DEFAULT = "com.apple.UNNotificationDefaultActionIdentifier"


@pytest.fixture
def fast_center(driver):
    server = Chime(web_dir=os.environ.get("CHIME_TEST_WEB_DIR") or None,
                   extra_args=["--escalation-min-every", "1s"]).start()
    try:
        yield from signed_in(driver, server)
    finally:
        server.close()


def alerts_on_card(center, app, identifier):
    mark = center.in_card(app, identifier, ".note-escalation")
    value = mark.get_attribute("data-alerts") if mark else None
    return int(value) if value else 0


def receipt_fields(element):
    """A receipt's definition list as {term: text}."""
    terms = [dt.text for dt in element.find_elements("css selector", "dt")]
    values = [dd.text for dd in element.find_elements("css selector", "dd")]
    return dict(zip(terms, values))


def test_an_escalating_notification_is_marked_realerted_live_and_its_receipt_shown(fast_center):
    center = fast_center
    chime = center.chime
    app = chime.register("com.example.wake", options=["alert", "sound"])
    chimes = center.chimes()
    app.add("wake", title="Wake up", body="The alarm rings until you answer", sound="default",
            escalateEvery=2, escalateFor=600)

    card = center.wait_note(app.bundle, "wake")
    assert "Alerts every 2 seconds for 10 minutes until answered" in card.text
    banner = center.wait_banner(app.bundle, "wake")
    center.js("window.__firstBanner = arguments[0].closest('.banner-wrap')", banner)

    # Each realerted event raises the count on the card at once, and brings the banner and the
    # sound back (the page reads nothing on a timer for that: its safety reload is once a minute).
    wait_for(lambda: alerts_on_card(center, app.bundle, "wake") >= 3, BOUND, message="alert 3 on the card")
    assert center.chimes() >= chimes + 3, "a chime for the delivery and each alert again"
    again = center.banner(app.bundle, "wake")
    assert again is not None and center.js("return arguments[0].closest('.banner-wrap') !== window.__firstBanner", again), "the banner came again"
    mark = center.in_card(app.bundle, "wake", ".escalation-line")
    assert "next" in mark.text, mark.text

    # The receipt, opened on the card: not answered yet.
    center.press(lambda: center.in_card(app.bundle, "wake", "button.receipt-toggle"))
    view = wait_for(lambda: center.in_card(app.bundle, "wake", ".receipt dl"), BOUND, message="the receipt on the card")
    fields = receipt_fields(view)
    assert fields["Acknowledged"] == "No" and int(fields["Alerts"]) >= 3, fields
    assert fields["Expired"] == "No" and "Next alert" in fields and fields["Repeats"] == "every 2 seconds for 10 minutes", fields
    toggle = center.in_card(app.bundle, "wake", "button.receipt-toggle")
    assert toggle.get_attribute("aria-expanded") == "true" and toggle.text == "Hide receipt"

    # Opened on the web: it leaves the list, and its receipt stays in the Receipts list, as the service keeps it.
    center.press(lambda: center.in_card(app.bundle, "wake", "button.note-body"))
    center.wait_gone(app.bundle, "wake")
    def receipt_row():
        return center.js("""
            return [...document.querySelectorAll('#receipts li.receipt-row')].find((e) => e.dataset.identifier === 'wake') || null;""")
    row = wait_for(receipt_row, BOUND, message="the receipt in the Receipts list")
    assert center.js("return document.getElementById('receipts').hidden") is False
    receipt = chime.request("GET", f"{app.path}/notifications/wake/receipt", token=app.token).json
    assert receipt["acknowledged"] is True and receipt["surface"] == "web" and receipt["actionIdentifier"] == DEFAULT
    assert "Wake: Wake up" in row.text
    assert "Opened in the web center" in row.text and f"alerted {receipt['alerts']} times" in row.text, row.text
    center.press(lambda: receipt_row().find_element("css selector", "button.receipt-toggle"))
    details = wait_for(lambda: receipt_row().find_element("css selector", ".receipt dl"), BOUND, message="the receipt's details")
    fields = receipt_fields(details)
    assert fields["Acknowledged"] == "Yes" and fields["With"] == "Opened" and fields["Where"] == "web", fields
    assert int(fields["Alerts"]) == receipt["alerts"] and fields["Expired"] == "No", fields
    assert "Next alert" not in fields

    # Forgotten on this page only.
    center.press(lambda: receipt_row().find_element("css selector", "button.icon-button"))
    wait_for(lambda: center.js("return document.getElementById('receipts').hidden"), BOUND, message="the Receipts list to hide")
    assert chime.request("GET", f"{app.path}/notifications/wake/receipt", token=app.token).status == 200


def test_a_window_that_ends_unanswered_shows_as_expired(fast_center):
    center = fast_center
    app = center.chime.register("com.example.kettle", options=["alert"])
    app.add("kettle", title="Kettle", escalateEvery=1, escalateFor=3)
    center.wait_note(app.bundle, "kettle")
    center.press(lambda: center.in_card(app.bundle, "kettle", "button.receipt-toggle"))

    # No event says the window ended: the page reads the receipt again once it has passed.
    def expired():
        view = center.in_card(app.bundle, "kettle", ".receipt dl")
        return view is not None and receipt_fields(view).get("Expired") == "Yes" and view
    view = wait_for(expired, BOUND, message="the receipt to say the window ended")
    fields = receipt_fields(view)
    receipt = center.chime.request("GET", f"{app.path}/notifications/{q('kettle')}/receipt", token=app.token).json
    assert receipt["expired"] is True and fields["Acknowledged"] == "No" and int(fields["Alerts"]) == receipt["alerts"], (fields, receipt)
    assert "Next alert" not in fields
    line = center.in_card(app.bundle, "kettle", ".escalation-line").text
    assert "next" not in line, line
    # Still in the list (an ended escalation does not remove it), and no Receipts row while it is.
    assert center.note(app.bundle, "kettle") is not None
    assert center.js("return document.getElementById('receipts').hidden") is True


def test_escalations_in_words(center):
    words = center.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('/format.js').then((F) => done([[60, 1800], [90, 86400], [10, 3600], [2, 600], [0.5, 5]].map(([a, b]) => F.escalationWords(a, b))))
          .catch((e) => done({error: String(e)}));
    """)
    assert words == ["every minute for 30 minutes", "every 1 minute 30 seconds for 1 day", "every 10 seconds for 1 hour",
                     "every 2 seconds for 10 minutes", "every 0.5 seconds for 5 seconds"]
