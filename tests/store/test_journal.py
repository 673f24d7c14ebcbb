"""The journal in process: its encoding, the outbox's rows and their trimming, the snapshot schedule.

The fault tests with real processes are in tests/system/test_fault_journal.py; here
the pieces are checked on their own, a real outbox on disk and the real
``Table`` judging a dealt shoe.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import get_args

from drivers.cards import ALL_CARDS
from scannerd.contract.topics import Message, Topics
from scannerd.core.house import HouseRules
from scannerd.core.inputs import (
    Actor,
    Anchored,
    ButtonPressed,
    CardDrawn,
    ClockStepped,
    Command,
    ConfigChanged,
    CutCardSeen,
    DeviceNamed,
    Fault,
    FaultCleared,
    LinkChanged,
    Restarted,
    ShoeSensed,
    Tick,
    ValidatorInput,
)
from scannerd.core.table import SavedState, Table
from scannerd.store.journal import SNAPSHOT_EVERY, Schedule, decode, encode, restore
from scannerd.store.outbox import Outbox, digest

RULES = HouseRules(round_control="auto", burn="none", cut_card_remaining=14)
TOPICS = Topics("casino", "T1")
T0 = 1_700_000_000.0


def make(saved: SavedState | None) -> Table:
    return Table("T1", RULES, driver="beetek", saved=saved)


def test_every_kind_of_input_comes_back_as_it_went_in() -> None:
    inputs = [
        CardDrawn(T0 + 0.1, "9H"),
        CardDrawn(T0 + 0.2, None, device_burn=True),
        CutCardSeen(T0 + 1),
        LinkChanged(T0 + 2, False, "unplugged"),
        Tick(T0 + 3),
        Command(T0 + 4, "new_shoe", {"shoe_id": "S-1", "burn": 3}),
        Command(T0 + 4.5, "dealer_sign_in", {"dealer_id": "D-1"}, Actor("display", "D-1", "dealer", "wrong")),
        Fault(T0 + 5, "STATE_LOST", "Lost: é"),
        Restarted(T0 + 6, "stopped", cards_repeat=True),
        ClockStepped(T0 + 7, -3.25),
        Anchored(T0 + 8, "T1-20231114T221320Z.jsonl.gz", 12, "ab" * 32),
        FaultCleared(T0 + 9, "CLOCK_UNSYNCED"),
        ConfigChanged(T0 + 10, "cd" * 32, "ab" * 32, ["mqtt.host", "mqtt.password"]),
        ShoeSensed(T0 + 11, lid_open=True, jam=False),
        DeviceNamed(T0 + 12, "FS-8", "SN-0042"),
        ButtonPressed(T0 + 13, "banker"),
    ]
    assert {type(i) for i in inputs} == set(get_args(ValidatorInput))  # a new kind must be added here
    assert decode(encode(inputs, {"boot": 7, "ack": 12})) == (inputs, {"boot": 7, "ack": 12})


def test_journal_rows_wait_for_the_next_snapshot_which_trims_them(tmp_path: Path) -> None:
    path = tmp_path / "o.sqlite3"
    m = [Message(seq, "casino/tables/T1/card", b'{"seq":%d}' % seq) for seq in range(1, 5)]
    with Outbox(path) as box:
        box.put(m[:1], {"snap": 1})
        box.put(m[1:2], None, "first")
        box.put(m[2:3], None, "second")
    with Outbox(path) as box:
        assert box.state() == {"snap": 1}
        assert [(r.entry, r.digest) for r in box.journal()] == [
            ("first", digest(m[1:2])),
            ("second", digest(m[2:3])),
        ]
        assert box.last_seq == 3  # from the journal: the snapshot's batch ended at 1
        box.put(m[3:], {"snap": 2})
        assert box.journal() == [] and box.state() == {"snap": 2}


def test_a_held_batch_keeps_its_journal_row_in_order(tmp_path: Path) -> None:
    m = [Message(seq, "t/T1/card", b"x" * 1000) for seq in range(1, 4)]
    with Outbox(tmp_path / "o.sqlite3", max_bytes=1500) as box:
        box.put(m[:1], {"snap": 1})
        assert not box.put(m[1:2], None, "held")  # over the budget: in memory, with its row
        assert box.journal() == []
        box.remove([r.id for r in box.pending()])
        assert [r.entry for r in box.journal()] == ["held"]


def test_a_clean_close_stores_the_last_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "o.sqlite3"
    box = Outbox(path)
    box.put([Message(1, "t", b"")], None, "row")
    box.close({"snap": 9})
    box.close({"snap": 10})  # a second stop changes nothing
    with Outbox(path) as again:
        assert again.journal() == [] and again.state() == {"snap": 9}


def dealt(rng: random.Random, n: int) -> list[CardDrawn]:
    shoe = rng.sample([c for c in ALL_CARDS for _ in range(8)], n)
    return [CardDrawn(T0 + 10 + i * 2.5, card) for i, card in enumerate(shoe)]


def test_a_snapshot_and_its_journal_restore_the_state_judged_without_a_break(tmp_path: Path) -> None:
    """A shoe through a table storing as the daemon does; restored at any point it equals the live state."""
    live = make(None)
    schedule = Schedule()
    with Outbox(tmp_path / "o.sqlite3") as box:
        inputs: list[ValidatorInput] = [Command(T0, "new_shoe", {"shoe_id": "S1"})]
        inputs += dealt(random.Random(5), 300)
        snapshots = 0
        for n, inp in enumerate(inputs):
            messages = TOPICS.messages(live.judge(inp).events)
            device = {"ack": n}
            if schedule.snapshot_now(1, live.validator.shoe):
                snapshots += 1
                box.put(messages, live.saved_state(device).to_dict())
            else:
                box.put(messages, None, encode([inp], device))
            if n % 37 == 0 or n == len(inputs) - 1:
                got = restore(box, make, TOPICS)
                assert got.broken is None and got.replayed == len(box.journal())
                assert got.saved == live.saved_state(device)
        assert snapshots == 2  # the first store (the new shoe) and SNAPSHOT_EVERY inputs later
        assert 0 < len(box.journal()) < SNAPSHOT_EVERY


def test_a_row_whose_inputs_make_other_events_stops_the_replay_before_it(tmp_path: Path) -> None:
    live = make(None)
    with Outbox(tmp_path / "o.sqlite3") as box:
        box.put(TOPICS.messages(live.judge(Command(T0, "new_shoe", {})).events), live.saved_state().to_dict())
        cards = dealt(random.Random(1), 6)
        states = []
        for card in cards:
            states.append(live.saved_state())
            box.put(TOPICS.messages(live.judge(card).events), None, encode([card], None))
        box._db.execute(  # the fourth card's row, changed on disk
            "UPDATE journal SET entry = ? WHERE id = (SELECT id FROM journal ORDER BY id LIMIT 1 OFFSET 3)",
            (encode([CardDrawn(cards[3].ts, "AS" if cards[3].card != "AS" else "KS")], None),),
        )
        got = restore(box, make, TOPICS)
    assert got.replayed == 3 and got.rows_left == 3 and "journal row" in (got.broken or "")
    assert got.saved == states[3]  # the state before the changed row, not after part of it


def test_the_schedule_snapshots_at_a_start_a_new_shoe_and_every_n_inputs() -> None:
    schedule = Schedule()
    shoe, other = object(), object()
    assert schedule.snapshot_now(1, shoe)  # the first store after a start
    assert not any(schedule.snapshot_now(1, shoe) for _ in range(SNAPSHOT_EVERY - 1))
    assert schedule.snapshot_now(1, shoe)
    assert schedule.snapshot_now(1, other)  # a new shoe
    assert not schedule.snapshot_now(1, other)
