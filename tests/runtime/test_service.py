"""The service shell, run for real: a subprocess with a stand-in daemon, real signals, a notify socket.

The stand-in is told by a JSON spec which of its health checks fail, so the
sequence of notifications is fixed by the spec and not by timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.notify_listener import NotifyListener

FAKE = '''
import json, sys, threading
from pathlib import Path

from scannerd.runtime import logs
from scannerd.runtime.log_settings import LogSettings
from scannerd.runtime.sdnotify import Notifier
from scannerd.runtime.service import Service

spec = json.loads(sys.argv[1])
work = Path(spec["dir"])


class FakeDaemon:
    """Stands in for scannerd.runtime.daemon.Daemon: a worker thread and a scripted health record."""

    def __init__(self):
        self.checks = 0
        self.quit = threading.Event()
        self.worker = threading.Thread(target=self.quit.wait, name="reader")

    def start(self):
        if spec.get("fail_start"):
            raise RuntimeError("no device at /dev/shoe-1")
        self.worker.start()

    def stop(self, timeout=5.0):
        if spec.get("hang_stop"):
            threading.Event().wait()
        if not spec.get("leave_thread"):
            self.quit.set()
            if self.worker.is_alive():
                self.worker.join(timeout)
        (work / "stopped").write_text("yes")

    def check(self):
        self.checks += 1
        (work / "checks").write_text(str(self.checks))
        if "broken" not in spec:
            return []
        first, last = spec["broken"]  # 1-based check numbers; last -1: for good
        return ["reader"] if first <= self.checks and (last < 0 or self.checks <= last) else []

    def status_line(self):
        return f"fake ok, check {min(self.checks, 2)}"

    def reload(self):
        (work / "reloaded").write_text("yes")


output = logs.configure(LogSettings(format="json", file=work / "log.jsonl"), "T-1")
service = Service(
    FakeDaemon(),
    Notifier(),
    reopen_logs=output.reopen,
    tick=0.05,
    stop_timeout=spec.get("stop_timeout", 5.0),
    max_failed_checks=spec.get("max_failed_checks", 3),
)
sys.exit(service.run())
'''


class Shell:
    """One run of the service shell around the stand-in daemon."""

    def __init__(self, work: Path, listener: NotifyListener, **spec: Any) -> None:
        self.work = work
        self.listener = listener
        script = work / "fake_daemon.py"
        script.write_text(FAKE)
        env = {**os.environ, **listener.env, "WATCHDOG_USEC": "3000000"}
        env.pop("WATCHDOG_PID", None)
        self.proc = subprocess.Popen(
            [sys.executable, str(script), json.dumps({"dir": str(work), **spec})],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def signal(self, signo: signal.Signals) -> None:
        self.proc.send_signal(signo)

    def wait(self) -> int:
        return self.proc.wait(timeout=30)

    def log_events(self, name: str = "log.jsonl") -> list[str]:
        return [json.loads(line)["event"] for line in (self.work / name).read_text().splitlines()]


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Any]:
    shells: list[Shell] = []
    with NotifyListener(tmp_path / "notify") as listener:

        def start(**spec: Any) -> Shell:
            shells.append(Shell(tmp_path, listener, **spec))
            return shells[-1]

        yield start
        for s in shells:
            if s.proc.poll() is None:
                s.proc.kill()
                s.proc.wait(timeout=30)


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGINT])
def test_ready_watchdog_then_clean_stop(shell: Any, signo: signal.Signals) -> None:
    s = shell()
    ready = s.listener.wait_for("READY", "1")
    assert ready["STATUS"] == "fake ok, check 0"
    s.listener.wait_for("WATCHDOG", "1")
    s.listener.wait_for("WATCHDOG", "1")
    s.signal(signo)
    s.listener.wait_for("STOPPING", "1")
    assert s.wait() == 0
    assert (s.work / "stopped").read_text() == "yes"
    assert {"ready", "stop requested", "stopped"} <= set(s.log_events())


def test_no_watchdog_while_a_component_is_down(shell: Any) -> None:
    s = shell(broken=[3, 6], max_failed_checks=10)
    s.listener.wait_for("READY", "1")
    down = s.listener.wait_for("STATUS", "unhealthy: reader; fake ok, check 2")
    first_down = len(s.listener.messages)
    s.listener.wait_for("STATUS", "fake ok, check 2")  # check 7: healthy again
    between = s.listener.messages[first_down:-1]
    assert down and not any("WATCHDOG" in m for m in between), between
    s.listener.wait_for("WATCHDOG", "1")  # pings resume
    s.signal(signal.SIGTERM)
    assert s.wait() == 0


def test_component_that_stays_dead_ends_the_process_non_zero(shell: Any) -> None:
    s = shell(broken=[3, -1], max_failed_checks=3)
    s.listener.wait_for("READY", "1")
    s.listener.wait_for("STATUS", "unhealthy: reader; fake ok, check 2")
    first_down = len(s.listener.messages)
    s.listener.wait_for("STOPPING", "1")
    assert s.wait() == 1
    assert int((s.work / "checks").read_text()) == 5  # two healthy, three failed, then gave up
    assert not any("WATCHDOG" in m for m in s.listener.messages[first_down:])
    assert (s.work / "stopped").read_text() == "yes"  # stopped cleanly all the same
    assert "giving up: components could not be restarted" in s.log_events()


def test_start_failure_exits_non_zero_without_ready(shell: Any) -> None:
    s = shell(fail_start=True)
    assert s.wait() == 1
    while s.listener.receive(0.5) is not None:
        pass
    assert not any("READY" in m for m in s.listener.messages)
    assert {"STATUS": "start failed: no device at /dev/shoe-1"} in s.listener.messages
    assert "start failed" in s.log_events()


def test_sighup_reloads_and_reopens_the_log_file(shell: Any) -> None:
    s = shell()
    s.listener.wait_for("READY", "1")
    (s.work / "log.jsonl").rename(s.work / "log.jsonl.1")  # as logrotate does
    s.signal(signal.SIGHUP)
    s.listener.wait_for("RELOADING", "1")
    s.listener.wait_for("READY", "1")
    assert (s.work / "reloaded").read_text() == "yes"
    assert s.log_events() == ["reloaded"]  # the new file starts with the reload
    assert s.proc.poll() is None
    s.signal(signal.SIGTERM)
    assert s.wait() == 0


def test_stop_that_hangs_ends_the_process(shell: Any) -> None:
    s = shell(hang_stop=True, stop_timeout=0.2)
    s.listener.wait_for("READY", "1")
    s.signal(signal.SIGTERM)
    s.listener.wait_for("STOPPING", "1")
    assert s.wait() == 1
    assert "exiting at once" in s.log_events()


def test_thread_left_running_after_stop_does_not_keep_the_process(shell: Any) -> None:
    s = shell(leave_thread=True)
    s.listener.wait_for("READY", "1")
    s.signal(signal.SIGTERM)
    assert s.wait() == 0
    assert "exiting at once" in s.log_events()
