"""Fixtures for the web center's browser tests: a headless Chromium (Debian's chromium and
chromium-driver, driven by Selenium) and a fresh `chime serve` per test."""
from __future__ import annotations

import os
import sys
import time

import pytest
from selenium import webdriver
from selenium.common.exceptions import (ElementClickInterceptedException, ElementNotInteractableException,
                                        StaleElementReferenceException)
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, os.path.dirname(__file__))
from chime_harness import BOUND, Chime, wait_for  # noqa: E402

DESKTOP = (1280, 900)

# Runs before any script of every page: records alert()/confirm()/prompt() calls and CSP
# violations, so a test can tell that hostile text ran nothing (and was not even tried).
WATCHERS = """
window.__alerts = [];
for (const name of ["alert", "confirm", "prompt", "print"]) {
  window[name] = function (message) { window.__alerts.push(name + ":" + String(message)); return null; };
}
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI + " " + (e.sample || "")));
"""


def make_driver(*extra_arguments: str):
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--lang=en-US",
                     "--disable-extensions", "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--window-size=1280,1000", *extra_arguments):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCHERS})
    return driver


class Center:
    """The web center in the browser, signed in to one `chime serve`."""

    def __init__(self, driver, chime: Chime):
        self.driver = driver
        self.chime = chime

    # Page

    def viewport(self, width: int, height: int, mobile: bool = False):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
        # The page takes the new size with its next frame; layout read after this is at that size.
        wait_for(lambda: self.js("return window.innerWidth") == width, message=f"the page to be {width} px wide")

    def sign_in(self):
        url = self.chime.login_url()
        self.driver.get("about:blank")
        self.driver.get(url)
        self.wait_screen("center")
        wait_for(lambda: self.js("return window.ChimeCenter && window.ChimeCenter.connection") == "live", BOUND,
                 message="the live event stream")
        return url

    def wait_screen(self, screen: str, timeout: float = BOUND):
        wait_for(lambda: self.js("return document.body.dataset.screen") == screen, timeout, message=f"the {screen} screen")

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def note(self, app: str, identifier: str, where: str = "#list"):
        return self.js("""
            return [...document.querySelectorAll(arguments[2] + ' article.note')]
              .find((e) => e.dataset.app === arguments[0] && e.dataset.identifier === arguments[1]) || null;
        """, app, identifier, where)

    def banner(self, app: str, identifier: str):
        return self.note(app, identifier, "#banners .banner-wrap:not(.leaving)")

    def wait_note(self, app: str, identifier: str, timeout: float = BOUND, where: str = "#list"):
        """A notification in the list, once it has slid in (while it fades in, Selenium sees no text)."""
        def settled():
            note = self.note(app, identifier, where)
            return note if note is not None and not self.js("return arguments[0].classList.contains('fresh')", note) else None
        return wait_for(settled, timeout, message=f"notification {identifier!r} in {where}")

    def wait_banner(self, app: str, identifier: str, timeout: float = BOUND):
        """A banner, once it has slid in."""
        return wait_for(lambda: self.note(app, identifier, "#banners .banner-wrap:not(.leaving):not(.entering)"), timeout,
                        message=f"a banner for {identifier!r}")

    def wait_gone(self, app: str, identifier: str, timeout: float = BOUND, where: str = "#list"):
        wait_for(lambda: self.note(app, identifier, where) is None, timeout, message=f"{identifier!r} to leave {where}")

    def identifiers(self, app: str, where: str = "#list"):
        return self.js("""
            return [...document.querySelectorAll(arguments[1] + ' article.note')]
              .filter((e) => e.dataset.app === arguments[0]).map((e) => e.dataset.identifier);
        """, app, where)

    def press(self, find, attempts: int = 6):
        """Clicks what `find()` returns like a user; retried when a live update replaced it."""
        for attempt in range(attempts):
            element = find()
            try:
                self.js("arguments[0].scrollIntoView({block: 'center'})", element)
                element.click()
                return element
            except StaleElementReferenceException:
                time.sleep(0.1)
            except (ElementClickInterceptedException, ElementNotInteractableException):
                # A banner lies over it (they float above the page): click it the way a script would.
                try:
                    self.js("arguments[0].click()", element)
                    return element
                except StaleElementReferenceException:
                    time.sleep(0.1)
        raise AssertionError("the element kept being replaced")

    def action_button(self, app: str, identifier: str, action: str, where: str = "#list"):
        return self.js("""
            const card = [...document.querySelectorAll(arguments[3] + ' article.note')]
              .find((e) => e.dataset.app === arguments[0] && e.dataset.identifier === arguments[1]);
            return card ? [...card.querySelectorAll('button.action')].find((b) => b.dataset.action === arguments[2]) || null : null;
        """, app, identifier, action, where)

    def in_card(self, app: str, identifier: str, selector: str, where: str = "#list"):
        return self.js("""
            const card = [...document.querySelectorAll(arguments[3] + ' article.note')]
              .find((e) => e.dataset.app === arguments[0] && e.dataset.identifier === arguments[1]);
            return card ? card.querySelector(arguments[2]) : null;
        """, app, identifier, selector, where)

    def app_card(self, app: str):
        return self.js("return [...document.querySelectorAll('#apps-list .app-card')].find((e) => e.dataset.app === arguments[0]) || null", app)

    def in_app_card(self, app: str, selector: str):
        return self.js("""
            const card = [...document.querySelectorAll('#apps-list .app-card')].find((e) => e.dataset.app === arguments[0]);
            return card ? card.querySelector(arguments[1]) : null;
        """, app, selector)

    def chimes(self) -> int:
        return int(self.js("return document.body.dataset.chimes || '0'"))

    def watchers(self):
        return self.js("return {alerts: window.__alerts || [], violations: window.__violations || []}")


