"""What each kind of shoe writes on the wire, for tests and the golden sessions to send.

One place for the bytes, so a test reads as the cards it deals; the codecs' own tests keep
their frames written out, since the frame is what they test (docs/devices.md has the formats).
"""

from __future__ import annotations

from simulators.usb_devices import key_reports


def beetek(*cards: str, burn: bool = False, crlf: bool = True) -> bytes:
    """Bee-Tek frames as the shoe prints them; a card is sent as written (``10H``, ``H3``, ``4S``)."""
    tag = "[Manual Burn Cards]" if burn else "[Game]"
    end = "\r\n" if crlf else ""
    return "".join(f" {tag}<Card:{c}> {end}" for c in cards).encode("ascii")


def linecode(*codes: str) -> bytes:
    """One code per line, as a scanner sends them (letter-rank ``A01`` = AS, suit-digit ``2130`` = KH)."""
    return "".join(f"{c}\r\n" for c in codes).encode("ascii")


def typed(*codes: str) -> bytes:
    """A keyboard-wedge scanner typing each code and Enter (suit-digit ``1010`` = AS), as reports."""
    return b"".join(report for code in codes for report in key_reports(code + "\n"))
