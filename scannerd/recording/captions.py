"""A table's events as captions over a video of it: what surveillance reads while it watches.

Pure: events in (as a replay gives them, ``scannerd.recording.replay``),
cues and chapters out, then the WebVTT or SRT text of them. Each cue is at
its event's ``ts``, the table's wall clock, made relative to the video's
own start; the command reads the recordings and writes the files
(``scannerd captions``, docs/recording.md "Captions for video review").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import assert_never

import webvtt

from scannerd.contract.events import EventData, kind_of
from scannerd.core.cards import card_name
from scannerd.core.games import ALL_SIDES
from scannerd.core.judges.deck_check import deck_check_text

HOLD_S = 4.0
"""A cue stays up this long at most; a later cue ends it sooner."""


@dataclass(frozen=True, slots=True)
class Cue:
    """One line over the video: ``start`` and ``end`` in seconds from the video's start."""

    start: float
    end: float
    text: str
    ts: float  # the event's time on the table's clock
    kind: str  # the event's kind: card, round, alert, shoe, dealer, reveal, suspension


@dataclass(frozen=True, slots=True)
class Chapter:
    start: float
    end: float
    title: str


@dataclass(frozen=True, slots=True)
class Window:
    """Which events to caption and where the video's clock is.

    ``since``/``until``: the events kept, on the table's clock (both ends in).
    ``video_start``: the table-clock time the video's first frame shows.
    ``offset``: seconds the recorder's clock is ahead of the table's; added to every time.
    """

    since: float
    until: float
    video_start: float
    offset: float = 0.0

    def at(self, ts: float) -> float:
        return ts - self.video_start + self.offset

    def holds(self, ts: float) -> bool:
        return self.since <= ts <= self.until and self.at(ts) >= 0


def position_name(position: str) -> str:
    """``player1`` -> ``PLAYER 1``, ``dragon`` -> ``DRAGON``."""
    side = position.rstrip("0123456789")
    number = position[len(side) :]
    return f"{side.upper()} {number}" if number else side.upper()


def _card(code: str | None) -> str:
    return card_name(code) if code else "unreadable card"


def _who(event: EventData) -> str:
    by, via = event.get("by"), event.get("via")
    if by is None:
        return ""
    return f" by {by} via {via}" if via else f" by {by}"


def plain(text: str) -> str:
    """One line with nothing a caption file would read as markup or a cue's timing."""
    text = " ".join(text.split())
    return text.replace("&", "and").replace("<", "\u2039").replace(">", "\u203a").replace("-->", "->")


CARD_CODE = re.compile(r"\b([2-9TJQKA])([SHDC])\b")


def _readable(message: str, card: str | None) -> str:
    """An alert's words with its card's code as the dealer reads it (``7H`` -> ``7\u2665``)."""
    if card is None:
        return message
    return re.sub(rf"\b{re.escape(card)}\b", card_name(card), message)


def _readable_codes(message: str) -> str:
    return CARD_CODE.sub(lambda m: card_name(m.group(0)), message)


def caption_text(event: EventData) -> str | None:
    """What a cue says for one event, or None for an event that gets no cue."""
    kind = kind_of(event)
    match kind:
        case "card":
            return _card_text(event)
        case "round":
            return _round_text(event)
        case "alert":
            return _alert_text(event)
        case "shoe":
            if event.get("by") is None:
                return None  # the shoe's count after a round: the cards say it already
            decks = event["decks"]
            return f"new shoe {event['shoe_id']} ({decks} deck{'s' if decks != 1 else ''}){_who(event)}"
        case "dealer":
            if event["dealer_id"] is None:
                return f"dealer signed out{_who(event)}"
            return f"dealer {event['dealer_id']} signed in{_who(event)}"
        case "reveal":
            shown = ", ".join(position_name(p) for p in event["positions"])
            return f"revealed {shown} ({event['reason']}){_who(event)}"
        case "suspension":
            if event["suspended"]:
                return f"TABLE SUSPENDED ({event['cause']}): {_readable_codes(event['message'])}"
            reason = f": {event['reason']}" if event.get("reason") else ""
            return f"table resumed{_who(event)}{reason}"
        case "deck_check":
            return deck_check_text(event)
        case "anchor" | "config" | None:
            return None  # the table's bookkeeping: nothing seen on video
        case _:
            assert_never(kind)


def _card_text(event: EventData) -> str:
    position = event["position"]
    if position == "burn":
        return f"{_card(event['card'])} burned"
    if position == "discard":
        return f"{_card(event['card'])} set aside (discard)"
    if position == "count":
        return f"{_card(event['card'])} counted"
    return f"{_card(event['card'])} to {position_name(position)}"


