"""Photograph the dealer display in its main states, for docs/display.md.

    .venv/bin/python -m tests.support.display_screens [DIR]        # default docs/

Each picture is a real validator and Display (``tests.support.display``) shown in the same
headless Chromium the page tests use, at one of the table monitors' sizes.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

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


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs")
    with tempfile.TemporaryDirectory() as profile, start_chromium(Path(profile)) as driver:
        for state, (width, height) in SHOTS:
            table = table_in(state)
            try:
                resize(driver, width, height)
                open_page(driver, table.display.url)
                path = out / f"display-{state}-{width}x{height}.png"
                path.write_bytes(driver.get_screenshot_as_png())
                print(path)
            finally:
                table.display.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
