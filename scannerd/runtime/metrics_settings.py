"""The ``[metrics]`` config section: where Prometheus scrapes the table, and whom it answers.

Off unless ``listen`` is set. It imports nothing of the server, so reading the
config starts nothing and loads no client library.
"""

from __future__ import annotations

import ipaddress

from pydantic import Field, field_validator

from scannerd.display.settings import split_listen
from scannerd.settings.config_section import FilePath, Section


class MetricsSettings(Section):
    """Prometheus metrics (``/metrics``) and a health check (``/healthz``) over HTTP."""

    listen: str | None = Field(
        None,
        description="HOST:PORT, or [IPv6]:PORT, to serve /metrics and /healthz on; port 0 picks a free "
        "one. Unset: no metrics served.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names a scrape may name, besides IP addresses and localhost; a request "
        "naming any other host is refused (DNS rebinding).",
    )
    token_file: FilePath | None = Field(
        None,
        description="File holding a token (first line) every request needs, as 'Authorization: Bearer'. "
        "A relative path is taken inside $CREDENTIALS_DIRECTORY. Unset: "
        "$CREDENTIALS_DIRECTORY/metrics-token if it exists, else no token, which only a loopback "
        "listen may do without.",
    )

    @field_validator("listen")
    @classmethod
    def _listen_shape(cls, listen: str | None) -> str | None:
        if listen is not None:
            split_listen(listen)
        return listen

    @property
    def host(self) -> str:
        assert self.listen is not None
        return split_listen(self.listen)[0]

    @property
    def port(self) -> int:
        assert self.listen is not None
        return split_listen(self.listen)[1]

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
