"""Scripted table sessions in a small plain-text format (docs/simulators.md).

A scenario is a few settings followed by steps, one per line::

    # three good rounds, then an extra card, then the cable out for 2 s
    seed 42
    house decks=8 last_hand=finish
    rounds 3
    round extra-card
    unplug 2

The same file and seed give the same cards, mistakes and faults every time,
so a bug report can carry its scenario and a test can load it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Final, assert_never

from pydantic import ValidationError

from scannerd.core.house import HouseRules
from simulators.actions import Pause, Step
from simulators.dealer import MISTAKES, RANDOM_MISTAKES, ROUND_MISTAKES, Dealer
from simulators.faults import FaultRates
from simulators.shoe import CutPlacement
from simulators.shuffles import FIRST_SHOES
from simulators.shuffles import KINDS as SHUFFLES


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message names the line."""


# The steps a scenario's lines name, their arguments checked and converted when the file is read.


@dataclass(frozen=True, slots=True)
class ShoeStep:
    """``shoe [skip-burn]``."""

    skip_burn: bool = False


@dataclass(frozen=True, slots=True)
class RoundsStep:
    """``rounds N``."""

    count: int


@dataclass(frozen=True, slots=True)
class RoundStep:
    """``round [MISTAKE]``."""

    mistake: str | None = None


@dataclass(frozen=True, slots=True)
class PlayStep:
    """``play N``."""

    rounds: int


@dataclass(frozen=True, slots=True)
class ShoesStep:
    """``shoes N``."""

    count: int


@dataclass(frozen=True, slots=True)
class UnplugStep:
    """``unplug S``."""

    seconds: float


@dataclass(frozen=True, slots=True)
class PauseStep:
    """``pause S``."""

    seconds: float


Instruction = ShoeStep | RoundsStep | RoundStep | PlayStep | ShoesStep | UnplugStep | PauseStep


UNSUPERVISED: dict[str, Any] = {"suspend_on": ()}
"""The simulated dealer calls no supervisor: its table suspends on nothing unless the scenario names
the alerts that do (``house suspend_on=FOREIGN_CARD,...``)."""


@dataclass(frozen=True)
class Scenario:
    """Settings plus steps; ``dealer`` and ``steps`` turn it into a dealer's action stream."""

    seed: int = 0
    house: HouseRules = field(default_factory=lambda: HouseRules(**UNSUPERVISED))
    cut: CutPlacement = 14
    pace: float = 1.0
    error_rate: float = 0.0
    mistakes: tuple[str, ...] = RANDOM_MISTAKES
    unplug_seconds: float = 2.0
    shuffle: str = "random"  # how each shoe after the first is made (simulators/shuffles.py)
    first_shoe: str = "random"  # how the first is made from new decks
    faults: FaultRates = field(default_factory=FaultRates)
    instructions: tuple[Instruction, ...] = ()

    def rules_for(self, device_reports_cut: bool) -> HouseRules:
        """The house rules the daemon must run with for this scenario on a given device.

        A device that cannot see the cut card needs the virtual one, placed
        where the simulated shoe puts the real one (a fixed placement only).
        """
        if device_reports_cut or self.house.cut_card_remaining is not None or not isinstance(self.cut, int):
            return self.house
        return self.house.model_copy(update={"cut_card_remaining": self.cut})

    def dealer(self, device_reports_cut: bool = True, pace: float | None = None) -> Dealer:
        return Dealer(
            self.rules_for(device_reports_cut),
            random.Random(self.seed),
            pace=self.pace if pace is None else pace,
            cut=self.cut,
            device_reports_cut=device_reports_cut,
            error_rate=self.error_rate,
            mistakes=self.mistakes,
            unplug_seconds=self.unplug_seconds,
            shuffle=self.shuffle,
            first_shoe=self.first_shoe,
        )

    def steps(self, dealer: Dealer) -> Iterator[Step]:
        """The scripted session; a scenario with no steps deals forever at its error rate."""
        if not self.instructions:
            yield from dealer.play()
        for ins in self.instructions:
            yield from _perform(dealer, ins)


def _perform(dealer: Dealer, ins: Instruction) -> Iterator[Step]:
    match ins:
        case ShoeStep(skip_burn):
            yield from dealer.start_shoe(skip_burn=skip_burn)
        case RoundsStep(count):
            for _ in range(count):
                yield from dealer.deal_round()
        case RoundStep(mistake):
            yield from dealer.deal_round(mistake)
        case PlayStep(rounds):
            yield from dealer.play(rounds=rounds)
        case ShoesStep(count):
            yield from dealer.play(shoes=count)
        case UnplugStep(seconds):
            yield from dealer.unplug(seconds)
        case PauseStep(seconds):
            yield Step(0.0, Pause(seconds))
        case _:
            assert_never(ins)


# verb -> (allowed argument counts, what the argument must be, the step made of it when checked)
_STEPS: Final[dict[str, tuple[tuple[int, ...], str, Callable[[Any], Instruction]]]] = {
    "shoe": ((0, 1), "skip-burn", lambda arg: ShoeStep(skip_burn=arg is not None)),
    "rounds": ((1,), "count", RoundsStep),
    "round": ((0, 1), "mistake", RoundStep),
    "play": ((1,), "count", PlayStep),
    "shoes": ((1,), "count", ShoesStep),
    "unplug": ((1,), "seconds", UnplugStep),
    "pause": ((1,), "seconds", PauseStep),
}
_SETTINGS: Final = (
    "seed",
    "house",
    "cut",
    "pace",
    "error-rate",
    "mistakes",
    "unplug-seconds",
    "shuffle",
    "first-shoe",
    "faults",
)


