"""``scannerd demo`` as a real process writing into a pipe, each line kept with the moment it came."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.broker import wait_until

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Demo:
    """A running demo: ``lines`` are ``(monotonic time read, line)``, in order, as the pipe gave them."""

    proc: subprocess.Popen[str]
    lines: list[tuple[float, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # stderr's lines

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, ""):
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def _read_errors(self) -> None:
        assert self.proc.stderr is not None
        self.errors.extend(line.rstrip("\n") for line in iter(self.proc.stderr.readline, ""))

    def found(self, pattern: str) -> tuple[float, str] | None:
        """The first line so far that ``pattern`` matches (``re.search``), with its time."""
        return next(((at, line) for at, line in list(self.lines) if re.search(pattern, line)), None)

    def wait_for(self, pattern: str, timeout: float, what: str) -> tuple[float, str]:
        """The first line ``pattern`` matches, once it has come (an AssertionError if the demo ends first)."""
        wait_until(lambda: self.found(pattern) is not None or self.proc.poll() is not None, timeout, what)
        line = self.found(pattern)
        assert line is not None, f"the demo ended (status {self.proc.poll()}) before {what}: {self.text()}"
        return line

    def text(self) -> str:
        return "\n".join(line for _, line in list(self.lines))

    def stop(self) -> int:
        """Ctrl-C, as its user stops it; its exit status."""
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(30)


@contextmanager
def demo_process(argv: Sequence[str | Path], cwd: Path = ROOT) -> Iterator[Demo]:
    """``argv`` (a ``scannerd demo`` command line) run into pipes; killed if the test leaves it running."""
    proc = subprocess.Popen(
        [str(arg) for arg in argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    demo = Demo(proc)
    readers = [threading.Thread(target=read, daemon=True) for read in (demo._read, demo._read_errors)]
    for reader in readers:
        reader.start()
    try:
        yield demo
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for reader in readers:
            reader.join(10)


def demo_command(*argv: str | Path) -> list[str | Path]:
    """``scannerd demo ARGV...`` with this test's Python."""
    return [sys.executable, "-m", "scannerd", "demo", *argv]
