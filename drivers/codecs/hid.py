"""Boot-protocol keyboard reports from a keyboard-wedge scanner, back into the text it typed.

A wedge scanner "types" each code as key presses in 8-byte boot keyboard reports
(modifier bits, a reserved byte, up to six key usages held down) and ends it with
Enter. A report says which keys are *held*, not which were pressed, so a key
counts once when it first appears: a held key repeated by the device's idle rate,
or still held while the next one goes down (rollover), is not typed twice. Two
equal characters in a row therefore always have a release report between them.

The typed text then goes through the line codec, so code tables, line framing and
bad-code handling are the same as for a serial one-code-per-line scanner.
"""

from __future__ import annotations

from drivers.codecs.linecode import CodeTable, LinecodeCodec, suit_digit
from drivers.events import DeviceEvent

REPORT_SIZE = 8
SHIFT_MASK = 0x22  # left shift (bit 1) or right shift (bit 5)
ENTER_USAGES = frozenset({0x28, 0x58})  # Return, keypad Enter
# Keyboard "error" usages: the device reports every slot as one of these when too
# many keys are down to tell which; such a report says nothing about presses.
ERROR_USAGES = frozenset({0x01, 0x02, 0x03})

# HID Usage Tables, Keyboard/Keypad page (0x07), US layout: usage -> (plain, shifted).
KEYS: dict[int, tuple[str, str]] = {
    **{0x04 + i: (c, c.upper()) for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")},
    **{0x1E + i: pair for i, pair in enumerate(zip("1234567890", "!@#$%^&*()", strict=True))},
    0x2C: (" ", " "),
    0x2D: ("-", "_"),
    0x2E: ("=", "+"),
    0x2F: ("[", "{"),
    0x30: ("]", "}"),
    0x31: ("\\", "|"),
    0x33: (";", ":"),
    0x34: ("'", '"'),
    0x35: ("`", "~"),
    0x36: (",", "<"),
    0x37: (".", ">"),
    0x38: ("/", "?"),
    0x54: ("/", "/"),
    0x55: ("*", "*"),
    0x56: ("-", "-"),
    0x57: ("+", "+"),
    **{0x59 + i: (c, c) for i, c in enumerate("123456789")},
    0x62: ("0", "0"),
    0x63: (".", "."),
}


class BootKeyboard:
    """Incremental decoder: report bytes in, typed text out (Enter becomes ``\\n``).

    Bytes may arrive split or merged anywhere; any input decodes without raising.
    Keys that type nothing (function keys, arrows, ...) are counted in ``ignored``.
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        self._held: frozenset[int] = frozenset()
        self.ignored = 0

    def reset(self) -> None:
        """Forget a partial report and the keys held (after a reconnect)."""
        self._pending.clear()
        self._held = frozenset()

    def feed(self, data: bytes) -> str:
        self._pending += data
        typed: list[str] = []
        while len(self._pending) >= REPORT_SIZE:
            report = bytes(self._pending[:REPORT_SIZE])
            del self._pending[:REPORT_SIZE]
            typed.extend(self._report(report))
        return "".join(typed)

    def _report(self, report: bytes) -> list[str]:
        usages = [u for u in report[2:] if u]
        if any(u in ERROR_USAGES for u in usages):
            return []
        shifted = bool(report[0] & SHIFT_MASK)
        typed: list[str] = []
        for usage in usages:
            if usage in self._held:
                continue
            if usage in ENTER_USAGES:
                typed.append("\n")
            elif usage in KEYS:
                typed.append(KEYS[usage][shifted])
            else:
                self.ignored += 1
        self._held = frozenset(usages)
        return typed


class HidScannerCodec:
    """A wedge scanner's reports in, device events out: keys typed, then the line codec.

    The default table is the table scanners' position letter and four digits
    (``A1010`` = AS); any ``drivers.codecs.linecode`` table can be given.
    Keys that type nothing count as junk bytes.
    """

    def __init__(self, table: CodeTable = suit_digit) -> None:
        self.keyboard = BootKeyboard()
        self.lines = LinecodeCodec(table)

    @property
    def junk_bytes(self) -> int:
        return self.lines.junk_bytes + self.keyboard.ignored

    @property
    def bad_frames(self) -> int:
        return self.lines.bad_frames

    def reset(self) -> None:
        self.keyboard.reset()
        self.lines.reset()

    def feed(self, data: bytes) -> list[DeviceEvent]:
        return self.lines.feed(self.keyboard.feed(data).encode("ascii"))
