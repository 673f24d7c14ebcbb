"""Running a ``scannerd`` command inside the test process without leaving its logging set up.

Commands configure logging for their process (``scannerd.runtime.logs.configure``);
run in-process, that would send later tests' logs to a stream a fixture has
already closed. ``scannerd()`` puts the process's logging back afterwards.
"""

from __future__ import annotations

import logging
import threading

import structlog

from scannerd.cli import main


def scannerd(*argv: str) -> int:
    """``scannerd ARGV...`` in this process; its exit status."""
    root = logging.getLogger()
    saved = structlog.get_config(), root.handlers[:], root.level, threading.excepthook
    try:
        return main(list(argv))
    finally:
        config, root.handlers[:], level, threading.excepthook = saved
        root.setLevel(level)
        structlog.configure(**config)
