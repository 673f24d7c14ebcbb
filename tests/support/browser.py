"""Headless Chromium for the dealer-display tests, driven by Selenium through Debian's chromedriver.

Debian's ``chromium`` and ``chromium-driver`` packages must be installed (``.ci/run`` does it).
Without them the page tests are skipped on a developer's machine and fail under CI, where a
skip would hide a display that was never tested.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
VIEWPORT = (1920, 1080)  # the dealer's monitor
REBOUND = "example"
"""Every name under this domain resolves to this machine in the test browser, as DNS rebinding makes
a foreign site's name resolve to the table PC or the pit's machine: ``http://evil.example:PORT/``."""

# Nothing reaches out: no updates, no sync, no first-run pages; sound plays as in the kiosk.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--autoplay-policy=no-user-gesture-required",
    f"--host-resolver-rules=MAP *.{REBOUND} 127.0.0.1",
)


def _missing() -> str | None:
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} not found: apt-get install {package}"
    for module in ("selenium", "axe_core_python"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed: pip install -e '.[test]'"
    return None


@contextmanager
def start_chromium(profile: Path) -> Iterator[Any]:
    """A fresh headless Chromium (profile in ``profile``) with a 1920x1080 viewport; quit on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        resize(driver, *VIEWPORT)
        yield driver
    finally:
        driver.quit()


def resize(driver: Any, width: int, height: int) -> None:
    """Make the page's viewport exactly ``width`` x ``height`` CSS pixels, as a monitor of that size."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A fresh headless Chromium shared by a module's tests."""
    missing = _missing()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    with start_chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def wait_for(driver: Any, predicate: Callable[[Any], Any], timeout: float, what: str) -> Any:
    """Poll the page until ``predicate(driver)`` is truthy; the timeout bounds a hang."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.02).until(predicate)
    except TimeoutException:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}") from None


def screenshot(driver: Any, path: Path) -> None:
    path.write_bytes(driver.get_screenshot_as_png())


BLOCKING = ("serious", "critical")
"""axe-core's impacts that fail a page: what keeps someone from reading or using it."""

RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ["violations"]}).then((r) => done(r.violations), (e) => done(String(e)));
"""


def accessibility_findings(driver: Any) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now, one line each.

    axe-core comes packaged (``axe-core-python``, pinned in constraints.txt), so CI needs no npm.
    """
    from axe_core_python.base import AXE_SCRIPT

    driver.execute_script(AXE_SCRIPT)
    violations = driver.execute_async_script(RUN_AXE)
    assert isinstance(violations, list), f"axe-core failed: {violations}"
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:4]}"
        for v in violations
        if v["impact"] in BLOCKING
    ]


# ------------------------------------------------------------------ reading the dealer display


def text(driver: Any, element_id: str) -> str:
    return driver.find_element("id", element_id).text


def action(driver: Any) -> str:
    """The next-action line ("NEXT: PLAYER THIRD CARD", ...)."""
    return text(driver, "action-text")


def slot(driver: Any, position: str) -> str | None:
    """The card code shown at a layout position (``player1`` ...), None when empty."""
    return driver.find_element("css selector", f'.card[data-pos="{position}"]').get_attribute("data-card")


def banners(driver: Any) -> list[Any]:
    """The open alerts, in the order shown: the newest (the large banner), then the list of older ones.

    The older ones are in the list a tap on the ``+N MORE`` line opens; read their text with
    ``alert_text``, which does not depend on the list being open.
    """
    return driver.find_elements("css selector", "#alert-main .alert, #alert-items .alert")


def alert_text(element: Any) -> str:
    """An alert's words, whether or not it is on show."""
    return " ".join(element.get_attribute("textContent").split())


def js(driver: Any, expr: str) -> Any:
    return driver.execute_script(f"return {expr}")


def live(driver: Any) -> bool:
    """The page has its stream to the daemon (False while it shows DISCONNECTED)."""
    return js(driver, "document.body.dataset.conn") == "live"


def open_page(driver: Any, url: str) -> None:
    driver.get(url)
    wait_for(driver, live, 10, "the page to go live")
