"""Faults at the dealer display, met by a real ``scannerd run`` process: the table must deal on.

The display shares the process with the shoe and the broker link. Whatever
happens to it (its port taken by another program, a listen host that does not
resolve; a flood of idle connections: test_fault_idle_connections.py), the shoe is still read and its
cards still reach the game server, and the log says what is wrong in a few
lines, not thousands.
"""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from scannerd.runtime.descriptors import FD_SOFT_LIMIT
from simulators.serial_pty import PtyPort
from tests.support.broker import Broker, GameServer, free_port, wait_until
from tests.support.frames import beetek
from tests.support.process import (
    live_table,
    log_lines,
    table_pc_limits,
    wait_shoe_open,
)


def deal(shoe: PtyPort, server: GameServer, cards: list[str]) -> None:
    """Deal ``cards`` and wait until the game server has them all."""
    wait_shoe_open(server)
    before = len(server.payloads("/card"))
    shoe.write(beetek(*cards))
    server.wait_for(lambda ms: len(server.payloads("/card")) >= before + len(cards), 30)
    assert [p["card"] for p in server.payloads("/card")][before:] == cards


def display_health(server: GameServer) -> dict[str, Any] | None:
    health = server.payloads("/health")
    return health[-1]["display"] if health else None


def test_a_taken_display_port_leaves_the_table_dealing_and_the_display_comes_up_once_free(
    tmp_path: Path, mosquitto: Broker
) -> None:
    port = free_port()
    squatter = socket.create_server(("127.0.0.1", port))  # another program has the port
    listen = f"127.0.0.1:{port}"
    try:
        display = {"enabled": True, "listen": listen}
        with live_table(tmp_path, mosquitto, "beetek", display=display) as table:
            server, shoe, log = table.server, table.port, table.log
            server.wait_for(lambda ms: (display_health(server) or {}).get("state") == "retrying", 30)
            health = display_health(server)
            assert health is not None and (health["state"], health["listen"]) == ("retrying", listen)
            assert health["error"].startswith("Address already in use")
            deal(shoe, server, ["9H", "2C", "KD", "5S"])
            wait_until(lambda: len(log_lines(log)) > 0, 10, "log lines")

            squatter.close()
            server.wait_for(lambda ms: (display_health(server) or {}).get("state") == "listening", 30)
            with urllib.request.urlopen(f"http://{listen}/api/state", timeout=10) as resp:
                assert json.loads(resp.read())["table_id"] == "T1"
            deal(shoe, server, ["AH", "3C"])
            table.running()
        failures = [line for line in log_lines(log) if line["event"].startswith("display cannot listen")]
        assert len(failures) == 1, failures  # once, however many attempts it took
        assert failures[0]["listen"] == listen and "Address already in use" in failures[0]["reason"]
        assert "Traceback" not in log.read_text()
    finally:
        squatter.close()


def test_a_display_host_that_does_not_resolve_leaves_the_table_dealing(
    tmp_path: Path, mosquitto: Broker
) -> None:
    listen = "display.invalid:8080"  # .invalid never resolves (RFC 6761)
    with live_table(tmp_path, mosquitto, "beetek", display={"enabled": True, "listen": listen}) as table:
        server, log = table.server, table.log
        server.wait_for(lambda ms: (display_health(server) or {}).get("state") == "retrying", 30)
        deal(table.port, server, ["9H", "2C", "KD", "5S"])
        table.running()
    (failure,) = [line for line in log_lines(log) if line["event"].startswith("display cannot listen")]
    assert failure["listen"] == listen and failure["reason"]
    assert "Traceback" not in log.read_text()


def test_the_daemon_lifts_the_descriptor_limit_a_service_starts_with() -> None:
    """From the 1024 a service gets by default to the units' LimitNOFILE, where the hard limit allows."""
    script = (
        "import resource; from scannerd.runtime.descriptors import raise_fd_limit; raise_fd_limit(); "
        "print(*resource.getrlimit(resource.RLIMIT_NOFILE))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, preexec_fn=table_pc_limits
    )
    soft, hard = map(int, out.stdout.split())
    assert hard == resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert soft == (FD_SOFT_LIMIT if hard == resource.RLIM_INFINITY else min(FD_SOFT_LIMIT, hard))
    assert soft > 1024 or hard <= 1024
