"""Photograph the dealer display in its main states, for docs/display.md.

    .venv/bin/python -m tests.support.display_screens [DIR]        # default docs/

Each picture is a real validator and Display (``tests.support.display``) shown in the same
headless Chromium the page tests use, at one of the table monitors' sizes.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from scannerd.display.settings import OverlaySettings
from tests.support.browser import open_page, resize, start_chromium
from tests.support.display import table_in

SHOTS = (
    ("alerts-3", (1920, 1080)),
    ("tie", (1024, 768)),
    ("no-more-bets", (1920, 1080)),
    ("last-hand-dealer", (1024, 768)),
    ("alerts-10", (1280, 1024)),
    ("alerts-6", (768, 1024)),
    ("dragon-tiger-tie", (1920, 1080)),
    ("dragon-tiger-dealing", (768, 1024)),
    ("suspended", (1920, 1080)),
    ("suspended", (768, 1024)),
)
"""(state, size) of each picture; the file is ``display-{state}-{width}x{height}.png``."""


def photograph(
    shots: Sequence[tuple[str, tuple[int, int]]],
    page: str,
    out: Path,
    *,
    overlay: OverlaySettings | None = None,
    prepare: Callable[[Any], None] = lambda driver: None,
    save: Callable[[Any, Path], None] = lambda driver, path: path.write_bytes(driver.get_screenshot_as_png()),
) -> None:
    """Each (state, size) of ``shots`` as ``{page}-{state}-{width}x{height}.png`` in ``out``: a fresh table
    brought to the state, its page (``display``, or ``overlay`` with ``overlay`` set) at that size."""
    with tempfile.TemporaryDirectory() as profile, start_chromium(Path(profile)) as driver:
        prepare(driver)
        for state, (width, height) in shots:
            table = table_in(state, overlay)
            try:
                resize(driver, width, height)
                url = table.display.overlay_url if overlay is not None else table.display.url
                assert url is not None
                open_page(driver, url)
                path = out / f"{page}-{state}-{width}x{height}.png"
                save(driver, path)
                print(path)
            finally:
                table.display.stop()


def main(argv: list[str]) -> int:
    photograph(SHOTS, "display", Path(argv[0] if argv else "docs"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
