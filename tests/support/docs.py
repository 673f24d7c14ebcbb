"""The docs' tables, read the way an operator reads them, for tests that hold them to the code."""

from __future__ import annotations

from pathlib import Path


def markdown_table(path: Path, heading: str) -> list[list[str]]:
    """The rows (cells stripped) of the first table under ``heading``, its header and rule left out.

    ``heading`` is a whole line (``## Alerts``) or the bold lead-in that opens a paragraph
    (``**Ranges.**``), for a table that belongs to a paragraph rather than a section.
    """
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line == heading or line.startswith(heading + " "))
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert len(rows) > 2, f"no table under {heading!r} in {path}"
    return rows[2:]
