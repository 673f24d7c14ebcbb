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


def code_lines(path: Path) -> list[str]:
    """The lines of the page's code blocks as a reader copies them: indented four spaces at the top
    level, or fenced; a list item's blocks (indented further) are steps on another machine."""
    lines: list[str] = []
    fenced = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced or (line.startswith("    ") and not line[4:5].isspace()):
            lines.append(line.strip())
    return lines
