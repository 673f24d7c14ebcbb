"""The process shell around the daemon: signals, supervision, and what systemd is told.

The rule is "healthy or gone": the main loop asks the daemon every tick whether
all of its components are alive (the daemon restarts what it can); only then
is the systemd watchdog fed. If a component stays dead, the process stops and
exits non-zero so that systemd restarts it whole, never lingering half-alive.

Signals are taken synchronously (blocked, then collected with ``sigtimedwait``
in the loop) rather than by handlers, so no handler can interrupt the daemon's
own threads or locks at an arbitrary point.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Protocol

import structlog

from scannerd.runtime.sdnotify import Notifier

log = structlog.get_logger(__name__)

EXIT_OK = 0
EXIT_FAILURE = 1

_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
_SIGNALS = {*_STOP_SIGNALS, signal.SIGHUP}


class Supervised(Protocol):
    """What the shell needs from the daemon (``scannerd.runtime.daemon.Daemon`` provides it).

    Threads must be started in ``start()``, not in the constructor: only threads started
    after the shell blocked the stop signals leave them to the main loop.
    """

    def start(self) -> None: ...
    def stop(self, timeout: float = 5.0) -> None: ...
    def check(self) -> list[str]: ...
    def status_line(self) -> str: ...
    def reload(self) -> None: ...


class Service:
    """Runs one daemon until a stop signal or an unrecoverable fault; ``run()`` returns the exit code."""

    def __init__(
        self,
        daemon: Supervised,
        notifier: Notifier,
        *,
        reopen_logs: Callable[[], None] = lambda: None,
        tick: float = 1.0,
        stop_timeout: float = 5.0,
        max_failed_checks: int = 3,
    ) -> None:
        self.daemon = daemon
        self.notifier = notifier
        self.reopen_logs = reopen_logs
        # Feed the watchdog well inside its timeout, even if one check is slow.
        timeout = notifier.watchdog_timeout
        self.tick = min(tick, timeout / 3) if timeout else tick
        self.stop_timeout = stop_timeout
        self.max_failed_checks = max_failed_checks
        self._last_status = ""

    def run(self) -> int:
        # Blocked before start() so that every thread the daemon starts inherits the mask and
        # the signals wait, pending, for the main loop.
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            code = self._run()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        self._exit_if_threads_linger(code)
        return code

    def _run(self) -> int:
        self._status("starting")
        try:
            self.daemon.start()
        except Exception as exc:
            log.exception("start failed")
            self._status(f"start failed: {exc}")
            self._stop()
            return EXIT_FAILURE
        self._last_status = self._status_line()
        self.notifier.ready(self._last_status)
        log.info("ready", status=self._last_status)

        code = EXIT_OK
        failed_checks = 0
        while True:
            received = signal.sigtimedwait(_SIGNALS, self.tick)
            if received is not None and received.si_signo in _STOP_SIGNALS:
                log.info("stop requested", signal=signal.Signals(received.si_signo).name)
                break
            if received is not None:
                self._reload()
            broken = self._check()
            if not broken:
                failed_checks = 0
                self._status(self._status_line())
                self.notifier.watchdog()
                continue
            failed_checks += 1
            self._status(f"unhealthy: {', '.join(broken)}; {self._status_line()}")
            log.error("components down", components=broken, check=failed_checks, of=self.max_failed_checks)
            if failed_checks >= self.max_failed_checks:
                log.critical("giving up: components could not be restarted", components=broken)
                code = EXIT_FAILURE
                break
        self.notifier.stopping()
        self._status("stopping")
        return code if self._stop() else EXIT_FAILURE

    def _check(self) -> list[str]:
        try:
            return list(self.daemon.check())
        except Exception:
            log.exception("health check failed")
            return ["health-check"]

    def _reload(self) -> None:
        """SIGHUP: a fresh log file first (so what follows lands in it), then the daemon's own reload."""
        self.notifier.reloading()
        try:
            self.reopen_logs()
            self.daemon.reload()
            log.info("reloaded")
        except Exception:
            log.exception("reload failed; carrying on with the previous settings")
        self.notifier.ready()

    def _stop(self) -> bool:
        """Stop the daemon; False if it raised. A stop that hangs ends the process instead."""
        grace = self.stop_timeout + 2.0
        deadline = threading.Timer(grace, _abandon, args=(f"stop did not finish within {grace:.0f} s",))
        deadline.daemon = True
        deadline.start()
        try:
            self.daemon.stop(timeout=self.stop_timeout)
        except Exception:
            log.exception("stop failed")
            return False
        finally:
            deadline.cancel()
        log.info("stopped")
        return True

    def _status_line(self) -> str:
        try:
            return self.daemon.status_line()
        except Exception:
            log.exception("status line failed")
            return "status unavailable"

    def _status(self, text: str) -> None:
        if text != self._last_status:
            self._last_status = text
            self.notifier.status(text)

    def _exit_if_threads_linger(self, code: int) -> None:
        """A thread that outlives stop() would keep the process half-alive: end it here instead."""
        others = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
        deadline = time.monotonic() + 2.0
        for thread in others:
            thread.join(max(0.0, deadline - time.monotonic()))
        lingering = [t.name for t in others if t.is_alive()]
        if lingering:
            _abandon(f"threads still running after stop: {', '.join(lingering)}", code)


def _abandon(reason: str, code: int = EXIT_FAILURE) -> None:
    log.critical("exiting at once", reason=reason)
    os._exit(code)
