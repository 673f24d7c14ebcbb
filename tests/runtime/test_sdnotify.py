"""The notify protocol against a real datagram socket, as systemd would receive it."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from scannerd.runtime.sdnotify import Notifier
from tests.support.notify_listener import NotifyListener


@pytest.fixture
def listener(tmp_path: Path):
    with NotifyListener(tmp_path / "notify") as listener:
        yield listener


def test_each_state_arrives_as_one_datagram(listener: NotifyListener) -> None:
    notifier = Notifier(listener.env)
    assert notifier.enabled
    assert notifier.ready("shoe S-1 hand 3")
    assert notifier.watchdog()
    assert notifier.status("mqtt connected")
    assert notifier.reloading()
    assert notifier.stopping()
    got = [listener.receive(5) for _ in range(5)]
    assert got[0] == {"READY": "1", "STATUS": "shoe S-1 hand 3"}
    assert got[1] == {"WATCHDOG": "1"}
    assert got[2] == {"STATUS": "mqtt connected"}
    assert got[3] is not None and got[3]["RELOADING"] == "1" and got[3]["MONOTONIC_USEC"].isdigit()
    assert got[4] == {"STOPPING": "1"}
    notifier.close()


def test_abstract_namespace_socket() -> None:
    with NotifyListener(f"@scannerd-test-{uuid.uuid4().hex}") as listener:
        notifier = Notifier(listener.env)
        assert notifier.ready()
        assert listener.receive(5) == {"READY": "1"}


def test_status_is_kept_to_one_line(listener: NotifyListener) -> None:
    Notifier(listener.env).status("line one\nWATCHDOG=1")
    assert listener.receive(5) == {"STATUS": "line one WATCHDOG=1"}


def test_silent_no_op_outside_systemd() -> None:
    notifier = Notifier({})
    assert not notifier.enabled
    assert notifier.watchdog_timeout is None
    assert not notifier.ready()
    assert not notifier.watchdog()


def test_vanished_manager_is_not_an_error(tmp_path: Path) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone")})
    assert notifier.enabled
    assert not notifier.watchdog()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WATCHDOG_USEC": "30000000"}, 30.0),
        ({"WATCHDOG_USEC": "500000", "WATCHDOG_PID": str(os.getpid())}, 0.5),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid() + 1)}, None),  # meant for another
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({}, None),
    ],
)
def test_watchdog_timeout_from_environment(env: dict[str, str], expected: float | None) -> None:
    assert Notifier(env).watchdog_timeout == expected
