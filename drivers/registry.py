"""Drivers by name: built-ins imported only when asked for, plus third-party plugins.

A driver shipped as its own package registers in the ``scannerd.drivers``
entry-point group (``name = "package.module:DriverClass"``); importing
lazily keeps a missing optional dependency of one driver (pyusb, say) from
breaking every other one.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from drivers.base import TRANSPORTS, Driver, DriverInitError

ENTRY_POINT_GROUP = "scannerd.drivers"

BUILTIN_DRIVERS: dict[str, str] = {
    "beetek": "drivers.beetek:BeetekDriver",
    "linecode": "drivers.linecode:LinecodeDriver",
    "framed": "drivers.framed:FramedDriver",
    "usb-hid": "drivers.usb_hid:UsbHidDriver",
    "usb-framed": "drivers.usb_framed:UsbFramedDriver",
}


def _plugins() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def driver_names() -> list[str]:
    """Every driver name that can be asked for: built-ins first, then plugins."""
    return list(BUILTIN_DRIVERS) + sorted(set(_plugins()) - set(BUILTIN_DRIVERS))


def get_driver_class(name: str) -> type[Driver]:
    """Import and return the driver class registered as ``name``."""
    target = BUILTIN_DRIVERS.get(name) or _plugins().get(name)
    if target is None:
        raise DriverInitError(f"unknown driver {name!r}; known: {', '.join(driver_names())}")
    module_name, _, class_name = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise DriverInitError(f"driver {name!r} ({target}) cannot be loaded: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Driver)):
        raise DriverInitError(f"driver {name!r} ({target}) is not a Driver subclass")
    if getattr(cls, "transport", None) not in TRANSPORTS:
        # Everything that sorts devices by how they connect reads this; a guess would misfile it.
        choices = " or ".join(TRANSPORTS)
        raise DriverInitError(f"driver {name!r} ({target}) declares no transport: set transport to {choices}")
    return cls


def create_driver(name: str, channel: str, **options: Any) -> Driver:
    """A driver instance, not yet opened."""
    return get_driver_class(name)(channel, **options)
