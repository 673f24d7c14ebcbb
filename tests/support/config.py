"""A config file for ``scannerd run`` in a subprocess, as an operator would write it.

Tests that start the daemon as systemd does need a TOML file on disk; this
writes one from plain section dicts, with what every such test wants (an
outbox in the test's directory, no display, no clock alert: a test machine's
clock is whatever its host keeps, and the alert is tested on a faked reading)
unless it says otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.broker import Broker


def write_config(
    tmp_path: Path,
    broker: Broker | None,
    driver: str,
    port: str,
    *,
    table_id: str = "T1",
    **sections: dict[str, Any],
) -> Path:
    """``tmp_path/scannerd.toml`` for ``table_id``; ``sections`` (``rules={...}``) add or replace keys.

    The table suspends on nothing unless the test says (``rules={"suspend_on": [...]}``, or ``None``
    for the house's default): a suspended table deals no more, and only the tests of suspension
    call a supervisor.
    """
    tables: dict[str, dict[str, Any]] = {
        "device": {"driver": driver, "port": port},
        "rules": {"suspend_on": []},
        "mqtt": {"host": broker.host, "port": broker.port} if broker else {},
        "outbox": {"path": str(tmp_path / "outbox.sqlite3")},
        "display": {"enabled": False},
        "clock": {"alert": False},
    }
    for name, keys in sections.items():
        tables[name] = tables.get(name, {}) | keys
    lines = [f"table_id = {json.dumps(table_id)}"]
    for name, keys in tables.items():
        lines.append(f"[{name}]")
        # JSON strings, numbers and booleans are TOML too; None means "leave the key out".
        lines += [f"{key} = {json.dumps(value)}" for key, value in keys.items() if value is not None]
    path = tmp_path / "scannerd.toml"
    path.write_text("\n".join(lines) + "\n")
    return path
