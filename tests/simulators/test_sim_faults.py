import random

import pytest

from simulators.faults import FaultRates, Faults, FaultyPort

FRAME = b" [Game]<Card:4S> "


def plan(seed=1, **rates):
    return Faults(FaultRates(**rates), random.Random(seed)).plan(FRAME)


def test_no_faults_sends_the_frame_whole():
    assert [(w.delay, w.data) for w in plan()] == [(0.0, FRAME)]


def test_duplicate_sends_the_frame_twice_at_once():
    assert [w.data for w in plan(duplicate=1.0)] == [FRAME, FRAME]


def test_retransmission_repeats_the_frame_later():
    writes = plan(retransmit=1.0)
    assert [w.data for w in writes] == [FRAME, FRAME]
    assert writes[1].delay > 0


def test_split_cuts_the_frame_into_pieces_with_gaps():
    for seed in range(20):
        writes = plan(seed, split=1.0)
        assert b"".join(w.data for w in writes) == FRAME
        assert 2 <= len(writes) <= 4
        assert all(w.delay > 0 for w in writes[1:])


def test_slow_trickles_byte_by_byte():
    writes = plan(slow=1.0)
    assert [w.data for w in writes] == [bytes([b]) for b in FRAME]


def test_junk_comes_before_the_frame_from_the_protocols_generator():
    faults = Faults(FaultRates(junk=1.0), random.Random(1), junk=lambda rng: b"~~")
    assert [w.data for w in faults.plan(FRAME)] == [b"~~", FRAME]
    assert faults.counts == {"junk": 1}


def test_stall_holds_the_frame_back():
    writes = plan(stall=1.0, stall_seconds=2.5, junk=1.0)
    assert writes[0].delay == 2.5
    assert writes[-1].data == FRAME


def test_the_seed_reproduces_the_faults():
    rates = {"junk": 0.3, "split": 0.3, "duplicate": 0.2, "slow": 0.1}
    frames = [FRAME] * 50
    a = [Faults(FaultRates(**rates), random.Random(5)).plan(f) for f in frames]
    b = [Faults(FaultRates(**rates), random.Random(5)).plan(f) for f in frames]
    assert a == b


def test_rates_outside_zero_to_one_are_refused():
    with pytest.raises(ValueError):
        FaultRates(junk=1.5)
    with pytest.raises(ValueError):
        FaultRates(stall_seconds=-1)


class Recorder:
    def __init__(self):
        self.writes = []
        self.path = "/dev/pts/99"

    def write(self, data):
        self.writes.append(data)


def test_faulty_port_writes_the_plan_and_passes_the_rest_through():
    port = Recorder()
    slept = []
    faulty = FaultyPort(port, Faults(FaultRates(split=1.0), random.Random(2)), sleep=slept.append)
    faulty.write(FRAME)
    assert b"".join(port.writes) == FRAME
    assert len(port.writes) == len(slept) + 1
    assert faulty.path == "/dev/pts/99"
