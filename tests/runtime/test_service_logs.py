"""The daemon's log lines: JSON for machines, readable for people, the table id on each, no secrets."""

from __future__ import annotations

import ast
import io
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from scannerd.runtime import logs
from scannerd.runtime.log_settings import LogSettings


@pytest.fixture(autouse=True)
def _restore_logging(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    root = logging.getLogger()
    handlers, level, hook = root.handlers[:], root.level, threading.excepthook
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    yield
    structlog.reset_defaults()
    root.handlers[:], root.level, threading.excepthook = handlers, level, hook


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_json_lines_carry_the_table_id_from_every_source() -> None:
    out = io.StringIO()
    logs.configure(LogSettings(format="json"), "BAC-01", stream=out)
    structlog.get_logger("x").info("card", card="9H")
    logging.getLogger("paho").warning("broker %s gone", "b1")
    worker = threading.Thread(target=lambda: 1 / 0, name="reader")
    worker.start()
    worker.join()
    lines = json_lines(out.getvalue())
    assert [line["event"] for line in lines] == ["card", "broker b1 gone", "thread crashed"]
    assert all(line["table_id"] == "BAC-01" for line in lines)
    assert lines[2]["thread"] == "reader" and "ZeroDivisionError" in str(lines[2]["exception"])


def test_secrets_are_masked_wherever_they_are_logged() -> None:
    out = io.StringIO()
    logs.configure(LogSettings(format="json"), "T-1", stream=out)
    log = structlog.get_logger()
    log.info("connect", password="hunter2", mqtt={"password": "hunter2", "password_file": "/run/pw"})
    assert "hunter2" not in out.getvalue()
    line = json_lines(out.getvalue())[0]
    assert line["password"] == "**********"
    assert line["mqtt"] == {"password": "**********", "password_file": "/run/pw"}


def test_console_format_is_for_people() -> None:
    out = io.StringIO()
    logs.configure(LogSettings(format="console"), "T-1", stream=out)
    structlog.get_logger().info("ready", status="link up")
    text = out.getvalue()
    assert "ready" in text and "table_id=T-1" in text and "status='link up'" in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_auto_format_is_json_when_not_a_terminal() -> None:
    out = io.StringIO()
    logs.configure(LogSettings(format="auto"), "T-1", stream=out)
    structlog.get_logger().info("ready")
    assert json_lines(out.getvalue())[0]["event"] == "ready"


def test_level_from_settings_and_from_the_command_line() -> None:
    out = io.StringIO()
    logs.configure(LogSettings(format="json", level="warning"), "T-1", stream=out)
    structlog.get_logger().info("quiet")
    structlog.get_logger().warning("loud")
    assert [line["event"] for line in json_lines(out.getvalue())] == ["loud"]

    out = io.StringIO()
    logs.configure(LogSettings(format="json", level="warning"), "T-1", level="debug", stream=out)
    structlog.get_logger().debug("detail")
    logging.getLogger("paho").debug("lib detail")
    assert [line["event"] for line in json_lines(out.getvalue())] == ["detail", "lib detail"]


def test_journal_gets_the_syslog_priority_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with (tmp_path / "journal").open("w") as stream:
        st = os.fstat(stream.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
        logs.configure(LogSettings(format="auto"), "T-1", stream=stream)
        structlog.get_logger().info("ready")
        structlog.get_logger().error("device gone")
    first, second = (tmp_path / "journal").read_text().splitlines()
    assert first.startswith("<6>{") and json.loads(first[3:])["event"] == "ready"
    assert second.startswith("<3>{")


def test_log_file_is_reopened_after_rotation(tmp_path: Path) -> None:
    path = tmp_path / "scannerd.log"
    output = logs.configure(LogSettings(file=path), "T-1")
    structlog.get_logger().info("before")
    path.rename(tmp_path / "scannerd.log.1")
    output.reopen()
    structlog.get_logger().info("after")
    assert [line["event"] for line in json_lines((tmp_path / "scannerd.log.1").read_text())] == ["before"]
    assert [line["event"] for line in json_lines(path.read_text())] == ["after"]


RESERVED = frozenset({"event", "level", "timestamp", "logger"})
"""Keys the log set-up writes itself: a caller's value under one of them is overwritten and lost."""


def test_no_log_call_uses_a_key_the_log_set_up_overwrites() -> None:
    root = Path(__file__).resolve().parents[2]
    clashes = []
    for package in ("scannerd", "drivers", "simulators"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("debug", "info", "warning", "error", "exception", "critical")
                ):
                    clashes += [
                        f"{path.relative_to(root)}:{node.lineno} {k.arg}="
                        for k in node.keywords
                        if k.arg in RESERVED
                    ]
    assert not clashes


def test_a_reserved_key_really_is_overwritten() -> None:
    # Why the test above matters: the line keeps the set-up's level, the caller's is gone.
    out = io.StringIO()
    logs.configure(LogSettings(format="json"), "T-1", stream=out)
    structlog.get_logger().warning("outbox level", level="full")
    assert json_lines(out.getvalue())[0]["level"] == "warning"
