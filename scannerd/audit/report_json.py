"""report.json: the audit's figures for a program to read (docs/audit.md lists the fields).

Written whole or not at all (a temporary file renamed over the old one), so
a reader never sees half a report; keys in a fixed order and no timestamp
of its own, so the same recordings always give the same file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

NAME = "report.json"


def write(report: dict[str, Any], out: Path) -> Path:
    return write_text(out / NAME, json.dumps(report, indent=1, ensure_ascii=False) + "\n")


def write_text(path: Path, text: str) -> Path:
    """``text`` into ``path``, replacing it only once the new content is complete."""
    partial = path.with_name(path.name + ".part")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path