def _step(verb: str, args: tuple[str, ...], line: int) -> Instruction:
    """The step a line names; its argument is checked and converted here, once."""
    counts, kind, make = _STEPS[verb]
    if len(args) not in counts:
        raise ScenarioError(f"line {line}: '{verb}' takes {' or '.join(map(str, counts))} argument(s)")
    if not args:
        return make(None)
    arg = args[0]
    if kind == "skip-burn" and arg != "skip-burn":
        raise ScenarioError(f"line {line}: 'shoe' takes only 'skip-burn', not {arg!r}")
    if kind == "mistake" and arg not in ROUND_MISTAKES:
        raise ScenarioError(f"line {line}: unknown mistake {arg!r}; one of {', '.join(ROUND_MISTAKES)}")
    if kind == "count":
        if not (arg.isdigit() and int(arg) > 0):
            raise ScenarioError(f"line {line}: '{verb}' needs a positive whole number, not {arg!r}")
        return make(int(arg))
    if kind == "seconds":
        return make(_number(arg, line))
    return make(arg)


def _number(text: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ScenarioError(f"line {line}: {text!r} is not a number") from None
    if not math.isfinite(value):  # nan would never wait, inf would wait forever
        raise ScenarioError(f"line {line}: {text!r} is not a finite number")
    if value < 0:
        raise ScenarioError(f"line {line}: {text!r} must not be negative")
    return value


def _pairs(args: tuple[str, ...], line: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for arg in args:
        key, eq, value = arg.partition("=")
        if not eq or not key or not value:
            raise ScenarioError(f"line {line}: expected key=value, not {arg!r}")
        out[key.replace("-", "_")] = value
    return out


def _cut(text: str, line: int) -> CutPlacement:
    if text == "none":
        return None
    low, dash, high = text.partition("-")
    if low.isdigit() and (not dash or high.isdigit()):
        return int(low) if not dash else (int(low), int(high))
    raise ScenarioError(f"line {line}: cut is N, A-B or none, not {text!r}")


def _setting(scenario: Scenario, verb: str, args: tuple[str, ...], line: int) -> Scenario:
    if not args:
        raise ScenarioError(f"line {line}: '{verb}' needs a value")
    try:
        if verb == "seed":
            return replace(scenario, seed=int(args[0]))
        if verb == "house":
            values: dict[str, Any] = {"suspend_on": ""} | _pairs(args, line)
            if values.get("cut_card_remaining") == "none":
                values["cut_card_remaining"] = None
            values["suspend_on"] = [code for code in values["suspend_on"].split(",") if code]
            return replace(scenario, house=HouseRules.model_validate(values, strict=False))  # text, as typed
        if verb == "cut":
            return replace(scenario, cut=_cut(args[0], line))
        if verb == "pace":
            return replace(scenario, pace=_number(args[0], line))
        if verb == "error-rate":
            rate = _number(args[0], line)
            if rate > 1:
                raise ValueError("a chance is from 0 to 1")
            return replace(scenario, error_rate=rate)
        if verb == "unplug-seconds":
            return replace(scenario, unplug_seconds=_number(args[0], line))
        if verb == "shuffle":
            if args[0] not in SHUFFLES:
                raise ScenarioError(f"line {line}: unknown shuffle {args[0]!r}; one of {', '.join(SHUFFLES)}")
            return replace(scenario, shuffle=args[0])
        if verb == "first-shoe":
            if args[0] not in FIRST_SHOES:
                raise ScenarioError(
                    f"line {line}: unknown first shoe {args[0]!r}; one of {', '.join(FIRST_SHOES)}"
                )
            return replace(scenario, first_shoe=args[0])
        if verb == "mistakes":
            unknown = set(args) - set(MISTAKES)
            if unknown:
                raise ScenarioError(f"line {line}: unknown mistakes {sorted(unknown)}")
            return replace(scenario, mistakes=args)
        names = {f.name for f in fields(FaultRates)}
        rates = {k: _number(v, line) for k, v in _pairs(args, line).items()}
        if set(rates) - names:
            raise ScenarioError(f"line {line}: unknown faults {sorted(set(rates) - names)}")
        return replace(scenario, faults=FaultRates(**rates))
    except (ValidationError, ValueError) as exc:
        if isinstance(exc, ScenarioError):
            raise
        raise ScenarioError(f"line {line}: bad '{verb}': {exc}") from None


def parse(text: str) -> Scenario:
    """A scenario from its text; raises ScenarioError naming the first bad line."""
    scenario = Scenario()
    steps: list[Instruction] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        verb, args = words[0], tuple(words[1:])
        if verb in _SETTINGS:
            if steps:
                raise ScenarioError(f"line {number}: '{verb}' after the first step; settings go first")
            scenario = _setting(scenario, verb, args, number)
        elif verb in _STEPS:
            steps.append(_step(verb, args, number))
        else:
            raise ScenarioError(f"line {number}: unknown word {verb!r}")
    return replace(scenario, instructions=tuple(steps))


def load(path: str | Path) -> Scenario:
    try:
        return parse(Path(path).read_text(encoding="utf-8"))
    except ScenarioError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{path}: not a scenario (not UTF-8 text)") from None
