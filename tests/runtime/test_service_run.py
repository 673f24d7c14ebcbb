"""``scannerd run`` as systemd runs it: a subprocess with a config file and a notify socket of the test's.

A beetek shoe on a real pty and a real Mosquitto stand in for the table; the
test plays the service manager: it sees READY once the daemon is up, watchdog
pings while it is healthy, and STOPPING with a clean exit (and ``offline`` on
the broker) after SIGTERM.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.broker import Broker, GameServer
from tests.support.config import write_config
from tests.support.frames import beetek
from tests.support.notify_listener import NotifyListener
from tests.support.process import live_table


def status_states(server: GameServer) -> list[str]:
    return [json.loads(m.payload)["state"] for m in server.messages("/status") if m.payload]


def test_run_under_a_service_manager(tmp_path: Path, mosquitto: Broker) -> None:
    with NotifyListener(tmp_path / "notify") as manager:
        env = manager.env | {"WATCHDOG_USEC": "3000000"}
        with live_table(tmp_path, mosquitto, "beetek", table_id="T9", env=env) as table:
            server = table.server
            ready = manager.wait_for("READY", "1")
            assert "mqtt" in ready["STATUS"] and "pending" in ready["STATUS"]
            manager.wait_for("WATCHDOG", "1")
            server.wait_for(lambda ms: "online" in status_states(server))

            table.port.write(beetek("9H", "2C"))  # cards of an 'auto' round
            server.wait_for(lambda ms: len(server.payloads("/card")) >= 2)
            assert [p["card"] for p in server.payloads("/card")] == ["9H", "2C"]
            manager.wait_for("WATCHDOG", "1")

            stopped = table.kill(signal.SIGTERM)
            manager.wait_for("STOPPING", "1")
            assert stopped == 0
            server.wait_for(lambda ms: status_states(server)[-1:] == ["offline"])

    lines = [json.loads(line) for line in table.log.read_text().splitlines()]
    assert lines, "stderr is not a terminal here, so the log is JSON lines"
    assert all(line["table_id"] == "T9" for line in lines)
    events = [line["event"] for line in lines]
    assert events.index("ready") < events.index("stop requested") < events.index("stopped")


def run_briefly(config: Path) -> subprocess.CompletedProcess[str]:
    """``scannerd run`` for a config it cannot start with: it must end by itself."""
    return subprocess.run(
        [sys.executable, "-m", "scannerd", "run", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "mqtt",
    [{"password_file": "no-such-password"}, {"tls": True, "tls_ca": "no-such-ca.pem"}],
    ids=["password", "tls"],
)
def test_a_file_the_daemon_needs_and_cannot_open_is_one_log_line_not_a_traceback(
    tmp_path: Path, mqtt: dict[str, object]
) -> None:
    missing = {key: str(tmp_path / value) if isinstance(value, str) else value for key, value in mqtt.items()}
    result = run_briefly(write_config(tmp_path, None, "beetek", str(tmp_path / "shoe"), mqtt=missing))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (error,) = [json.loads(line) for line in result.stderr.splitlines() if '"error"' in line]
    assert error["event"] == "daemon could not be built"
    assert any(str(value) in error["error"] for value in missing.values() if isinstance(value, str))


def test_a_log_file_that_cannot_be_opened_is_one_line_on_stderr(tmp_path: Path) -> None:
    log = {"file": str(tmp_path / "no-such-dir" / "scannerd.log")}
    result = run_briefly(write_config(tmp_path, None, "beetek", str(tmp_path / "shoe"), log=log))
    assert result.returncode == 1
    assert (
        result.stderr == f"scannerd run: cannot open the log file {log['file']}: No such file or directory\n"
    )
