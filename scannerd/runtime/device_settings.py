"""The ``[device]`` config section: which shoe or scanner to read, and how to reach it.

It lives on the daemon's side of the drivers: the registry names the drivers
and each driver judges its own port and options, so the file is refused here
for exactly what ``scannerd run`` would fail on.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator, model_validator

from drivers.base import DriverInitError
from drivers.registry import create_driver, driver_names
from drivers.usb_match import UsbPortMatch
from scannerd.settings.config_section import Section
from scannerd.settings.durations import seconds

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class DeviceSettings(Section):
    """Which shoe or scanner to read, and how to reach it."""

    driver: str = Field(description="A registered driver's name (the built-in ones: docs/devices.md).")
    port: str = Field(
        description="A device path (/dev/shoe-1), a pyserial URL (socket://host:port, rfc2217://...) "
        "or a USB selector usb:VID:PID[:SERIAL] (hex ids)."
    )
    baudrate: int | None = Field(
        None, gt=0, le=10_000_000, description="Serial speed; None for the driver's default."
    )
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Driver-specific settings, passed to the driver as given."
    )
    stale_after_s: float = seconds(
        5.0,
        0.5,
        3600,
        "A device that sends heartbeats and goes this long without a word counts as "
        "disconnected (a cable pulled at the shoe end of an adapter that stays plugged in).",
    )

    @field_validator("driver")
    @classmethod
    def _known_driver(cls, driver: str) -> str:
        known = driver_names()
        if driver not in known:
            raise ValueError(f"unknown driver {driver!r}; known: {', '.join(known)}")
        return driver

    @field_validator("port")
    @classmethod
    def _port_shape(cls, port: str) -> str:
        if port.startswith("usb:"):
            try:
                UsbPortMatch.parse(port)
            except DriverInitError as exc:
                raise ValueError(str(exc)) from None
        elif not (port.startswith("/") or _URL.match(port)):
            raise ValueError(
                "expected a device path (/dev/...), a pyserial URL (scheme://...) or usb:VID:PID[:SERIAL]"
            )
        return port

    def driver_options(self) -> dict[str, Any]:
        """The keyword arguments the driver is built with: ``options``, and ``baudrate`` when set."""
        options: dict[str, Any] = dict(self.options)
        if self.baudrate is not None:
            options["baudrate"] = self.baudrate
        return options

    @model_validator(mode="after")
    def _driver_takes_it(self) -> DeviceSettings:
        # The driver judges its own port and options (a USB driver on a /dev path, an unknown linecode
        # table), so check-config refuses what `run` would fail on, and systemd does not restart into it.
        try:
            create_driver(self.driver, self.port, **self.driver_options())
        except DriverInitError as exc:
            raise ValueError(str(exc)) from None
        return self
