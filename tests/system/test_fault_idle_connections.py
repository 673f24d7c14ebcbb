"""Idle connections on every listener of a real ``scannerd run``: the table keeps what the deal needs.

The dealer display, the stream overlay and ``/metrics`` share the process with
the shoe's port, the outbox and the broker's socket. A host that opens a
thousand connections on each (no token is needed to open one) and never sends a
request, or asks for the event stream and never reads it, must cost the table
no thread per connection and no descriptor it needs: the broker restarts
meanwhile, the shoe deals, and every card reaches the broker. Another address
(the kiosk, Prometheus) is still served at once.
"""

from __future__ import annotations

import resource
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from simulators.serial_pty import PtyPort
from tests.support.broker import Broker, GameServer, free_port, wait_until
from tests.support.frames import beetek
from tests.support.process import (
    IDLE_CONNECTIONS,
    live_table,
    log_lines,
    open_idle_streams,
    served,
    wait_shoe_open,
)

OTHER_HOST = "127.0.0.2"
"""Another client address on this machine's loopback (all of 127/8 is)."""


def deal(shoe: PtyPort, server: GameServer, cards: list[str]) -> None:
    """Deal ``cards`` and wait until the game server has them all, in order."""
    before = len(server.payloads("/card"))
    shoe.write(beetek(*cards))
    server.wait_for(lambda ms: len(server.payloads("/card")) >= before + len(cards), 60)
    assert [p["card"] for p in server.payloads("/card")][before:] == cards


def threads_and_descriptors(pid: int) -> tuple[int, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    threads = int(next(line for line in status.splitlines() if line.startswith("Threads:")).split()[1])
    return threads, len(list(Path(f"/proc/{pid}/fd").iterdir()))


@pytest.fixture
def many_sockets() -> Iterator[None]:
    """The test itself holds thousands of sockets: its own limit lifted to the hard one for the test."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.timeout(300)
def test_a_thousand_idle_connections_on_each_listener_cost_the_table_nothing_it_needs(
    tmp_path: Path, make_broker: Callable[..., Broker], many_sockets: None
) -> None:
    broker = make_broker(persistence=True)
    display, overlay, metrics = free_port(), free_port(), free_port()
    held: list[socket.socket] = []
    sections = {
        "display": {"enabled": True, "listen": f"127.0.0.1:{display}"},
        "overlay": {"listen": f"127.0.0.1:{overlay}"},
        "metrics": {"listen": f"127.0.0.1:{metrics}"},
    }
    try:
        with live_table(tmp_path, broker, "beetek", server_id="game-server", **sections) as table:
            server, shoe = table.server, table.port
            assert table.proc is not None
            wait_shoe_open(server)
            wait_until(lambda: served(metrics, "/metrics") == 200, 30, "the metrics to listen")
            wait_until(lambda: served(overlay) == 200 and served(display) == 200, 30, "the pages to listen")
            deal(shoe, server, ["9H", "2C"])
            threads, descriptors = threads_and_descriptors(table.proc.pid)

            # From one address: streams that are never read on the pages, requests that never
            # come on the metrics.
            for port, path in ((display, "/events"), (overlay, "/events"), (metrics, None)):
                opened = open_idle_streams(port, IDLE_CONNECTIONS, path=path)
                held += opened
                assert len(opened) == IDLE_CONNECTIONS, f"only {len(opened)} connections opened on {port}"

            # Another address is served at once on each, while the first holds its thousands.
            for port, path in ((display, "/api/state"), (overlay, "/api/state"), (metrics, "/metrics")):
                wait_until(
                    lambda p=port, q=path: served(p, q, OTHER_HOST) == 200, 5, f"{path} from elsewhere"
                )
            busy_threads, busy_descriptors = threads_and_descriptors(table.proc.pid)
            assert busy_threads <= threads + 2, f"{busy_threads} threads, {threads} before the flood"
            assert busy_descriptors <= descriptors + 64, (
                f"{busy_descriptors} descriptors, {descriptors} before"
            )

            broker.restart()  # the table must open a new socket to its broker
            deal(shoe, server, ["KD", "5S", "AH", "3C"])
            assert served(metrics, "/metrics", OTHER_HOST) == 200
            table.running()
        lines = log_lines(table.log)
        assert not [line for line in lines if line["event"].startswith("mqtt connection failed")]
        refusals = [line for line in lines if "refusing more" in line["event"]]
        # Once per listener, not once per refused connection.
        assert sorted(r["event"].split()[0] for r in refusals) == ["display", "metrics", "overlay"], refusals
        assert "Traceback" not in table.log.read_text()
    finally:
        for sock in held:
            sock.close()


def test_every_listener_names_no_library_or_version(tmp_path: Path, mosquitto: Broker) -> None:
    """A scanner learns nothing from the ``Server`` header: not on a page, the metrics, nor an error."""
    display, overlay, metrics = free_port(), free_port(), free_port()
    sections = {
        "display": {"enabled": True, "listen": f"127.0.0.1:{display}"},
        "overlay": {"listen": f"127.0.0.1:{overlay}"},
        "metrics": {"listen": f"127.0.0.1:{metrics}"},
    }
    with live_table(tmp_path, mosquitto, "beetek", **sections):
        wait_until(lambda: served(metrics, "/metrics") == 200, 30, "the metrics to listen")
        wait_until(lambda: served(overlay) == 200 and served(display) == 200, 30, "the pages to listen")
        for port in (display, overlay, metrics):
            for request in (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", b"BREW /\x00 HTTP/9\r\n\r\n"):
                with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                    sock.sendall(request)
                    head = sock.recv(4096).split(b"\r\n\r\n")[0].decode("latin-1")
                servers = [line for line in head.splitlines() if line.lower().startswith("server:")]
                assert servers == ["Server: scannerd"], (port, head)
