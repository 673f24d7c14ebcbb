"""Whoever follows the table as it is judged: one base class, each hook a no-op unless overridden.

The recorder, the dealer display and the shoe's alarm each want some of what
happens, and the daemon tells every one of them the same way, in the order
the table judged it. Every hook is called under the daemon's lock, on the
thread that judged the input, so none may block: the recorder and the
display only queue. Subclass it and override what you need.
"""

from __future__ import annotations

from collections.abc import Sequence

from scannerd.contract.events import EventData
from scannerd.contract.payloads import DevicePayload
from scannerd.core.inputs import ValidatorInput


class TableListener:
    """What the daemon tells a listener; it adds its own (``Daemon.listeners``)."""

    def on_input(self, inp: ValidatorInput) -> None:
        """An input was judged (any but a tick, which a replay makes again): what a recording keeps."""

    def on_rx(self, ts: float, data: bytes) -> None:
        """The device's bytes of one read, once the events they made are stored."""

    def on_events(self, events: Sequence[EventData]) -> None:
        """Events stored, and the shoe told: what the dealer and the shoe's alarm show."""

    def on_device(self, payload: DevicePayload) -> None:
        """The retained device payload changed."""
