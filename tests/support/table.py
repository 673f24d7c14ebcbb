"""A scripted table for validator tests: feeds inputs at rising timestamps, keeps every event."""

from __future__ import annotations

from typing import Any

from scannerd.contract.events import EventData
from scannerd.core.house import HouseRules
from scannerd.core.inputs import CardDrawn, ClockStepped, Command, CutCardSeen, LinkChanged, Restarted, Tick
from scannerd.core.validator import Validator


class Table:
    """``rules`` as the house sets them; the table never suspends unless they say so (``suspend_on``):
    suspension has tests of its own, the others judge the deal alone."""

    def __init__(self, **rules: Any) -> None:
        self.v = Validator("T1", HouseRules(**{"suspend_on": ()} | rules))
        self.ts = 1_700_000_000.0
        self.events: list[EventData] = []

    def _feed(self, inp) -> list[EventData]:
        out = self.v.handle(inp)
        self.events.extend(out)
        return out

    def step(self, seconds: float = 1.0) -> float:
        self.ts += seconds
        return self.ts

    def card(self, card: str | None, *, burn: bool = False, after: float = 1.0) -> list[EventData]:
        return self._feed(CardDrawn(self.step(after), card, burn))

    def cards(self, *codes: str | None) -> list[EventData]:
        return [e for c in codes for e in self.card(c)]

    def cmd(self, name: str, **args: Any) -> list[EventData]:
        return self._feed(Command(self.step(), name, args))  # type: ignore[arg-type]

    def cut(self) -> list[EventData]:
        return self._feed(CutCardSeen(self.step()))

    def link(self, up: bool) -> list[EventData]:
        return self._feed(LinkChanged(self.step(), up))

    def clock_step(self, seconds: float) -> list[EventData]:
        """The wall clock jumps: later inputs carry times ``seconds`` off, as the daemon stamps them."""
        self.ts += seconds
        return self._feed(ClockStepped(self.ts, seconds))

    def restarted(self, cards_repeat: bool = False) -> list[EventData]:
        return self._feed(Restarted(self.step(), "stopped", cards_repeat))

    def tick(self, after: float) -> list[EventData]:
        return self._feed(Tick(self.step(after)))

    def round(self, *codes: str, round_id: str | None = None) -> list[EventData]:
        """Open betting, close it and deal ``codes``."""
        out = self.cmd("betting_open", **({"round_id": round_id} if round_id else {}))
        out += self.cmd("betting_close")
        return out + self.cards(*codes)

    # ---- views
    def alerts(self, events: list[EventData] | None = None) -> list[str]:
        return [e.code for e in (self.events if events is None else events) if e.kind == "alert"]

    def positions(self, events: list[EventData]) -> list[str]:
        return [e.position for e in events if e.kind == "card"]

    def rounds(self, events: list[EventData] | None = None) -> list[Any]:
        return [e for e in (self.events if events is None else events) if e.kind == "round"]

    def last_round(self) -> Any:
        return self.rounds()[-1]
