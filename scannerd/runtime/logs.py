"""Log set-up: readable lines on a terminal, JSON lines for journald and files.

Every line carries the table id, so the logs of two tables on one PC (or one
casino's log store) can be told apart. Library loggers (paho, aiohttp, ...) go
through the same renderer. Values under secret-looking keys are masked before
rendering, wherever they were logged from.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from scannerd.runtime.config import redact
from scannerd.runtime.log_settings import LogSettings

# syslog priorities, for journald's "<N>" line prefix (SyslogLevelPrefix=yes, the default)
_PRIORITY = {"critical": 2, "exception": 3, "error": 3, "warning": 4, "info": 6, "debug": 7}


class LogOutput:
    """Where rendered lines go: stderr, or a file that SIGHUP reopens after logrotate moved it."""

    def __init__(self, path: Path | None = None, stream: TextIO | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file: TextIO = self._open() if path else (stream or sys.stderr)

    def _open(self) -> TextIO:
        assert self.path is not None
        return self.path.open("a", encoding="utf-8", buffering=1)

    def write(self, text: str) -> int:
        with self._lock:
            return self._file.write(text)

    def flush(self) -> None:
        with self._lock:
            self._file.flush()

    def isatty(self) -> bool:
        return self._file.isatty()

    def fileno(self) -> int:
        return self._file.fileno()

    def reopen(self) -> None:
        """Start a fresh file at ``path`` (no-op for stderr); the old one is closed."""
        if self.path is None:
            return
        new = self._open()
        with self._lock:
            old, self._file = self._file, new
        old.close()


def configure(
    settings: LogSettings,
    table_id: str,
    level: str | None = None,
    stream: TextIO | None = None,
) -> LogOutput:
    """Set up structlog and the standard library's logging; ``level`` overrides ``settings.level``."""
    output = LogOutput(settings.file, stream)
    level_no = logging.getLevelName((level or settings.level).upper())
    fmt = settings.format
    if fmt == "auto":
        fmt = "console" if output.isatty() else "json"
    renderer: Processor
    if fmt == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=output.isatty())
    else:
        renderer = structlog.processors.JSONRenderer()
        if settings.file is None and _is_journal(output):
            renderer = _JournalPriority(renderer)
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _Bind(table_id=table_id),
        _redact,
    ]
    if fmt == "json":
        shared.append(structlog.processors.format_exc_info)

    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level_no),
        logger_factory=structlog.WriteLoggerFactory(file=output),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(output)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level_no)
    threading.excepthook = _log_thread_crash
    return output


class _Bind:
    """Adds fixed fields to every line, whichever thread logs it (context variables are per thread)."""

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def __call__(self, logger: WrappedLogger, method: str, event_dict: EventDict) -> EventDict:
        for key, value in self.fields.items():
            event_dict.setdefault(key, value)
        return event_dict


def _redact(logger: WrappedLogger, method: str, event_dict: EventDict) -> MutableMapping[str, Any]:
    return redact(event_dict)


class _JournalPriority:
    """Prefixes a rendered line with its syslog priority so ``journalctl -p err`` works."""

    def __init__(self, renderer: Processor) -> None:
        self.renderer = renderer

    def __call__(self, logger: WrappedLogger, method: str, event_dict: EventDict) -> str:
        priority = _PRIORITY.get(str(event_dict.get("level", "info")), 6)
        rendered = self.renderer(logger, method, event_dict)
        if not isinstance(rendered, str):  # the JSONRenderer set up here writes text, through json.dumps
            raise TypeError(f"a journal line must be text, not {type(rendered).__name__}")
        return f"<{priority}>{rendered}"


def _is_journal(output: LogOutput) -> bool:
    """Whether ``output`` is the stream systemd connected to journald (``$JOURNAL_STREAM``)."""
    try:
        st = os.fstat(output.fileno())
    except (OSError, ValueError):
        return False
    return os.environ.get("JOURNAL_STREAM", "") == f"{st.st_dev}:{st.st_ino}"


def _log_thread_crash(args: threading.ExceptHookArgs) -> None:
    # A thread dying must show in the journal as a structured line, not as bare stderr text.
    thread = args.thread.name if args.thread else "?"
    structlog.get_logger("scannerd").error(
        "thread crashed",
        thread=thread,
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )
