"""The ``[display]`` and ``[overlay]`` config sections: where the dealer's page and the stream's overlay
listen, and whom they answer.

It imports nothing of the display's server, so the config can be read (by
``check-config``, by the pit's command line) without starting anything.
"""

from __future__ import annotations

from pydantic import Field

from scannerd.settings.config_section import FilePath
from scannerd.settings.listen import Served


class DisplaySettings(Served):
    """The dealer display web page."""

    enabled: bool = True
    listen: str = Field("127.0.0.1:8080", description="HOST:PORT, or [IPv6]:PORT; port 0 picks a free one.")
    token_file: FilePath | None = Field(
        None,
        description="File holding a token (first line) that acknowledging needs, for a display "
        "on another machine. A relative path is taken inside $CREDENTIALS_DIRECTORY. Unset: "
        "$CREDENTIALS_DIRECTORY/display-token if it exists, else no token.",
    )


class OverlaySettings(Served):
    """The page a studio's video mixer (an OBS or vMix browser source) lays over the table's stream.

    Its own address, so a studio network that reaches it reaches nothing of the dealer's page.
    """

    listen: str | None = Field(
        None,
        description="HOST:PORT, or [IPv6]:PORT, to serve the overlay on; port 0 picks a free one. "
        "Unset: no overlay. Served by the dealer display's server, so [display] must be enabled.",
    )
    theme_file: FilePath | None = Field(
        None,
        description="A CSS file the overlay loads after its own: the studio's colours and fonts, "
        "set as the overlay's CSS variables (docs/overlay.md). Read at start.",
    )
