"""The regression library: recorded sessions and the messages a replay of each must publish.

Like gpsd's regression suite: ``<name>.jsonl`` (or ``.jsonl.gz``) is a
recording, ``<name>.chk`` its golden output, exactly what ``scannerd replay
--fast --emit jsonl <name>.jsonl`` prints. Nothing in the output varies from run to run,
so the check is a plain comparison.

    python -m tests.sessions build     # rewrite the hand-written recordings (cases.py)
    python -m tests.sessions rebuild   # rewrite every .chk from a replay: review the diff!
    python -m tests.sessions check     # what the test does: report every session that differs
"""

from __future__ import annotations

import difflib
from pathlib import Path

from scannerd.recording.replay import replay

DIR = Path(__file__).parent


def recordings() -> list[Path]:
    return sorted(p for p in DIR.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz")))


def golden_path(recording: Path) -> Path:
    return recording.with_name(recording.name.removesuffix(".gz").removesuffix(".jsonl") + ".chk")


def render(recording: Path) -> str:
    """The replay's output, one message per line (as ``scannerd replay --fast --emit jsonl`` prints it)."""
    return "".join(message.to_json() + "\n" for message in replay(recording))


def diff(recording: Path) -> str:
    """How a replay of ``recording`` differs from its golden file, as a unified diff ("" if not at all)."""
    golden = golden_path(recording)
    want = golden.read_text() if golden.exists() else ""
    got = render(recording)
    return "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), golden.name, "replay"))
