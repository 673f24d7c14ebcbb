"""What the journal says about the link to the broker: one line per change, with the reason.

paho retries a failed connection for ever, with backoff, and tells nothing
of why: a broker that is down, a certificate from another CA and a host name
the certificate does not name all looked the same, silent. Logging every
retry would bury the journal instead (one line every 30 s for a week-long
outage). So a failure is logged when its reason differs from the last one,
and the connection that finally succeeds says how many attempts failed.
"""

from __future__ import annotations

import socket
import ssl

import structlog

log = structlog.get_logger("scannerd.link.publisher")


def failure_reason(exc: BaseException | None) -> str:
    """Why a connection attempt failed, in the words an operator needs (no errno numbers)."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS: the broker's certificate is not accepted: {exc.verify_message}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS: {exc.reason or exc}"
    if isinstance(exc, socket.gaierror):
        return f"the host name cannot be resolved: {exc.strerror}"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused: no broker listens on that port"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc) or type(exc).__name__
    return str(exc) if exc else "unknown"


class LinkReport:
    """Connection failures as log lines, once per change of reason. Called on paho's network thread only."""

    def __init__(self, host: str, port: int, tls: bool) -> None:
        self.host = host
        self.port = port
        self.tls = tls
        self._reason: str | None = None
        self._failed = 0
        self._refused = False  # the broker said no: the disconnection that follows is part of it

    @property
    def failed_attempts(self) -> int:
        return self._failed

    def failed(self, reason: str, event: str = "mqtt connection failed") -> None:
        """An attempt failed; logged only when it failed differently from the one before."""
        self._failed += 1
        if reason != self._reason:
            self._reason = reason
            log.error(event, reason=reason, host=self.host, port=self.port, failed_attempts=self._failed)

    def refused(self, reason: str) -> None:
        """The broker answered the connection with a refusal (a bad password, a client id not allowed)."""
        self.failed(reason, "mqtt connection refused")
        self._refused = True

    def closed(self, reason: str) -> None:
        """The connection ended before the broker accepted it."""
        if self._refused:
            self._refused = False
            return
        hint = "does the broker accept this client certificate?" if self.tls else "does this port expect TLS?"
        self.failed(f"the broker closed the connection before accepting it ({reason}): {hint}")

    def lost(self) -> None:
        """An established connection went away: the next failure, whatever it is, is news."""
        self._reason = None

    def up(self) -> int:
        """A connection succeeded; how many attempts had failed since the last one did."""
        failed, self._failed, self._reason, self._refused = self._failed, 0, None, False
        return failed
