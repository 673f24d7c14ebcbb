"""The display's connection limit against real sockets: refused at once past it, silent ones closed."""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Iterator

import pytest

from scannerd.contract.requests import Response
from scannerd.display.server import Display
from scannerd.display.settings import DisplaySettings
from tests.support.broker import wait_until

IDLE_S = 1.0
"""The idle limit these tests run with: the shipped one (10 s) behaves the same, only slower."""


@pytest.fixture
def display() -> Iterator[Display]:
    settings = DisplaySettings(listen="127.0.0.1:0", max_connections=2)
    answer = lambda c, a, actor: Response(command=c, status="ok", data={})  # noqa: E731
    d = Display(settings, "T1", dict, answer, idle_s=IDLE_S)
    d.start()
    yield d
    d.stop()


def address(display: Display) -> tuple[str, int]:
    return "127.0.0.1", int(display.url.rsplit(":", 1)[1].rstrip("/"))


def serves(display: Display) -> bool:
    try:
        with urllib.request.urlopen(display.url + "api/state", timeout=5) as resp:
            return resp.status == 200
    except OSError:
        return False


def test_silent_connections_hold_the_slots_only_until_the_idle_timeout(display: Display) -> None:
    """Connections that never send a byte (a port scan, a client gone quiet) must not lock the kiosk out."""
    silent = [socket.create_connection(address(display), timeout=IDLE_S * 3) for _ in range(2)]
    try:
        refused = socket.create_connection(address(display), timeout=10)
        refused.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert refused.recv(100).startswith(b"HTTP/1.1 503")  # at once: nothing else is read
        refused.close()
        for sock in silent:
            assert sock.recv(100) == b"", "the display should close a connection that sends nothing"
        wait_until(lambda: serves(display), 10, "the display to serve again")
    finally:
        for sock in silent:
            sock.close()
