"""The stream overlay as a video mixer shows it: a transparent browser source over a frame of the table.

OBS and vMix draw a browser source with no background of its own, so what the
page leaves transparent shows the video. Headless Chromium does the same once
its default background is made transparent (``transparent``); the screenshot
then carries the page's own alpha, which ``over_frame`` lays over a frame of a
table as the mixer would. The frame is drawn here (felt, the table's edge, a
shoe, chips), so no picture has to be kept in the repository.
"""

from __future__ import annotations

import io
from typing import Any

from PIL import Image, ImageDraw

SIZES = ((1920, 1080), (1280, 720))
"""The browser-source sizes a studio sets: 1080p and 720p."""


def transparent(driver: Any) -> None:
    """Render pages with no background behind them, as a mixer's browser source does."""
    driver.execute_cdp_cmd(
        "Emulation.setDefaultBackgroundColorOverride", {"color": {"r": 0, "g": 0, "b": 0, "a": 0}}
    )


def shot(driver: Any) -> Image.Image:
    """The page as it is now, with its alpha."""
    return Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGBA")


def sample_frame(width: int, height: int) -> Image.Image:
    """A frame of a baccarat table seen from the dealer's camera: felt, its curved edge, a shoe, chips."""
    frame = Image.new("RGBA", (width, height), (18, 70, 44, 255))
    draw = ImageDraw.Draw(frame)
    for band in range(0, height, 4):  # the light falls off towards the bottom of the felt
        shade = 70 - 30 * band // height
        draw.rectangle((0, band, width, band + 4), fill=(14, shade + 10, 40, 255))
    u = width / 192
    draw.ellipse((-40 * u, 50 * u, 232 * u, 260 * u), outline=(120, 72, 30, 255), width=int(5 * u))
    for n, x in enumerate((40, 74, 118, 152)):  # betting boxes on the layout
        draw.rounded_rectangle(
            (x * u, 40 * u, (x + 24) * u, 56 * u),
            radius=2 * u,
            outline=(230, 210, 150, 255),
            width=int(0.4 * u),
        )
        draw.text(((x + 6) * u, 45 * u), ("PLAYER", "TIE", "BANKER", "PAIR")[n], fill=(230, 210, 150, 255))
    draw.rounded_rectangle((150 * u, 8 * u, 178 * u, 24 * u), radius=u, fill=(30, 30, 34, 255))  # the shoe
    for n in range(6):  # chips
        cx, cy = (60 + 14 * n) * u, (70 + (n % 2) * 4) * u
        draw.ellipse(
            (cx - 3 * u, cy - 3 * u, cx + 3 * u, cy + 3 * u),
            fill=((200, 30, 30, 255), (30, 30, 200, 255))[n % 2],
        )
    return frame


def over_frame(overlay: Image.Image) -> Image.Image:
    """The overlay's screenshot laid over the sample frame, as the stream shows it."""
    return Image.alpha_composite(sample_frame(*overlay.size), overlay)
