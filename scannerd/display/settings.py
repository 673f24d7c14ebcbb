"""The ``[display]`` config section: where the dealer display listens and whom it answers.

It imports nothing of the display's server, so the config can be read (by
``check-config``, by the pit's command line) without starting anything.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from scannerd.settings.config_section import FilePath, Section


class DisplaySettings(Section):
    """The dealer display web page."""

    enabled: bool = True
    listen: str = Field("127.0.0.1:8080", description="HOST:PORT, or [IPv6]:PORT; port 0 picks a free one.")
    max_connections: int = Field(
        8,
        ge=1,
        le=256,
        description="Browser connections served at once (a kiosk page needs two); more are answered "
        "503, so the display can never use the descriptors the shoe and the broker need.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names the page is opened under, besides IP addresses and localhost; "
        "a request naming any other host is refused (DNS rebinding).",
    )
    token_file: FilePath | None = Field(
        None,
        description="File holding a token (first line) that acknowledging needs, for a display "
        "on another machine. A relative path is taken inside $CREDENTIALS_DIRECTORY. Unset: "
        "$CREDENTIALS_DIRECTORY/display-token if it exists, else no token.",
    )

    @field_validator("listen")
    @classmethod
    def _listen_shape(cls, listen: str) -> str:
        split_listen(listen)
        return listen

    @property
    def host(self) -> str:
        return split_listen(self.listen)[0]

    @property
    def port(self) -> int:
        return split_listen(self.listen)[1]


def split_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError("expected HOST:PORT (or [IPv6]:PORT) with a port from 0 to 65535")
    return host, int(port)
