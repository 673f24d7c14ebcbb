"""The kiosk unit: the dealer display full screen at boot, tested as far as a machine without a screen allows.

What needs a screen (cage taking tty7) cannot run here. What can: the unit
is valid to systemd; its wait for the display server really waits for a
listening port; and its very browser command line, run headless against a
real display server, loads the dealer's page.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.commands.test_units import SYSTEMD, analyze, verify
from tests.display.test_display_browser import Table
from tests.support.broker import free_port
from tests.support.browser import CHROMIUM

UNIT = SYSTEMD / "scannerd-kiosk.service"


def setting(name: str) -> str:
    (value,) = re.findall(rf"^{name}=(.*)$", UNIT.read_text(), re.MULTILINE)
    return value


def environment(**overrides: str) -> dict[str, str]:
    """The unit's Environment= lines, as the service sees them, with a test's values over them."""
    pairs = re.findall(r"^Environment=(\w+)=(.*)$", UNIT.read_text(), re.MULTILINE)
    return dict(pairs) | overrides


def expand(word: str, env: dict[str, str]) -> str:
    """What systemd makes of ``${NAME}`` and ``$$`` in a command line."""
    return re.sub(r"\$\{(\w+)\}", lambda m: env[m[1]], word).replace("$$", "$")


@analyze
def test_the_kiosk_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    path = tmp_path / UNIT.name
    path.write_text(UNIT.read_text())
    verify(path)


def test_it_runs_as_its_own_account_and_always_comes_back() -> None:
    assert setting("User") == "scannerd-kiosk"
    entries = [
        line.split()[:2]
        for line in (SYSTEMD / "sysusers.d" / "scannerd-kiosk.conf").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert entries[0] == ["u", "scannerd-kiosk"]
    assert setting("Restart") == "always"
    assert setting("ExecStart").startswith("/usr/bin/cage -s -- /usr/bin/chromium --kiosk ")


def test_the_wait_before_the_browser_returns_once_the_display_listens() -> None:
    port = free_port()
    env = os.environ | environment(KIOSK_HOST="127.0.0.1", KIOSK_PORT=str(port))
    wait = subprocess.Popen([expand(w, env) for w in shlex.split(setting("ExecStartPre"))], env=env)
    try:
        time.sleep(1.5)
        assert wait.poll() is None, "it must not go on while nothing listens"
        with socket.create_server(("127.0.0.1", port)):
            assert wait.wait(timeout=20) == 0
    finally:
        if wait.poll() is None:
            wait.kill()
            wait.wait()


def test_the_units_browser_command_loads_the_dealer_display(tmp_path: Path) -> None:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} not found: apt-get install chromium")
    table = Table()
    table.display.start()
    try:
        port = table.display.url.rsplit(":", 1)[1].strip("/")
        env = environment(KIOSK_HOST="127.0.0.1", KIOSK_PORT=port)
        words = shlex.split(setting("ExecStart"))
        browser = [expand(w, env) for w in words[words.index("--") + 1 :]]
        browser = [f"--user-data-dir={tmp_path}" if w.startswith("--user-data-dir=") else w for w in browser]
        # Headless, where there is no screen; no sandbox, which Chromium refuses to run as root with.
        browser[1:1] = ["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"]
        browser[0] = CHROMIUM
        page = subprocess.run(browser, capture_output=True, text=True, timeout=60)
    finally:
        table.display.stop()
    assert "<title>scannerd dealer display</title>" in page.stdout, page.stderr[-2000:]
