"""The staff list: each id's role and salted PIN hash, read to check a PIN typed at the display.

A JSON file, written only by ``scannerd staff`` (docs/staff.md). PINs are
hashed with Argon2id (argon2-cffi, the reference implementation's binding),
each with its own salt, so the file gives no PIN away cheaply and two staff
with the same PIN have different hashes. The table never stores or logs a
PIN: what a check found goes on as an ``Actor``, which the validator judges
and the recording keeps.
"""

from __future__ import annotations

import stat
import threading
from pathlib import Path
from typing import Annotated, Final, Literal

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from scannerd.contract.idents import Ident
from scannerd.contract.requests import Request
from scannerd.core.inputs import Actor
from scannerd.settings.files import replace_whole

FORMAT: Final = "scannerd-staff"
VERSION: Final = 1

Role = Literal["dealer", "supervisor"]
Pin = Annotated[str, StringConstraints(pattern=r"^[0-9]{4,12}$")]
"""What a dealer types on the display's keypad: 4 to 12 digits."""

_HASHER = PasswordHasher()  # Argon2id with the library's current defaults (RFC 9106's second choice)
_NOBODY = _HASHER.hash("0000")
"""Checked against for an id the list does not hold, so that an unknown id takes as long as a known one."""


class StaffListError(ValueError):
    """A staff list that cannot be used; ``str()`` is one line naming the file."""


class Member(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Ident
    role: Role
    pin: str = Field(pattern=r"^\$argon2id\$", description="The PIN's Argon2id hash (PHC string).")


class StaffFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["scannerd-staff"] = FORMAT
    version: Literal[1] = VERSION
    staff: list[Member] = Field(default_factory=list)

    @model_validator(mode="after")
    def _each_id_once(self) -> StaffFile:
        ids = [m.id for m in self.staff]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"staff ids listed more than once: {', '.join(twice)}")
        return self


def hash_pin(pin: str) -> str:
    return _HASHER.hash(pin)


def read(path: Path) -> StaffFile:
    """The list in ``path``; StaffListError when it is missing, unreadable, malformed or open to others.

    A list anyone on the PC can read would let them try PINs offline, and one
    anyone can write would let them add themselves: both are refused.
    """
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StaffListError(f"staff list {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise StaffListError(f"staff list {path}: not UTF-8 text") from None
    if mode & (stat.S_IROTH | stat.S_IWOTH | stat.S_IWGRP):
        raise StaffListError(
            f"staff list {path}: readable or writable by others (mode {stat.S_IMODE(mode):o}); "
            "make it 0640 root:scannerd or 0600"
        )
    try:
        return StaffFile.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise StaffListError(f"staff list {path}: {where}: {first['msg']}") from None


def write(path: Path, staff: StaffFile) -> None:
    """Replace ``path`` whole (a crash leaves the old list or the new, never half), mode 0640.

    The group is the directory's, as ``install -d -g scannerd`` sets it: the service reads
    through its group, and no one else can.
    """
    replace_whole(path, staff.model_dump_json(indent=2) + "\n", 0o640)


class Roster:
    """The staff list a table checks against, read again whenever its file changes.

    A list broken by a slip while the table runs is not taken: the one read
    before stays, and the slip is said in one line (``problem``).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp = self._stamp_now()
        self._members = {m.id: m for m in read(path).staff}
        self.problem: str | None = None

    def _stamp_now(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def _current(self) -> dict[str, Member]:
        with self._lock:
            stamp = self._stamp_now()
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    self._members = {m.id: m for m in read(self.path).staff}
                    self.problem = None
                except StaffListError as exc:
                    self.problem = str(exc)
            return self._members

    def role_of(self, staff_id: str) -> Literal["dealer", "supervisor", "unknown"]:
        member = self._current().get(staff_id)
        return member.role if member is not None else "unknown"

    def at_display(self, staff_id: str, pin: str) -> Actor:
        """Check a PIN typed at the display: the actor, with the list's role and the verdict.

        Slow on purpose (Argon2): run it off any loop that must keep serving.
        """
        member = self._current().get(staff_id)
        try:
            _HASHER.verify(member.pin if member is not None else _NOBODY, pin)
            right = member is not None
        except (VerificationError, InvalidHashError):
            right = False
        role = member.role if member is not None else "unknown"
        return Actor("display", staff_id, role, "right" if right else "wrong")


NAMED = {"dealer_sign_in": "dealer_id", "resume": "supervisor_id"}
"""The requests in which the game server names the staff member who acts: it vouches for them."""


def request_actor(request: Request, roster: Roster | None) -> Actor:
    """Who took a request that came over MQTT: the pit's broker user, the staff the game server names,
    or the game server."""
    if request.pit_user is not None:
        return Actor("pit", request.pit_user)
    named = request.args.get(NAMED.get(request.command, ""))
    if named is None:
        return Actor("gameserver", "gameserver")
    return Actor("gameserver", named, roster.role_of(named) if roster is not None else None)
