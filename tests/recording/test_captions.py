"""``scannerd captions``: the captions, read back with the WebVTT library, say what the replay says, when."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import webvtt

from scannerd.cli import main
from scannerd.contract.events import EventData
from scannerd.core.cards import card_name
from scannerd.recording.captions import Window, caption_text, cues, document, position_name
from scannerd.recording.replay import replay

SESSION = Path(__file__).resolve().parent.parent / "sessions" / "staff-and-suspension.jsonl"
FROM, TO = "2024-05-01T12:00:05Z", "2024-05-01T12:00:17Z"  # cuts off the first events and the last
START, OFFSET = "2024-05-01T12:00:03Z", 0.25


def ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def events() -> list[EventData]:
    """The recording's own events, as the table published them, within --from/--to."""
    return [
        m.source
        for m in replay(SESSION)
        if isinstance(m.source, EventData) and ts(FROM) <= m.source["ts"] <= ts(TO)
    ]


def at(event: EventData) -> int:
    """Where the event belongs in the video, in milliseconds."""
    return round((event["ts"] - ts(START) + OFFSET) * 1000)


def ms(caption: Any) -> int:
    return int(caption.start_time.in_milliseconds())


def captions(capsys: pytest.CaptureFixture[str], out: Path, *more: str) -> int:
    argv = ["captions", str(SESSION), "--from", FROM, "--to", TO, "--start", START, "--offset", str(OFFSET)]
    status = main([*argv, "--out", str(out), *more])
    capsys.readouterr()
    return status


@pytest.fixture
def vtt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "review.vtt"
    assert captions(capsys, out) == 0
    return out


def test_every_card_is_a_cue_at_its_time_in_order(vtt: Path) -> None:
    cards = [e for e in events() if e["kind"] == "card"]
    assert len(cards) >= 3, "the window holds cards to check"

    def said(e: EventData) -> str:
        name = card_name(e["card"])
        return (
            f"{name} set aside (discard)"
            if e["position"] == "discard"
            else f"{name} to {position_name(e['position'])}"
        )

    read = [(ms(c), c.text) for c in webvtt.read(str(vtt))]
    card_cues = [(t, text) for t, text in read if text.endswith(("(discard)", "burned")) or " to " in text]
    assert card_cues == [(at(e), said(e)) for e in cards]
    assert "A\u2660 to PLAYER 1" in [text for _, text in card_cues]
    starts = [ms(c) for c in webvtt.read(str(vtt))]
    assert starts == sorted(starts)


def test_events_outside_the_window_are_left_out(vtt: Path) -> None:
    texts = " | ".join(c.text for c in webvtt.read(str(vtt)))
    assert "new shoe S1" not in texts  # at 12:00:01.5, before --from
    assert "PIN_LOCKOUT" not in texts  # at 12:00:04.5
    assert "OPERATOR_VOID" not in texts  # at 12:00:18.5, after --to
    assert "7H" not in texts and "AS" not in texts.split(), "card codes are shown as cards"


def test_alerts_and_operator_actions_say_who_at_their_time(vtt: Path) -> None:
    cues = webvtt.read(str(vtt))
    by_time: dict[int, list[str]] = {}
    for cue in cues:
        by_time.setdefault(ms(cue), []).append(cue.text)
    alerts = [e for e in events() if e["kind"] == "alert" and not e["acknowledged"]]
    assert {a["code"] for a in alerts} == {"EXTRA_CARD", "FOREIGN_CARD", "CARD_WHILE_SUSPENDED"}
    for alert in alerts:
        assert any(text.startswith(f"MISDEAL {alert['code']}:") for text in by_time[at(alert)]), alert
    actions = [e for e in events() if e.get("by") is not None]
    assert {(a["kind"], a["by"]) for a in actions} == {
        ("alert", "D-2"),
        ("suspension", "S-1"),
        ("dealer", "D-2"),
    }
    for action in actions:
        assert any(f"by {action['by']} via {action['via']}" in text for text in by_time[at(action)]), action
    texts = [c.text for c in cues]
    assert "alert 5 (EXTRA_CARD) acknowledged by D-2 via display" in texts
    assert "table resumed by S-1 via gameserver: foreign card removed" in texts


def test_a_cue_lasts_until_the_next_or_a_few_seconds(vtt: Path, tmp_path: Path) -> None:
    cues = webvtt.read(str(vtt))
    later = [min((ms(n) for n in cues if ms(n) > ms(c)), default=None) for c in cues]
    for cue, following in zip(cues, later, strict=True):
        end = int(cue.end_time.in_milliseconds())
        assert end == min(following or 10**12, ms(cue) + 4000), cue


def test_operator_void_says_who_and_srt_holds_the_same_cues(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], vtt: Path
) -> None:
    out = tmp_path / "review.srt"
    status = main(
        [
            "captions",
            str(SESSION),
            "--from",
            FROM,
            "--to",
            "2024-05-01T12:00:30Z",
            "--start",
            START,
            "--offset",
            str(OFFSET),
            "--out",
            str(out),
        ]
    )
    capsys.readouterr()
    assert status == 0
    srt = webvtt.from_srt(str(out))
    void = [c.text for c in srt if "OPERATOR_VOID" in c.text]
    assert void == ["hand 2 VOID (OPERATOR_VOID) - dispute at the table by pit via pit"]
    assert [(ms(c), c.text) for c in srt][: len(webvtt.read(str(vtt)))] == [
        (ms(c), c.text) for c in webvtt.read(str(vtt))
    ]


def test_chapters_one_per_shoe_and_round(vtt: Path) -> None:
    chapters = webvtt.read(str(vtt.with_name("review.chapters.vtt")))
    assert [c.text for c in chapters] == ["shoe S1", "shoe S1, hand 1"]  # hand 2 opens after --to
    betting = next(e for e in events() if e["kind"] == "round" and e["hand_no"] == 1)
    assert ms(chapters[1]) == at(betting)


@pytest.mark.parametrize("session", sorted(SESSION.parent.glob("*.jsonl")), ids=lambda p: p.stem)
def test_every_golden_session_gives_a_cue_per_card_in_a_file_that_reads_back(session: Path) -> None:
    published = [m.source for m in replay(session) if isinstance(m.source, EventData)]
    window = Window(published[0]["ts"], published[-1]["ts"], video_start=published[0]["ts"])
    made = cues(published, window)
    cards = [e for e in published if e["kind"] == "card"]
    assert [c.text for c in made if c.kind == "card"] == [caption_text(e) for e in cards]
    assert all(c.end > c.start for c in made)
    read = webvtt.from_string(document(made).content)
    assert [c.text for c in read] == [c.text for c in made]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["/no/such.jsonl", "--from", FROM, "--to", TO], "No such file"),
        ([str(Path(__file__)), "--from", FROM, "--to", TO], "not JSON"),
        ([str(SESSION), "--from", TO, "--to", FROM], "is not after"),
        ([str(SESSION), "--from", "yesterday", "--to", TO], "not an RFC 3339 time"),
        ([str(SESSION), "--from", "2024-05-01T12:00:05", "--to", TO], "needs a time zone"),
        (
            [str(SESSION), "--from", "2025-01-01T00:00:00Z", "--to", "2025-01-02T00:00:00Z"],
            "nothing to caption",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["captions", *argv, "--out", str(tmp_path / "x.vtt")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and says in err and "Traceback" not in err, err
    assert not (tmp_path / "x.vtt").exists()
