"""How the table is, taken once: what the health topic, ``/metrics``, ``/healthz`` and systemd's
status line all read.

Each of them used to gather its own figures from the daemon's parts, so two of them could
disagree about the same moment (the broker connected on one, not on the other) and a new part
had to be added in four places. The snapshot is the health topic's payload (the publisher builds
it: it owns the broker's counters) with what that payload leaves out: the shoe's link and
device, the suspension, the shoe and round for the status line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scannerd.contract.payloads import DevicePayload, HealthPayload


@dataclass(frozen=True, slots=True)
class TableHealth:
    """One table at one moment, as everything that reports on it reads it."""

    payload: HealthPayload
    """The health topic's payload: broker, outbox, reader, recorder, display, clock."""
    link_up: bool
    """The reader has the shoe open."""
    device: DevicePayload | None
    """The shoe as last said on the device topic: its link, model, detail."""
    suspended: dict[str, Any] | None
    """What stopped the table, while it is suspended."""
    shoe: dict[str, Any] | None
    round: dict[str, Any] | None

    def problems(self) -> dict[str, str]:
        """What is not well, by part (shoe, broker, outbox), with the reason: ``/healthz`` answers 503
        with these; {} when all is well."""
        problems = {}
        device, p = self.device, self.payload
        if not self.link_up or device is None or device.link != "up":
            detail = device.detail if device is not None and device.detail else "not open"
            problems["shoe"] = f"link {device.link if device is not None else 'unknown'}: {detail}"
        if not p.connected:
            problems["broker"] = f"not connected ({p.failed_attempts} failed attempts)"
        if p.outbox_level == "full":
            problems["outbox"] = f"full: {p.held} events held in memory, {p.pending} waiting"
        return problems

    def status_line(self) -> str:
        """systemd's one line on the table (``systemctl status scannerd``)."""
        shoe, rnd = self.shoe, self.round
        parts = [f"shoe {shoe['shoe_id']} {shoe['status']}" if shoe else "shoe unknown"]
        if self.suspended is not None:  # first: the one thing an operator looking at the table must see
            parts.insert(0, f"SUSPENDED ({self.suspended['cause']})")
        if rnd:
            parts.append(f"round {rnd['round_id']} {rnd['phase']}")
        parts.append(f"link {'up' if self.link_up else 'down'}")
        parts.append(f"mqtt {'connected' if self.payload.connected else 'disconnected'}")
        parts.append(f"{self.payload.pending} pending")
        archive = self.payload.archive
        if archive is not None:  # a table that archives says how far behind its archive is
            behind = f", {archive.behind} behind" if archive.behind else ""
            parts.append(f"archive {archive.state}{behind}")
        return ", ".join(parts)