def _alert_text(event: EventData) -> str | None:
    code = event["code"]
    if event.get("acknowledged"):
        if event.get("by") is None:
            return None  # the table's own all-clear, no one's action
        return f"alert {event['alert_id']} ({code}) acknowledged{_who(event)}"
    if event["severity"] not in ("misdeal", "warning"):
        return None
    return f"{event['severity'].upper()} {code}: {_readable(event['message'], event.get('card'))}"


def _round_text(event: EventData) -> str | None:
    hand = f"hand {event['hand_no']}"
    phase = event["phase"]
    if phase == "complete":
        sides = [s for s in ALL_SIDES if event.get(s) is not None]
        totals = ", ".join(f"{s} {event[s]['total']}" for s in sides)
        winner = event.get("winner")
        result = "TIE" if winner == "tie" else f"{str(winner).upper()} wins"
        return f"{hand}: {result} ({totals})"
    if phase == "void":
        detail = f" - {event['detail']}" if event.get("detail") else ""
        return f"{hand} VOID ({event.get('reason')}){detail}{_who(event)}"
    if event.get("by") is None:
        return None
    return f"{hand}: betting {'opened' if phase == 'betting' else 'closed'}{_who(event)}"


def cues(events: Iterable[EventData], window: Window, hold: float = HOLD_S) -> list[Cue]:
    """One cue per event that says something, in time order; each ends at the next later cue or ``hold``.

    Cues at the same instant (a card and the misdeal it caused) all stay up together.
    """
    timed: list[tuple[int, float, str, str]] = []
    for event in events:
        ts = float(event["ts"])
        if not window.holds(ts) or (text := caption_text(event)) is None:
            continue
        timed.append((_ms(window.at(ts)), ts, plain(text), str(event["kind"])))
    timed.sort(key=lambda item: item[0])  # stable: events of one instant keep their published order
    out: list[Cue] = []
    starts = [start for start, *_ in timed]
    hold_ms = _ms(hold)
    for i, (start, ts, text, kind) in enumerate(timed):
        later = next((s for s in starts[i + 1 :] if s > start), None)
        end = start + hold_ms if later is None else min(later, start + hold_ms)
        out.append(Cue(start / 1000, end / 1000, text, ts, kind))
    return out


def chapters(events: Iterable[EventData], window: Window) -> list[Chapter]:
    """One chapter per shoe and one per round, each from its first event to the next one's (or the end).

    A round's title names its shoe and hand: "shoe S4, hand 37".
    """
    shoes: dict[str, float] = {}
    rounds: dict[str, tuple[float, str | None, int | None]] = {}
    for event in events:
        ts = float(event["ts"])
        if not window.holds(ts):
            continue
        shoe = event.get("shoe_id")
        if shoe is not None:
            shoes.setdefault(shoe, ts)
        round_id = event.get("round_id")
        if round_id is not None:
            first, known_shoe, hand = rounds.get(round_id, (ts, shoe, None))
            if event.get("kind") == "round":
                hand = event["hand_no"]
            rounds[round_id] = (first, known_shoe or shoe, hand)
    last = window.at(window.until)
    out = [
        Chapter(start, end, f"shoe {shoe}")
        for shoe, start, end in _spans([(ts, shoe) for shoe, ts in shoes.items()], window, last)
    ]
    titled = [
        (first, f"shoe {shoe}, hand {hand}" if hand is not None else f"shoe {shoe}, round {round_id}")
        for round_id, (first, shoe, hand) in rounds.items()
    ]
    out += [Chapter(start, end, title) for title, start, end in _spans(titled, window, last)]
    out.sort(key=lambda c: (c.start, -c.end))
    return out


def _spans(
    firsts: Sequence[tuple[float, str]], window: Window, last: float
) -> list[tuple[str, float, float]]:
    ordered = sorted(firsts, key=lambda item: item[0])
    spans = []
    for i, (ts, title) in enumerate(ordered):
        start = _ms(window.at(ts))
        end = _ms(window.at(ordered[i + 1][0])) if i + 1 < len(ordered) else _ms(last)
        spans.append((title, start / 1000, max(end, start + 1) / 1000))
    return spans


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def document(items: Iterable[Cue | Chapter]) -> webvtt.WebVTT:
    """The cues (or chapters) as a WebVTT document, to save as WebVTT or SRT."""
    captions = [
        webvtt.Caption(
            start=str(webvtt.models.Timestamp.from_seconds(item.start)),
            end=str(webvtt.models.Timestamp.from_seconds(item.end)),
            text=item.text if isinstance(item, Cue) else item.title,
        )
        for item in items
    ]
    return webvtt.WebVTT(captions=captions)
