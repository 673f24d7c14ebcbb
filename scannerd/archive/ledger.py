"""What this table has archived and checked, kept beside its recordings: a restart ships nothing twice.

One JSON line per fact, appended and synced on the shipper's thread: a file
archived and checked (its key, version and what it read back as), an anchor
heard, an anchor archived. A line cut short by a crash is the last one, and is
not read. Losing the ledger loses nothing either: the shipper asks the bucket
before it puts, and checks what is already there instead of putting it again.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scannerd.settings.files import replace_whole


@dataclass(frozen=True, slots=True)
class Archived:
    """A file archived and checked: where it lies, and what it read back as."""

    file: str
    key: str
    version: str
    lines: int
    digest: str
    at: float  # when it was checked (Unix seconds): its local copy may go keep_local_days later


class Ledger:
    """The ledger of one table's recordings directory; only the shipper's thread writes it."""

    def __init__(self, directory: Path, table_id: str) -> None:
        self.path = directory / f".archive-{table_id}.ledger"
        self.archived: dict[str, Archived] = {}
        self.anchors: dict[int, str] = {}  # anchors heard and not yet archived: seq -> the event's JSON
        self._read()

    def _read(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        for line in text.splitlines():
            try:
                fact = json.loads(line)
            except ValueError:
                continue  # the last line, cut short by a crash
            if "archived" in fact:
                entry = Archived(**fact["archived"])
                self.archived[entry.file] = entry
            elif "anchor" in fact:
                self.anchors[fact["seq"]] = fact["anchor"]
            elif "anchored" in fact:
                self.anchors.pop(fact["anchored"], None)

    def keep_only(self, present: set[str]) -> None:
        """Rewrite the ledger with the files still on disk and the anchors still to go: it stays small."""
        self.archived = {name: a for name, a in self.archived.items() if name in present}
        facts: list[dict[str, Any]] = [{"archived": asdict(a)} for a in self.archived.values()]
        facts += [{"anchor": line, "seq": seq} for seq, line in self.anchors.items()]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        replace_whole(self.path, "".join(json.dumps(f) + "\n" for f in facts), 0o640)

    def file_archived(self, entry: Archived) -> None:
        self._append({"archived": asdict(entry)})
        self.archived[entry.file] = entry

    def anchor_heard(self, seq: int, line: str) -> None:
        self._append({"anchor": line, "seq": seq})
        self.anchors[seq] = line

    def anchor_archived(self, seq: int) -> None:
        self._append({"anchored": seq})
        self.anchors.pop(seq, None)

    def _append(self, fact: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(fact) + "\n")
            out.flush()
            os.fsync(out.fileno())
