"""The capability table in docs/devices.md, written from the driver classes.

    python -m tests.support.driver_table    # rewrite the table after changing a driver's facts

tests/drivers/test_driver_contract.py fails while the page and the classes disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from drivers.base import Driver
from drivers.registry import BUILTIN_DRIVERS, get_driver_class

PAGE = Path(__file__).parents[2] / "docs" / "devices.md"
BEGIN = "<!-- driver table: written by python -m tests.support.driver_table from the driver classes -->\n"
END = "<!-- end of driver table -->\n"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _transport(cls: type[Driver]) -> str:
    baud = getattr(cls, "default_baudrate", None)
    return f"serial, {baud} baud by default" if cls.transport == "serial" else "native USB (pyusb)"


def _usb_ids(cls: type[Driver]) -> str:
    own = [f"`{usb_id}`" for usb_id in cls.usb_ids if not usb_id.generic]
    if any(usb_id.generic for usb_id in cls.usb_ids):
        own.append("generic USB-serial adapters")
        return ", ".join(own)
    return ", ".join(own) or "none"


def render() -> str:
    """The table, one row per built-in driver (the page documents those), in the registry's order."""
    rows = [
        "| driver | device | transport (`transport`) | reports the cut card (`reports_cut_card`) "
        "| repeats until acknowledged (`repeats_unacknowledged`) | alert LED/buzzer (`alert_outputs`) "
        "| USB ids (`usb_ids`) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in BUILTIN_DRIVERS:
        cls = get_driver_class(name)
        rows.append(
            f"| `{name}` | {cls.family} | {_transport(cls)} | {_yes(cls.reports_cut_card)} "
            f"| {_yes(cls.repeats_unacknowledged)} | {_yes(cls.alert_outputs)} | {_usb_ids(cls)} |"
        )
    return "\n".join(rows) + "\n"


def on_page(text: str) -> str:
    """The table as the page has it now."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end]


def main() -> int:
    text = PAGE.read_text()
    PAGE.write_text(text.replace(BEGIN + on_page(text) + END, BEGIN + render() + END))
    print(f"wrote the driver table in {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
