"""Photograph the stream overlay over a frame of a table, in its main states, for docs/overlay.md.

    .venv/bin/python -m tests.support.overlay_screens [DIR]        # default docs/

Each picture is a real validator and Display (``tests.support.display``) with its overlay, shown
in headless Chromium with a transparent background and laid over ``tests.support.overlay``'s frame.
"""

from __future__ import annotations

import sys
from pathlib import Path

from scannerd.display.settings import OverlaySettings
from tests.support.display_screens import photograph
from tests.support.overlay import over_frame, shot, transparent

SHOTS = (
    ("betting", (1920, 1080)),
    ("tie", (1920, 1080)),
    ("ez-dragon-7", (1280, 720)),
    ("squeezed", (1280, 720)),
    ("dragon-tiger-tie", (1920, 1080)),
)
"""(state, size) of each picture; the file is ``overlay-{state}-{width}x{height}.png``."""


def main(argv: list[str]) -> int:
    photograph(
        SHOTS,
        "overlay",
        Path(argv[0] if argv else "docs"),
        overlay=OverlaySettings(listen="127.0.0.1:0"),
        prepare=transparent,
        save=lambda driver, path: over_frame(shot(driver)).convert("RGB").save(path, optimize=True),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