@pytest.fixture(scope="session")
def driver():
    browser = make_driver()
    yield browser
    browser.quit()


@pytest.fixture
def chime():
    server = Chime(web_dir=os.environ.get("CHIME_TEST_WEB_DIR") or None).start()
    yield server
    server.close()


def signed_in(driver, chime: Chime, permissions: tuple[str, ...] = ()):
    """The center signed in to `chime` (a generator for fixtures: yields it, then checks that the
    page logged no script error). `permissions` are granted to the center's origin before the page
    and its service worker first load, as a user who allowed them earlier would have."""
    page = Center(driver, chime)
    page.viewport(*DESKTOP)
    driver.get_log("browser")  # drop what earlier tests left
    if permissions:
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": chime.base, "permissions": list(permissions)})
    page.sign_in()
    try:
        yield page
        # No uncaught script error on the page during the test.
        errors = [entry["message"] for entry in driver.get_log("browser")
                  if entry["level"] == "SEVERE" and "Failed to load resource" not in entry["message"]
                  and "/v1/events" not in entry["message"]]
        assert not errors, f"script errors in the page: {errors}"
    finally:
        forget_origin(driver, chime)


def forget_origin(driver, chime: Chime):
    """Leaves the browser (one for the whole session) as the test found it: the page closed, the
    service workers of the test's origin removed and the permissions granted reset. Every test's
    server has an origin of its own (its port) but the same site, so workers left behind would pile
    up — dozens by the end of the suite, started and stopped beside the next test's."""
    driver.get("about:blank")
    driver.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": chime.base, "storageTypes": "service_workers"})
    driver.execute_cdp_cmd("Browser.resetPermissions", {})


@pytest.fixture
def center(driver, chime):
    yield from signed_in(driver, chime)


@pytest.fixture
def center_notifying(driver, chime):
    """The center with notifications already allowed for its origin when the page first loads."""
    yield from signed_in(driver, chime, permissions=("notifications",))
