#!/usr/bin/env python3
"""Pictures of the web notification center for the README: `make screenshots`.

Starts `chime serve` with a temporary data directory (serving Web/ from disk), plays a few apps
over the HTTP API — the alarm, the drinking reminder, the task organizer, a chat app, and a
weather app whose permission prompt waits — signs in a headless Chromium and writes
docs/images/center-{light,dark}-{wide,phone}.png, center-device-phone.png and center-focus-wide.png.

The deliveries are spread over about two minutes so the list shows real relative times
("2 min ago"); SCREENSHOTS_FAST=1 skips the waiting.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "web"))

from chime_harness import ALARM_CATEGORY, Chime, wait_for  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

OUT = REPO / "docs" / "images"
FAST = os.environ.get("SCREENSHOTS_FAST") == "1"
WIDE = (1440, 1080)
PHONE = (390, 844)


def pause(seconds: float):
    if not FAST:
        print(f"screenshots: waiting {seconds:.0f} s so the times differ…", flush=True)
        time.sleep(seconds)


def seed(chime: Chime) -> dict:
    apps = {}

    chat = apps["chat"] = chime.register("com.example.messages")
    chat.set_categories([{
        "identifier": "message", "categorySummaryFormat": "%u more messages from %@",
        "hiddenPreviewsBodyPlaceholder": "%u new messages",
        "actions": [
            {"identifier": "reply", "title": "Reply", "textInputButtonTitle": "Send", "textInputPlaceholder": "Message"},
            {"identifier": "read", "title": "Mark as Read"},
        ],
    }])

    organizer = apps["organizer"] = chime.register("com.example.organizer")
    organizer.set_categories([{"identifier": "OrganizerPlusCategory", "actions": [
        {"identifier": "dismiss", "title": "Dismiss", "options": ["destructive"]},
        {"identifier": "markAsDone", "title": "Mark As Done"},
    ]}])

    drink = apps["drink"] = chime.register("com.example.drinking-reminder")
    drink.set_categories([{
        "identifier": "drinkingReminderCategory", "options": ["customDismissAction"],
        "categorySummaryFormat": "%u more reminders to drink",
        "actions": [{"identifier": "drinkingReminder.doneAction", "title": "Done"},
                    {"identifier": "drinkingReminder.notThirstyAction", "title": "Not thirsty"}],
    }])

    alarm = apps["alarm"] = chime.register("com.example.alarm")
    alarm.set_categories([ALARM_CATEGORY])

    # The oldest deliveries.
    organizer.add("groceries", title="Buy groceries", body="Gentle reminder for your task!", sound="default",
                  categoryIdentifier="OrganizerPlusCategory", threadIdentifier="location-based")
    drink.add("water-1", title="Stay hydrated", body="It's time for a glass of water", sound="default",
              categoryIdentifier="drinkingReminderCategory", threadIdentifier="water")
    chat.add("mom-1", title="Mom", body="Dinner at 7 tonight?", sound="default", categoryIdentifier="message",
             threadIdentifier="family", summaryArgument="Mom")

    # What waits to fire, in words in the apps panel.
    organizer.add("weekly", title="Weekly review", body="Gentle reminder for your task!", categoryIdentifier="OrganizerPlusCategory",
                  threadIdentifier="calendar-based", trigger={"type": "calendar", "repeats": True, "dateComponents": {
                      "weekday": 2, "hour": 8, "minute": 30, "timeZone": "Europe/Berlin"}})
    organizer.add("parcel", title="Pick up the parcel", categoryIdentifier="OrganizerPlusCategory", threadIdentifier="location-based",
                  trigger={"type": "location", "region": {"identifier": "office", "latitude": 52.5200, "longitude": 13.4050,
                                                          "radius": 150, "notifyOnEntry": True, "notifyOnExit": False}})
    organizer.add("plants", title="Water the plants", categoryIdentifier="OrganizerPlusCategory", threadIdentifier="time-based",
                  trigger={"type": "timeInterval", "timeInterval": 45 * 60, "repeats": False})
    organizer.add("landlord", title="Call the landlord", categoryIdentifier="OrganizerPlusCategory", threadIdentifier="location-based",
                  trigger={"type": "location", "region": {"identifier": "office", "latitude": 52.5200, "longitude": 13.4050,
                                                          "radius": 150, "notifyOnEntry": False, "notifyOnExit": True}})
    drink.add("water-next", title="Stay hydrated", body="It's time for a glass of water", sound="default",
              categoryIdentifier="drinkingReminderCategory", threadIdentifier="water",
              trigger={"type": "timeInterval", "timeInterval": 7200, "repeats": True})
    alarm.add("morning", title="Alarm", subtitle="Wake up", body="Rise and shine", sound="default", categoryIdentifier="alarm.category",
              trigger={"type": "calendar", "repeats": True, "dateComponents": {"hour": 6, "minute": 45}})
    pause(62)

    drink.add("water-2", title="Stay hydrated", body="It's time for a glass of water", sound="default",
              categoryIdentifier="drinkingReminderCategory", threadIdentifier="water")
    chat.add("dad-1", title="Dad", body="I'll bring dessert.", sound="default", categoryIdentifier="message",
             threadIdentifier="family", summaryArgument="Dad")
    organizer.add("taxes", title="Quarterly taxes", subtitle="Due today", body="Gentle reminder for your task!", sound="default",
                  interruptionLevel="timeSensitive", categoryIdentifier="OrganizerPlusCategory", threadIdentifier="calendar-based",
                  badge=2)
    pause(62)

    drink.add("water-3", title="Stay hydrated", body="It's time for a glass of water", sound="default",
              categoryIdentifier="drinkingReminderCategory", threadIdentifier="water")
    alarm.add("Alarm", title="Alarm", subtitle="First Alarm", body="First Alarm", sound="default", categoryIdentifier="alarm.category")

    # A weather app asks for permission: the question waits in the apps panel.
    apps["weather"] = chime.register("com.example.weather", allow=None, options=["alert", "sound", "badge", "timeSensitive"])
    return apps


def make_driver():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--lang=en-US",
                     "--hide-scrollbars", "--force-color-profile=srgb", "--font-render-hinting=none", "--window-size=1440,1080"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")), options=options)


def scheme(driver, value: str):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": value}]})


def viewport(driver, size, mobile=False):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": size[0], "height": size[1], "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile})


def shoot(driver, name: str):
    time.sleep(0.6)  # animations settle
    path = OUT / name
    driver.save_screenshot(str(path))
    print(f"screenshots: wrote {path.relative_to(REPO)}")


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def open_reply(driver, app: str, identifier: str, action: str):
    button = wait_for(lambda: js(driver, """
        const card = [...document.querySelectorAll('#list article.note')].find((e) => e.dataset.app === arguments[0] && e.dataset.identifier === arguments[1]);
        return card ? [...card.querySelectorAll('button.action')].find((b) => b.dataset.action === arguments[2]) : null;
    """, app, identifier, action), 10, message="the action button")
    js(driver, "arguments[0].click()", button)
    wait_for(lambda: js(driver, "return document.querySelector('#list input.reply-input')"), 5, message="the reply field")


def wait_banner(driver, identifier):
    wait_for(lambda: js(driver, """return [...document.querySelectorAll('#banners .banner-wrap:not(.entering):not(.leaving) article.note')]
                                     .some((e) => e.dataset.identifier === arguments[0])""", identifier), 10, message="the banner")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    chime = Chime(web_dir=str(REPO / "Web")).start()
    driver = None
    try:
        apps = seed(chime)
        driver = make_driver()
        viewport(driver, WIDE)
        scheme(driver, "light")
        driver.get(chime.login_url())
        wait_for(lambda: js(driver, "return window.ChimeCenter && window.ChimeCenter.connection") == "live", 15, message="the center")
        wait_for(lambda: js(driver, "return document.querySelectorAll('#list article.note').length") >= 4, 10, message="the list")
        # A click lets the page play sounds (the browser's autoplay rule), as a person's first click does.
        ActionChains(driver).move_to_element(driver.find_element("id", "center-title")).click().perform()
        # Open the organizer in the apps panel: its settings and scheduled requests in words.
        js(driver, "[...document.querySelectorAll('#apps-list .app-card')].find((e) => e.dataset.app === arguments[0]).querySelector('summary').click()",
           apps["organizer"].bundle)
        open_reply(driver, apps["alarm"].bundle, "Alarm", "comment")

        # Wide, light: a message arrives as a banner.
        apps["chat"].add("sam-1", title="Sam", body="Can someone pick me up from practice at 6?", sound="default",
                         categoryIdentifier="message", threadIdentifier="family", summaryArgument="Sam")
        wait_banner(driver, "sam-1")
        js(driver, "document.querySelector('#list input.reply-input').focus()")
        # The apps panel scrolled to the organizer: its scheduled requests, triggers in words.
        js(driver, """const card = [...document.querySelectorAll('#apps-list .app-card')].find((e) => e.dataset.app === arguments[0]);
                      const panel = document.getElementById('apps');
                      panel.scrollTop = card.offsetTop - panel.offsetTop - 130;""", apps["organizer"].bundle)
        shoot(driver, "center-light-wide.png")
        js(driver, "document.getElementById('apps').scrollTop = 0")

        # Wide, dark: the banner gone (Escape), the permission prompt in view.
        ActionChains(driver).send_keys(Keys.ESCAPE).perform()
        js(driver, "for (const b of document.querySelectorAll('#banners .banner-wrap')) b.remove()")
        open_reply(driver, apps["alarm"].bundle, "Alarm", "comment")
        js(driver, "document.activeElement.blur()")
        scheme(driver, "dark")
        shoot(driver, "center-dark-wide.png")

        # Phone, light: the list, with a banner from the drinking reminder.
        viewport(driver, PHONE, mobile=True)
        driver.execute_cdp_cmd("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 2, "y": 300})
        scheme(driver, "light")
        js(driver, "window.scrollTo(0, 0)")
        apps["drink"].add("water-4", title="Stay hydrated", body="It's time for a glass of water", sound="default",
                          categoryIdentifier="drinkingReminderCategory", threadIdentifier="water")
        wait_banner(driver, "water-4")
        shoot(driver, "center-light-phone.png")

        # Phone, dark: the apps view with the waiting permission prompt.
        js(driver, "for (const b of document.querySelectorAll('#banners .banner-wrap')) b.remove()")
        js(driver, "document.getElementById('tab-apps').click(); window.scrollTo(0, 0)")
        js(driver, "for (const d of document.querySelectorAll('#apps-list .app-card[open]')) if (d.dataset.app !== arguments[0]) d.querySelector('summary').click()",
           apps["weather"].bundle)
        scheme(driver, "dark")
        shoot(driver, "center-dark-phone.png")

        # Phone, light: the apps view's top, This device (Notify this device, the install hint).
        scheme(driver, "light")
        wait_for(lambda: js(driver, "return !!document.getElementById('notify-device')"), 10, message="Notify this device")
        js(driver, "window.scrollTo(0, 0)")
        shoot(driver, "center-device-phone.png")

        # Wide, light: the Focus panel. Sleep on by hand holds the newsletter (marked "Held by Sleep",
        # no banner); the time-sensitive parcel comes through it; Work waits for its schedule.
        viewport(driver, WIDE)
        js(driver, "document.getElementById('tab-list').click(); window.scrollTo(0, 0)")
        js(driver, "for (const d of document.querySelectorAll('#apps-list .app-card[open]')) d.querySelector('summary').click()")
        chime.owner("PUT", "/v1/focus/Work", {"schedule": {"from": "09:00", "to": "17:30", "days": ["mon", "tue", "wed", "thu", "fri"],
                                                           "timeZone": "Europe/Berlin"}, "allowedApps": [apps["chat"].bundle]})
        chime.owner("PUT", "/v1/focus/Sleep", {})
        chime.owner("POST", "/v1/focus/Sleep/on")
        wait_for(lambda: js(driver, "return document.getElementById('focus-indicator').hidden") is False, 15, message="the focus indicator")
        apps["organizer"].add("newsletter", title="Weekly newsletter", body="Five tips for a tidy inbox", sound="default",
                              categoryIdentifier="OrganizerPlusCategory", threadIdentifier="reading")
        apps["organizer"].add("parcel-now", title="Parcel at the door", body="The courier is waiting downstairs", sound="default",
                              interruptionLevel="timeSensitive", categoryIdentifier="OrganizerPlusCategory", threadIdentifier="deliveries")
        wait_for(lambda: js(driver, "return document.querySelectorAll('#list .chip.focus-held').length") >= 1, 15, message="the held mark")
        wait_for(lambda: js(driver, "return document.querySelectorAll('#list .chip.focus-through').length") >= 1, 15, message="the let-through mark")
        js(driver, "for (const b of document.querySelectorAll('#banners .banner-wrap')) b.remove()")
        js(driver, "document.getElementById('apps').scrollTop = 0; document.activeElement.blur()")
        shoot(driver, "center-focus-wide.png")
    finally:
        if driver:
            driver.quit()
        chime.close()


if __name__ == "__main__":
    main()
