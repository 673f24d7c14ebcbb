"""The listeners' gate on real sockets: per address; idle ones give way, silent and stalled ones close."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import socket
import time
import urllib.request
from collections.abc import Callable, Iterator

import pytest
from aiohttp import web

from scannerd.contract.requests import Response
from scannerd.display.guard import IDLE_GRACE_S, Gate
from scannerd.display.server import Display
from scannerd.display.settings import DisplaySettings
from tests.support.broker import wait_until
from tests.support.process import open_idle_streams, served

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


@pytest.fixture
def display_of() -> Iterator[Callable[..., Display]]:
    """A display with the caps a test gives, stopped after it."""
    made: list[Display] = []

    def make(idle_s: float = 30.0, **caps: int) -> Display:
        answer = lambda c, a, actor: Response(command=c, status="ok", data={})  # noqa: E731
        made.append(Display(DisplaySettings(listen="127.0.0.1:0", **caps), "T1", dict, answer, idle_s=idle_s))
        made[-1].start()
        return made[-1]

    yield make
    for d in made:
        d.stop()


def keep_alive(display: Display) -> http.client.HTTPConnection:
    """A browser's connection: one request answered, then held open for the next (its keep-alive)."""
    conn = http.client.HTTPConnection(*address(display), timeout=10)
    conn.request("GET", "/api/state")
    assert conn.getresponse().read()
    return conn


def test_a_second_browser_gets_the_page_while_the_first_keeps_its_connections_alive(
    display_of: Callable[..., Display],
) -> None:
    """A browser keeps several connections open between requests; they give way to a second one."""
    d = display_of(max_connections=6, max_per_address=6)
    first = [keep_alive(d) for _ in range(6)]
    try:
        time.sleep(IDLE_GRACE_S)  # what is tested is an age: an idle connection this old gives way
        second = [keep_alive(d) for _ in range(6)]  # all six served, not one 503
        for conn in second:
            conn.close()
    finally:
        for conn in first:
            conn.close()


def test_one_address_holding_streams_locks_out_only_itself(display_of: Callable[..., Display]) -> None:
    d = display_of(max_connections=8, max_per_address=2)
    port = address(d)[1]
    streams = open_idle_streams(port, 2)
    try:
        wait_until(lambda: served(port, "/api/state", "127.0.0.2") == 200, 5, "another address served")
        assert served(port) == 503  # that address has its two streams: busy, none to give way
    finally:
        for sock in streams:
            sock.close()
    wait_until(lambda: served(port) == 200, 10, "the address served again once its streams end")


def test_a_stream_whose_reader_takes_nothing_is_closed() -> None:
    """A client that asks for a stream and never reads it gives its place back after ``stall_s``."""
    gate = Gate("test", "127.0.0.1:0", limit=4, per_address=4, idle_s=30, stall_s=0.5)

    async def flood(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        with contextlib.suppress(ConnectionError):
            while True:
                await response.write(b"x" * 65536)
        return response

    async def run() -> bool:
        app = web.Application()
        app.router.add_get("/", flood)
        runner = gate.runner(app)
        await runner.setup()
        server = await gate.serve(runner, socket.create_server(("127.0.0.1", 0)))
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.setblocking(False)
        try:
            await asyncio.get_running_loop().sock_connect(reader, server.sockets[0].getsockname())
            await asyncio.get_running_loop().sock_sendall(
                reader, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            )
            deadline = asyncio.get_running_loop().time() + 10
            while gate.open and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.05)  # the loop under test runs meanwhile
            return gate.open == 0
        finally:
            reader.close()
            server.close()
            await runner.cleanup()

    assert asyncio.run(run()), "the stalled stream should have been closed"
