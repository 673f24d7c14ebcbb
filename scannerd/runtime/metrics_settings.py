"""The ``[metrics]`` config section: where Prometheus scrapes the table, and whom it answers.

Off unless ``listen`` is set. It imports nothing of the server, so reading the
config starts nothing and loads no client library.
"""

from __future__ import annotations

import ipaddress

from pydantic import Field

from scannerd.settings.config_section import FilePath
from scannerd.settings.listen import Served


class MetricsSettings(Served):
    """Prometheus metrics (``/metrics``) and a health check (``/healthz``) over HTTP."""

    listen: str | None = Field(
        None,
        description="HOST:PORT, or [IPv6]:PORT, to serve /metrics and /healthz on; port 0 picks a free "
        "one. Unset: no metrics served.",
    )
    token_file: FilePath | None = Field(
        None,
        description="File holding a token (first line) every request needs, as 'Authorization: Bearer'. "
        "A relative path is taken inside $CREDENTIALS_DIRECTORY. Unset: "
        "$CREDENTIALS_DIRECTORY/metrics-token if it exists, else no token, which only a loopback "
        "listen may do without.",
    )

    @property
    def loopback(self) -> bool:
        """Only this machine can reach the listen address: a token is then not needed."""
        host = self.host
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
