"""Focus modes (quiet hours, Chime's addition) in the web center: the Focus panel lists the modes
as the owner's `focus` events say, its switch turns one on and off through the API, a delivery held
by it is marked on its card with no banner and no sound, one let through is marked too, and the
summary comes when it is turned off. Every change reaches the page from the event stream (its only
read of GET /v1/focus is at start; the safety reload is once a minute)."""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from chime_harness import BOUND, wait_for


def focus_row(center, name):
    return center.js("return [...document.querySelectorAll('#focus-list li.focus-mode')].find((e) => e.dataset.focus === arguments[0]) || null", name)


def in_row(center, name, selector):
    return center.js("""
        const row = [...document.querySelectorAll('#focus-list li.focus-mode')].find((e) => e.dataset.focus === arguments[0]);
        return row ? row.querySelector(arguments[1]) : null;""", name, selector)


def row_text(center, name):
    row = focus_row(center, name)
    return row.text if row is not None else ""


def test_a_focus_is_added_turned_on_from_the_page_holds_a_delivery_and_off_brings_the_summary(center):
    chime = center.chime
    app = chime.register("com.example.news", options=["alert", "sound"])
    wait_for(lambda: "No focus modes" in center.js("return document.getElementById('focus-list').textContent"), BOUND,
             message="the empty Focus panel")
    assert center.js("return document.getElementById('focus-indicator').hidden") is True

    # Added through the API (as `chime focus add` does): the page hears of it from the stream.
    chime.owner("PUT", "/v1/focus/Sleep", {})
    # A scheduled mode that is off now whatever the hour the suite runs at (the service is on the
    # system clock): its window opens two hours after the current hour in Berlin and lasts one. A
    # fixed 22:00-07:00 made it on during weekday evenings there, and the page showed two modes on.
    hour = datetime.now(ZoneInfo("Europe/Berlin")).hour
    start, end = f"{(hour + 2) % 24:02d}:00", f"{(hour + 3) % 24:02d}:00"
    chime.owner("PUT", "/v1/focus/Work", {"schedule": {"from": start, "to": end, "days": ["mon", "tue", "wed", "thu", "fri"],
                                                       "timeZone": "Europe/Berlin"}, "allowedApps": ["com.example.boss"]})
    wait_for(lambda: focus_row(center, "Sleep") and focus_row(center, "Work"), BOUND, message="both modes in the Focus panel")
    switch = in_row(center, "Sleep", "button.focus-switch")
    assert switch.get_attribute("aria-pressed") == "false" and switch.get_attribute("aria-label") == "Sleep focus"
    assert focus_row(center, "Sleep").get_attribute("data-active") == "false"
    assert "Off" in row_text(center, "Sleep") and "No schedule: on and off by hand" in row_text(center, "Sleep")
    assert f"{start}–{end}, Mon–Fri (Europe/Berlin)" in row_text(center, "Work"), row_text(center, "Work")
    assert "Lets through Boss" in row_text(center, "Work"), row_text(center, "Work")

    # On from the page: the API says so, and so do the switch, the row and the top bar.
    center.press(lambda: in_row(center, "Sleep", "button.focus-switch"))
    wait_for(lambda: in_row(center, "Sleep", "button.focus-switch").get_attribute("aria-pressed") == "true", BOUND,
             message="the switch to say on")
    status = chime.owner("GET", "/v1/focus/Sleep").json
    assert status["active"] is True and status["byHand"] is True and status["manual"]["on"] is True, status
    wait_for(lambda: "On by hand" in row_text(center, "Sleep"), BOUND, message="Sleep on by hand")
    assert "until turned off" in row_text(center, "Sleep") and "nothing held yet" in row_text(center, "Sleep")
    indicator = center.js("return document.getElementById('focus-indicator')")
    assert indicator.is_displayed() and indicator.text == "Sleep on", indicator.text

    # A delivery during it: in the list, marked held, with no banner and no sound.
    chimes = center.chimes()
    app.add("news", title="Newsletter", body="This week's news", sound="default")
    center.wait_note(app.bundle, "news", BOUND)
    mark = wait_for(lambda: center.in_card(app.bundle, "news", ".chip.focus-held"), BOUND, message="the held mark")
    assert mark.text.lower() == "held by sleep", mark.text
    assert center.banner(app.bundle, "news") is None, "no banner for a held notification"
    assert center.chimes() == chimes, "no sound for a held notification"
    wait_for(lambda: "1 held" in row_text(center, "Sleep"), BOUND, message="one held in the Focus panel")

    # A time-sensitive one comes through, with its banner, and is marked so.
    # (A thread of its own: in the news's, the two would stack under the newest.)
    app.add("door", title="Door open", sound="default", interruptionLevel="timeSensitive", threadIdentifier="door")
    center.wait_banner(app.bundle, "door", BOUND)
    through = wait_for(lambda: center.in_card(app.bundle, "door", ".chip.focus-through"), BOUND, message="the let-through mark")
    assert through.text.lower() == "through sleep" and "time sensitive" in through.get_attribute("title")
    assert center.in_card(app.bundle, "door", ".chip.focus-held") is None
    assert "1 held" in row_text(center, "Sleep"), "a notification let through is not held"

    # Off from the page: the summary of what it held arrives, presented as usual.
    center.press(lambda: in_row(center, "Sleep", "button.focus-switch"))
    wait_for(lambda: in_row(center, "Sleep", "button.focus-switch").get_attribute("aria-pressed") == "false", BOUND,
             message="the switch to say off")
    summary = center.wait_note(app.bundle, "chime.focus.Sleep", BOUND)
    assert "1 notification during Sleep" in summary.text, summary.text
    assert center.in_card(app.bundle, "chime.focus.Sleep", ".chip.focus-held") is None
    wait_for(lambda: center.js("return document.getElementById('focus-indicator').hidden"), BOUND, message="the indicator to hide")
    wait_for(lambda: "Off by hand" in row_text(center, "Sleep"), BOUND, message="Sleep off by hand")
    assert chime.owner("GET", "/v1/focus/Sleep").json["active"] is False
    # The held notification keeps its mark while the page is open.
    assert center.in_card(app.bundle, "news", ".chip.focus-held") is not None

    # Removed elsewhere: it leaves the panel.
    chime.owner("DELETE", "/v1/focus/Sleep")
    wait_for(lambda: focus_row(center, "Sleep") is None, BOUND, message="Sleep to leave the panel")
    assert focus_row(center, "Work") is not None
    assert center.watchers()["violations"] == []
