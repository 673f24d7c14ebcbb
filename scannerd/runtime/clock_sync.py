"""Whether the table's clock is synchronised, as the kernel's NTP state says: the one place it is read.

Every event carries the wall clock's time, and a regulator's record is only
as good as that clock. The kernel keeps what the time service (chrony,
systemd-timesyncd, ntpd) last told it: whether the clock is synchronised, and
its estimated and maximum error. ``adjtimex`` with no mode bits set reads that
state and changes nothing, so any user may call it.

The daemon reads it once a tick (``read``, nowhere else) for the health topic
and for ``CLOCK_UNSYNCED`` (docs/mqtt.md, The clock).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass
from typing import Self

from pydantic import Field

from scannerd.settings.config_section import Section
from scannerd.settings.durations import seconds

STA_UNSYNC = 0x0040
"""``timex.status``: the clock is not synchronised (the time service never set it, or gave up)."""
TIME_ERROR = 5
"""What ``adjtimex`` returns while the clock is not synchronised."""
_MICROSECONDS = 1e-6

CLEAR_BELOW = 0.8
"""Once judged off, the clock is well again only with its estimated error back under this share of the
house limit: an error sitting at the limit, a little over and a little under from one reading to the
next, would otherwise raise and clear CLOCK_UNSYNCED once a second."""


class ClockSettings(Section):
    """How far the table's clock may be off before the pit is told (``CLOCK_UNSYNCED``)."""

    max_error_s: float = seconds(
        0.1,
        0.001,
        60.0,
        "The house limit on the kernel's estimated clock error, in seconds: above it, or with the "
        "clock not synchronised at all, the table raises CLOCK_UNSYNCED until it is well again "
        f"(synchronised, and back under {CLEAR_BELOW:.0%} of the limit).",
    )
    alert: bool = Field(
        True,
        description="Raise CLOCK_UNSYNCED. Off: the clock is still reported on the health topic, and "
        "no alert is raised (a machine whose clock no time service keeps, such as a test runner's).",
    )


@dataclass(frozen=True, slots=True)
class ClockReading:
    """The kernel's word on the clock: synchronised or not, and its estimated and maximum error."""

    synchronised: bool
    est_error_s: float
    max_error_s: float

    def well(self, limit_s: float, off: bool = False) -> bool:
        """Synchronised, and its estimated error within ``limit_s``; for a clock judged ``off`` until now,
        within ``CLEAR_BELOW`` of it."""
        return self.synchronised and self.est_error_s <= (limit_s * CLEAR_BELOW if off else limit_s)

    def say(self) -> str:
        """How it stands, for the alert's words and the log."""
        if not self.synchronised:
            return "not synchronised"
        return f"estimated error {self.est_error_s:g} s"

    @classmethod
    def of(cls, returned: int, status: int, esterror_us: int, maxerror_us: int) -> Self:
        return cls(
            synchronised=returned != TIME_ERROR and not status & STA_UNSYNC,
            est_error_s=esterror_us * _MICROSECONDS,
            max_error_s=maxerror_us * _MICROSECONDS,
        )


class _Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


class _Timex(ctypes.Structure):
    """``struct timex`` of <sys/timex.h> (Linux)."""

    _fields_ = [
        ("modes", ctypes.c_uint),
        ("offset", ctypes.c_long),
        ("freq", ctypes.c_long),
        ("maxerror", ctypes.c_long),
        ("esterror", ctypes.c_long),
        ("status", ctypes.c_int),
        ("constant", ctypes.c_long),
        ("precision", ctypes.c_long),
        ("tolerance", ctypes.c_long),
        ("time", _Timeval),
        ("tick", ctypes.c_long),
        ("ppsfreq", ctypes.c_long),
        ("jitter", ctypes.c_long),
        ("shift", ctypes.c_int),
        ("stabil", ctypes.c_long),
        ("jitcnt", ctypes.c_long),
        ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long),
        ("stbcnt", ctypes.c_long),
        ("tai", ctypes.c_int),
        ("_reserved", ctypes.c_int * 11),
    ]


def _adjtimex() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        return libc.adjtimex
    except (OSError, AttributeError):  # not Linux: no such call
        return None


_CALL = _adjtimex()


def read() -> ClockReading | None:
    """The kernel's clock state now; None where it cannot be read (no ``adjtimex``, or it failed)."""
    if _CALL is None:
        return None
    timex = _Timex()  # modes 0: read only
    returned = _CALL(ctypes.byref(timex))
    if returned < 0:
        return None
    return ClockReading.of(returned, timex.status, timex.esterror, timex.maxerror)
