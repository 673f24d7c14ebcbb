"""The ``scannerd`` entry point: a command that fails unexpectedly is one line for whoever ran it."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.util import find_spec
from pathlib import Path

import pytest

import scannerd.commands.schema
from scannerd import __version__
from scannerd.cli import main


class Stderr(io.StringIO):
    terminal = False

    def isatty(self) -> bool:
        return self.terminal


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe, no log set up"])
def test_an_unexpected_error_is_one_line_and_the_traceback_goes_to_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, terminal: bool
) -> None:
    def broken(args: object) -> int:
        raise RuntimeError("the disk\nis on fire")

    monkeypatch.setattr(scannerd.commands.schema, "run", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    stderr = Stderr()
    stderr.terminal = terminal
    monkeypatch.setattr("sys.stderr", stderr)
    monkeypatch.setattr("structlog.is_configured", lambda: False)  # schema sets up no log
    assert main(["schema"]) == 1
    line = stderr.getvalue()
    match = re.fullmatch(r"scannerd schema: error: the disk is on fire \(details in (\S+)\)\n", line)
    assert match, line
    saved = Path(match[1]).read_text()
    assert saved.startswith("Traceback") and "RuntimeError: the disk" in saved


_LOADED = """
import sys
from scannerd.cli import main
main(["run", "--config", sys.argv[1]])
import scannerd.runtime.daemon  # what the daemon imports once the config is good
print(sorted(m for m in ("rich", "structlog", "scannerd.runtime.daemon") if sys.modules.get(m) is not None))
"""


def test_the_daemon_does_not_load_the_terminal_ui(tmp_path: Path) -> None:
    """rich is for ``watch`` and ``demo``; in ``run`` it would only sit in memory for the table's life."""
    out = subprocess.run(
        [sys.executable, "-c", _LOADED, str(tmp_path / "missing.toml")], capture_output=True, text=True
    )
    assert out.stdout.split("\n")[-2] == "['scannerd.runtime.daemon', 'structlog']", out.stderr


def test_the_version_says_which_build_runs() -> None:
    """Compiled by mypyc or pure Python, read from what the judging module is loaded from, not from a flag."""
    validator = find_spec("scannerd.core.validator")
    assert validator is not None and validator.origin is not None
    compiled = validator.origin.endswith(tuple(EXTENSION_SUFFIXES))
    out = subprocess.run([sys.executable, "-m", "scannerd", "--version"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    build = "compiled: mypyc" if compiled else "pure Python"
    assert out.stdout == f"scannerd {__version__} ({build})\n"
