"""What every section that serves HTTP shares: where it listens and which host names it answers to.

The dealer display, the stream overlay and the metrics server each listen
on an address of their own and refuse a ``Host`` they do not know (DNS
rebinding: see ``scannerd/display/access.py``). One shape for all three, so
a listen address is read, and refused, the same way everywhere.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from scannerd.settings.config_section import Section

Connections = Annotated[int, Field(ge=1, le=256)]
"""Connections a listener serves at once: past it, an idle one gives way, or 503 (``display/guard.py``)."""


class Served(Section):
    """A section with a ``listen`` address (None: not served) and the host names it may be opened under."""

    listen: str | None = None
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names a request may give, besides IP addresses and localhost; a request "
        "naming any other host is refused (DNS rebinding).",
    )
    max_connections: Connections = Field(
        16,
        description="Connections served at once, from all clients. Past it an idle one (a browser's "
        "keep-alive) is closed to make room, or, when all are busy, the new one is answered 503: the "
        "page can never use the descriptors the shoe and the broker need.",
    )
    max_per_address: Connections = Field(
        8,
        description="Connections served at once from one client address (an IPv6 client by its /64), "
        "within max_connections: one host holding streams open locks out only itself.",
    )

    @field_validator("listen")
    @classmethod
    def _listen_shape(cls, listen: str | None) -> str | None:
        if listen is not None:
            split_listen(listen)
        return listen

    @property
    def host(self) -> str:
        assert self.listen is not None, "not served"
        return split_listen(self.listen)[0]

    @property
    def port(self) -> int:
        assert self.listen is not None, "not served"
        return split_listen(self.listen)[1]


def split_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError("expected HOST:PORT (or [IPv6]:PORT) with a port from 0 to 65535")
    return host, int(port)
