"""The audit's hands to review on video, held to the golden sessions' published events.

Each regression session (tests/sessions) keeps, beside its recording, the
events a replay must publish (``.chk``, checked by the sessions' own test):
the truth here. A session's audit must list every round with a misdeal
alert and every void round once, with a range from that round's first event
to its last (a card, a squeeze's reveal, an alert as raised; not a later
acknowledgement) padded by ``review.PAD_S``, every misdeal of no round at its
alert, and no other hand. The audit is built in this process from the
collected facts: the staff week (test_audit_staff.py) runs the command.
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from scannerd.audit import report_html, review
from scannerd.audit.aggregate import build
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


def raised_misdeals(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Misdeal alerts as first published (an acknowledgement republishes one)."""
    return [
        e for e in events if e["kind"] == "alert" and e["severity"] == "misdeal" and not e["acknowledged"]
    ]


def instant(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


WITH_TROUBLE = sorted(
    path.stem
    for path in SESSIONS.glob("*.jsonl")
    if any(e["kind"] == "round" and e["phase"] == "void" for e in published(path))
    or raised_misdeals(published(path))
)


def test_the_sessions_hold_every_kind_of_hand_to_review():
    """Misdeals in rounds and of none, voids by the table and by an operator: else the test below is thin."""
    events = [e for name in WITH_TROUBLE for e in published(SESSIONS / f"{name}.jsonl")]
    misdeals = raised_misdeals(events)
    assert {e["round_id"] is None for e in misdeals} == {True, False}
    voids = {e["reason"] for e in events if e["kind"] == "round" and e["phase"] == "void"}
    assert "OPERATOR_VOID" in voids and len(voids) >= 4
    assert len(WITH_TROUBLE) >= 20


@pytest.mark.parametrize("name", WITH_TROUBLE)
def test_every_misdeal_and_void_is_a_hand_to_review_once_with_a_range_holding_its_events(name):
    session = SESSIONS / f"{name}.jsonl"
    events = published(session)
    report = build([collect(session)])
    hands = report["review"]["hands"]
    rounds = of_rounds(events)
    misdeals = raised_misdeals(events)
    troubled = {(e.get("shoe_id"), e["round_id"]) for e in misdeals if e["round_id"] is not None} | {
        (e.get("shoe_id"), e["round_id"]) for e in events if e["kind"] == "round" and e["phase"] == "void"
    }
    in_rounds = [h for h in hands if h["round_id"] is not None]
    assert sorted((h["shoe_id"], h["round_id"]) for h in in_rounds) == sorted(troubled)
    for h in in_rounds:
        key = (h["shoe_id"], h["round_id"])
        its = rounds[key]
        times = [e["ts"] for e in its]
        start, end = instant(h["from"]), instant(h["to"])
        # Every event of the round inside, padded either side, and no more than that (whole seconds).
        assert start <= min(times) - review.PAD_S < start + 1, key
        assert end - 1 < max(times) + review.PAD_S <= end, key
        round_events = [e for e in its if e["kind"] == "round"]
        assert h["hand_no"] == round_events[0]["hand_no"]
        assert h["dealer_id"] == round_events[0].get("dealer_id")
        assert sorted(h["misdeals"]) == sorted(
            e["code"] for e in misdeals if (e.get("shoe_id"), e["round_id"]) == key
        )
        void = next((e for e in round_events if e["phase"] == "void"), None)
        assert (h["void"], h["void_by"]) == ((void["reason"], void.get("by")) if void else (None, None))
    alone = [h for h in hands if h["round_id"] is None]
    expected = [e for e in misdeals if e["round_id"] is None]
    assert [h["misdeals"] for h in alone] == [[e["code"]] for e in expected]
    for h, e in zip(alone, expected, strict=True):
        start, end = instant(h["from"]), instant(h["to"])
        assert start <= e["ts"] - review.PAD_S < start + 1 and end - 1 < e["ts"] + review.PAD_S <= end
        assert h["hand_no"] is None and h["void"] is None
    assert [instant(h["from"]) for h in hands] == sorted(instant(h["from"]) for h in hands)
    assert report["review"]["zone"] == "UTC"
    for h in hands:
        assert h["line"].startswith(f"T1  {h['from'][:10]}  {h['from'][11:19]} - {h['to'][11:19]}")


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


def test_the_line_to_type_is_in_the_zone_given_with_its_summer_time_and_its_days():
    """Berlin is UTC+2 in summer, UTC+1 in winter; a range past local midnight names its end's date."""
    berlin = ZoneInfo("Europe/Berlin")
    summer = datetime(2026, 7, 3, 18, 53, 5, tzinfo=UTC).timestamp()
    winter = datetime(2026, 12, 3, 19, 53, 5, tzinfo=UTC).timestamp()
    assert review.line("T1", summer, summer + 65, berlin) == "T1  2026-07-03  20:53:05 - 20:54:10"
    assert review.line("T1", winter, winter + 65, berlin) == "T1  2026-12-03  20:53:05 - 20:54:10"
    midnight = datetime(2026, 12, 3, 22, 59, 50, tzinfo=UTC).timestamp()
    assert (
        review.line("T1", midnight, midnight + 30, berlin)
        == "T1  2026-12-03  23:59:50 - 2026-12-04  00:00:20"
    )
    assert review.line("T1", winter, winter + 65, UTC) == "T1  2026-12-03  19:53:05 - 19:54:10"


def test_the_page_escapes_what_the_hands_to_review_say():
    """Ids and reasons come from the table's inputs: on the page they are text, never markup."""
    report = build([collect(SESSIONS / "operator-commands.jsonl")])
    hand = report["review"]["hands"][0]
    hand |= {"dealer_id": "<b>D&1</b>", "void": "OPERATOR_VOID", "void_by": '<script>x("1")</script>'}
    hand["line"] = "T<1>  2024-05-01  12:00:00 - 12:00:10"
    page = report_html.render(report)
    assert "<b>D&1</b>" not in page and "&lt;b&gt;D&amp;1&lt;/b&gt;" in page
    assert "<script>" not in page and "&lt;script&gt;x(&quot;1&quot;)&lt;/script&gt;" in page
    assert "T&lt;1&gt;  2024-05-01" in page
    assert page.index('id="review-table"') < page.index('id="figures"')
