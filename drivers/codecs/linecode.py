"""One-code-per-line scanners, and the code tables that map their codes to cards.

The tables are shared with the USB keyboard-wedge scanners, which type the
same codes as keys. A table is any function from a code (already upper-case
and stripped) to a card code or None.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from drivers.cards import CARD_SET, RANKS
from drivers.events import DeviceCard, DeviceEvent

CodeTable = Callable[[str], str | None]

MAX_LINE = 32
_PRINTABLE = re.compile(rb"[\x20-\x7e]*")
_LETTER_RANK = re.compile(r"([AHCD])(\d\d)")
_SUIT_DIGIT = re.compile(r"[A-Z]?([1-4])(\d\d)0")
_LETTER_SUITS = {"A": "S", "H": "H", "C": "C", "D": "D"}
_DIGIT_SUITS = "SHCD"  # 1=S 2=H 3=C 4=D


def _rank(number: str) -> str | None:
    n = int(number)
    return RANKS[n - 1] if 1 <= n <= len(RANKS) else None


def letter_rank(code: str) -> str | None:
    """Suit letter then two-digit rank, ``A`` meaning spades: ``A01`` = AS, ``D12`` = QD."""
    m = _LETTER_RANK.fullmatch(code)
    rank = _rank(m[2]) if m else None
    return rank + _LETTER_SUITS[m[1]] if m and rank else None


def suit_digit(code: str) -> str | None:
    """Optional position letter, suit digit (1=S 2=H 3=C 4=D), two-digit rank, ``0``: ``1010`` = AS."""
    m = _SUIT_DIGIT.fullmatch(code)
    rank = _rank(m[2]) if m else None
    return rank + _DIGIT_SUITS[int(m[1]) - 1] if m and rank else None


def any_builtin(code: str) -> str | None:
    """Either built-in table; their code shapes never overlap."""
    return letter_rank(code) or suit_digit(code)


TABLES: dict[str, CodeTable] = {"auto": any_builtin, "letter-rank": letter_rank, "suit-digit": suit_digit}


def mapping_table(mapping: Mapping[str, str]) -> CodeTable:
    """A table given as code -> card pairs (a site's own scanner programming)."""
    bad = sorted(card for card in mapping.values() if card not in CARD_SET)
    if bad:
        raise ValueError(f"code table maps to unknown cards: {', '.join(bad)}")
    table = {code.strip().upper(): card for code, card in mapping.items()}
    return table.get


def make_table(spec: str | Mapping[str, str]) -> CodeTable:
    """A table from a built-in name, a JSON file of code -> card pairs, or such a mapping."""
    if isinstance(spec, Mapping):
        return mapping_table(spec)
    if spec in TABLES:
        return TABLES[spec]
    if spec.endswith(".json"):
        return mapping_table(_table_file(Path(spec)))
    raise ValueError(f"unknown code table {spec!r}: use one of {', '.join(TABLES)} or a .json file")


def _table_file(path: Path) -> dict[str, str]:
    """A site's table file: one JSON object of code -> card; anything else is named, not a traceback."""
    try:
        data = json.loads(path.read_text())
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested beyond the parser
        raise ValueError(f"{path}: not a JSON file: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(card, str) for card in data.values()):
        raise ValueError(f'{path}: expected one JSON object of code -> card, e.g. {{"A01": "AS"}}')
    return data


class LinecodeCodec:
    """Lines end at CR or LF. A printable line the table does not know is reported as an
    unreadable card (scanners print NOREAD-style text when a read fails); lines with
    control bytes or longer than any code are noise and are only counted."""

    def __init__(self, table: CodeTable = any_builtin) -> None:
        self.table = table
        self._line = bytearray()
        self._discarding = False
        self.junk_bytes = 0
        self.bad_frames = 0

    def reset(self) -> None:
        self._line.clear()
        self._discarding = False

    def feed(self, data: bytes) -> list[DeviceEvent]:
        out: list[DeviceEvent] = []
        for chunk in re.split(rb"([\r\n])", data):
            if chunk in (b"\r", b"\n"):
                if not self._discarding and self._line:
                    event = self._event(bytes(self._line))
                    if event is not None:
                        out.append(event)
                self._line.clear()
                self._discarding = False
            elif self._discarding:
                self.junk_bytes += len(chunk)
            else:
                self._line += chunk
                if len(self._line) > MAX_LINE:
                    self.junk_bytes += len(self._line)
                    self._line.clear()
                    self._discarding = True
        return out

    def _event(self, line: bytes) -> DeviceEvent | None:
        if not _PRINTABLE.fullmatch(line):
            self.junk_bytes += len(line)
            return None
        code = line.decode("ascii").strip().upper()
        if not code:
            return None
        card = self.table(code)
        if card is None:
            self.bad_frames += 1
        return DeviceCard(card)
