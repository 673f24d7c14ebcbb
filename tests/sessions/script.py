"""Hand-written sessions: what a device sent and the game server asked, written out as recordings.

A :class:`Script` collects lines at chosen times; :meth:`Script.device` cuts
the bytes it is given into chunks at pseudo-random places (seeded by the
session's name), as a serial port hands them to a reader: mid-frame, a
single byte, several frames merged. The recording is then exactly what the
live recorder would have written for that traffic.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from drivers.codecs.framed import encode_event
from drivers.events import DeviceCard, DeviceCutCard, DeviceFault, DeviceHello
from scannerd.core.house import HouseRules
from scannerd.core.inputs import Actor
from scannerd.recording.format import Header, RecordingWriter

STARTED_AT = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)

BEFORE_SUSPENSION: dict[str, Any] = {"suspend_on": ()}
"""Every case but those of suspension was recorded before tables stopped after a malfunction: their
headers name no ``suspend_on``, and they must replay byte for byte as they did."""
BEFORE_GAMES: dict[str, Any] = {"game": None, **BEFORE_SUSPENSION}
"""The library's first cases were recorded before tables chose their game: they name none, so their
committed files stay the recordings from before, which must replay byte for byte as they did. A case
of a game names it (``rules={"game": ...}``)."""
START_TS = STARTED_AT.timestamp()
_CHUNK_GAP = 0.004  # seconds between the pieces of one burst (about 9600 baud)
_REPORT_GAP = 0.01  # seconds between a keyboard's reports (it is polled every 10 ms)


class Script:
    suffix = ".jsonl"

    def __init__(
        self,
        name: str,
        driver: str,
        *,
        rules: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
        table_id: str = "T1",
    ) -> None:
        self.name = name
        self.header = Header(
            table_id=table_id,
            driver=driver,
            started_at=STARTED_AT,
            rules=HouseRules(**(BEFORE_GAMES | (rules or {}))),
            driver_options=options or {},
        )
        self.rng = random.Random(name)
        self.t = 0.0
        self.lines: list[tuple[str, float, Any]] = []

    def wait(self, seconds: float) -> Script:
        self.t += seconds
        return self

    def link(self, up: bool, after: float = 0.5, detail: str = "") -> Script:
        self.t += after
        self.lines.append(("link", self.t, (up, detail)))
        return self

    def cmd(self, name: str, after: float = 1.0, actor: Actor | None = None, **args: Any) -> Script:
        """A command; ``actor``: who took it, as the daemon records it (None: before actions said so)."""
        self.t += after
        self.lines.append(("cmd", self.t, (name, args, actor)))
        return self

    def device(self, data: bytes, after: float = 1.0, pieces: int | None = None) -> Script:
        """``data`` as the reader gets it: cut into ``pieces`` chunks (random 1-3 if not given)."""
        self.t += after
        n = pieces if pieces is not None else self.rng.randint(1, 3)
        n = max(1, min(n, len(data)))
        cuts = sorted(self.rng.sample(range(1, len(data)), n - 1)) if n > 1 else []
        for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True):
            self.lines.append(("rx", self.t, data[a:b]))
            self.t += _CHUNK_GAP
        return self

    def reports(self, data: bytes, after: float = 1.0) -> Script:
        """USB keyboard reports as an interrupt endpoint hands them over: one 8-byte report a read."""
        self.t += after
        for at in range(0, len(data), 8):
            self.lines.append(("rx", self.t, data[at : at + 8]))
            self.t += _REPORT_GAP
        return self

    def write(self, path: Path) -> None:
        with RecordingWriter.create(path, self.header) as w:
            for kind, t, value in self.lines:
                ts = START_TS + t
                if kind == "rx":
                    w.rx(ts, value)
                elif kind == "cmd":
                    w.cmd(ts, *value)
                else:
                    w.link(ts, *value)


# ---------------------------------------------------------------------- device bytes


class FramedShoe:
    """Our framed shoe's bytes, numbered as the firmware numbers them (acks are assumed prompt)."""

    def __init__(self, boot_id: int = 7) -> None:
        self.boot_id = boot_id
        self.seq = 0

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def boot(self) -> bytes:
        """The power-up hello (reliable, numbered)."""
        return encode_event(self.hello(), self._next())

    def hello(self) -> DeviceHello:
        return DeviceHello("SIM-SHOE", "SN0042", "1.2.0", self.boot_id)

    def hello_reply(self) -> bytes:
        """The answer to the host's hello request after a (re)connect (sequence 0)."""
        return encode_event(self.hello(), 0)

    def cards(self, *cards: str | None, burn: bool = False) -> bytes:
        return b"".join(encode_event(DeviceCard(c, burn=burn), self._next()) for c in cards)

    def cut(self) -> bytes:
        return encode_event(DeviceCutCard(), self._next())

    def fault(self, code: str, text: str) -> bytes:
        """An alarm of the shoe's own (fire-and-forget: sequence 0)."""
        return encode_event(DeviceFault(code, text))

    def repeat_last(self, card: str | None) -> bytes:
        """The last card again with its own number: a retransmission whose ack was lost."""
        return encode_event(DeviceCard(card), self.seq)
