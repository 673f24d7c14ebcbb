"""The simulated casino written in parts is the casino written whole: a bench writes a year on every core."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulators.week import write_week


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_the_parts_of_a_casino_are_its_tables_byte_for_byte(tmp_path: Path) -> None:
    whole = write_week(tmp_path / "whole", tables=3, days=2, lazy=2, seed=5)
    parts = [
        shoe
        for k in range(2)
        for shoe in write_week(tmp_path / "parts", tables=3, days=2, lazy=2, seed=5, part=(k, 2))
    ]
    assert sorted(parts, key=lambda s: (s.table_id, s.day)) == sorted(
        whole, key=lambda s: (s.table_id, s.day)
    )
    assert _files(tmp_path / "parts") == _files(tmp_path / "whole")


@pytest.mark.parametrize("part", [(2, 2), (-1, 2), (0, 0)])
def test_a_part_that_is_not_one_is_named(tmp_path: Path, part: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match=f"part {part[0]} of {part[1]}"):
        write_week(tmp_path, tables=2, days=1, part=part)
