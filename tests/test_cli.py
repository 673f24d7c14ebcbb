"""The ``scannerd`` entry point: a command that fails unexpectedly is one line for whoever ran it."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

import scannerd.commands.schema
from scannerd.cli import main


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_at_a_terminal_an_unexpected_error_is_one_line_and_the_traceback_goes_to_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(args: object) -> int:
        raise RuntimeError("the disk\nis on fire")

    monkeypatch.setattr(scannerd.commands.schema, "run", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["schema"]) == 1
    line = terminal.getvalue()
    match = re.fullmatch(r"scannerd schema: error: the disk is on fire \(details in (\S+)\)\n", line)
    assert match, line
    saved = Path(match[1]).read_text()
    assert saved.startswith("Traceback") and "RuntimeError: the disk" in saved
