"""A third-party driver package installed for one test, registered the way pip registers it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from drivers.registry import ENTRY_POINT_GROUP


def install_plugin(root: Path, monkeypatch: pytest.MonkeyPatch, source: str, drivers: dict[str, str]) -> None:
    """A module ``acme_shoe`` with ``source``, and a distribution listing ``drivers`` (name ->
    class in that module) in the drivers' entry-point group, on ``sys.path`` until the test ends."""
    (root / "acme_shoe.py").write_text(source)
    dist = root / "acme_shoe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-shoe\nVersion: 1.0\n")
    lines = "".join(f"{name} = acme_shoe:{cls}\n" for name, cls in drivers.items())
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, "acme_shoe", raising=False)  # another test's acme
