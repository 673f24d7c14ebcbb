"""The audit's facts of a round, held to the golden sessions' published events.

Each regression session (tests/sessions) keeps, beside its recording, the
events a replay must publish (``.chk``, checked by the sessions' own test):
the truth here.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from scannerd.audit.facts import collect

SESSIONS = Path(__file__).parents[1] / "sessions"


def published(session: Path) -> list[dict[str, Any]]:
    """The events a session's replay must publish, as its golden file holds them."""
    payloads = (json.loads(line)["payload"] for line in session.with_suffix(".chk").read_text().splitlines())
    return [p for p in payloads if "kind" in p]


def of_rounds(events: list[dict[str, Any]]) -> dict[tuple[str | None, str], list[dict[str, Any]]]:
    """Each round's events: all that name it, but an acknowledgement (someone's action, whenever taken)."""
    rounds: dict[tuple[str | None, str], list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        if e.get("round_id") is not None and not e.get("acknowledged"):
            rounds[(e.get("shoe_id"), e["round_id"])].append(e)
    return rounds


@pytest.mark.parametrize("name", sorted(path.stem for path in SESSIONS.glob("*.jsonl")))
def test_a_round_runs_from_its_first_event_to_its_last_of_any_kind_and_has_its_hand_number(name):
    """Its time counts to its last round event; on video it goes on to a squeeze's reveal, a fault after it.

    Sessions where it does: dragon-tiger-squeeze, squeeze-reveals (reveals) and junk-bytes-beetek (a fault).
    """
    session = SESSIONS / f"{name}.jsonl"
    rounds = of_rounds(published(session))
    for rnd in collect(session).rounds:
        its = rounds[(rnd.shoe_id, rnd.round_id)]
        times = [e["ts"] for e in its]
        ended = max(e["ts"] for e in its if e["kind"] == "round")
        assert (rnd.opened, rnd.ended, rnd.last) == (min(times), ended, max(times)), rnd.round_id
        assert rnd.hand_no == next(e["hand_no"] for e in its if e["kind"] == "round")
