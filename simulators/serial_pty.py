"""A device's end of a real pty, so the daemon's production serial path is what gets tested.

The host side opens ``PtyPort.path`` through pyserial exactly as it would
``/dev/ttyUSB0``. ``unplug`` closes the master (the host's reads fail, as
with a pulled USB-serial adapter) and removes the stable symlink; ``plug``
brings the device back, on another ``/dev/pts`` node if asked, and points
the symlink at it: the udev ``/dev/shoe-*`` situation in miniature.
"""

from __future__ import annotations

import contextlib
import os
import select
import termios
import threading
import time
import tty
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Self

from drivers.events import DeviceEvent, DeviceHello
from drivers.framed_device import FramedDevice

_BAUD = {9600: termios.B9600, 19200: termios.B19200, 38400: termios.B38400, 115200: termios.B115200}


class PtyPort:
    """``link``: a symlink path kept pointing at the current pty (None: use the pty's own name)."""

    def __init__(self, link: str | os.PathLike[str] | None = None, baudrate: int = 9600) -> None:
        self.link = Path(link) if link else None
        self.baudrate = baudrate
        self.slave_name = ""
        self._master = -1
        self._slave = -1  # held open so the pty lives (and keeps its settings) with or without a host
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.plug()

    @property
    def path(self) -> str:
        """What the host opens."""
        return str(self.link) if self.link else self.slave_name

    @property
    def plugged(self) -> bool:
        return self._master >= 0

    def plug(self, new_node: bool = False) -> None:
        """Create the device; with ``new_node``, on a different /dev/pts node than the last one."""
        if self.plugged:
            return
        master, slave = os.openpty()
        if new_node and os.ttyname(slave) == self.slave_name:
            other = os.openpty()
            os.close(master)
            os.close(slave)
            master, slave = other
        tty.setraw(slave)
        attrs = termios.tcgetattr(slave)
        attrs[4] = attrs[5] = _BAUD.get(self.baudrate, termios.B9600)
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        self._master, self._slave = master, slave
        self.slave_name = os.ttyname(slave)
        if self.link:
            tmp = self.link.with_name(self.link.name + ".new")
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            tmp.symlink_to(self.slave_name)
            try:
                tmp.replace(self.link)
            except OSError:  # the link is a directory, say: leave nothing behind
                tmp.unlink()
                raise

    def unplug(self) -> None:
        """Pull the cable: the path disappears and the host's open port starts failing."""
        if self.link:
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()
        with self._read_lock, self._write_lock:
            for fd in (self._master, self._slave):
                if fd >= 0:
                    os.close(fd)
            self._master = self._slave = -1

    def replug(self, new_node: bool = True) -> None:
        self.unplug()
        self.plug(new_node=new_node)

    def write(self, data: bytes) -> None:
        """Send device bytes to the host; OSError when unplugged."""
        with self._write_lock:
            if not self.plugged:
                raise OSError("device unplugged")
            view = memoryview(data)
            while view:
                view = view[os.write(self._master, view) :]

    def read(self, timeout: float) -> bytes:
        """Bytes the host wrote, within ``timeout`` (b"" if none or unplugged)."""
        deadline = time.monotonic() + timeout
        while True:
            # Short waits under the lock, so unplug never closes an fd a select still watches.
            with self._read_lock:
                if not self.plugged:
                    return b""
                ready, _, _ = select.select([self._master], [], [], min(0.05, max(0.0, timeout)))
                if ready:
                    try:
                        return os.read(self._master, 4096)
                    except OSError:
                        return b""
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                return b""

    def close(self) -> None:
        self.unplug()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class FramedPtyDevice:
    """A framed shoe behind a pty: a thread reads the host's acks and commands and repeats
    unacknowledged messages, following :class:`drivers.framed_device.FramedDevice`."""

    def __init__(
        self,
        port: PtyPort,
        hello: DeviceHello | None = None,
        retransmit_after: float = 0.25,
    ) -> None:
        self.port = port
        self.device = FramedDevice(
            hello or DeviceHello("SIM-SHOE", "SIM0001", "1.0.0", boot_id=1), retransmit_after
        )
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Power up: send the boot hello and start serving the host."""
        self._emit(lambda now: self.device.start(now))
        self._thread = threading.Thread(target=self._run, name="framed-pty-device", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=2)

    def reboot(self, boot_id: int) -> None:
        """Lose all state, as firmware does when it restarts, and say hello with a new boot id."""
        with self._lock:
            old = self.device
            hello = DeviceHello(old.hello.model, old.hello.serial, old.hello.firmware, boot_id)
            self.device = FramedDevice(hello, old.retransmit_after)
        self._emit(lambda now: self.device.start(now))

    def send(self, event: DeviceEvent) -> None:
        """The shoe produced ``event`` (card, cut card, button, status, fault)."""
        self._emit(lambda now: self.device.send(event, now))

    def heartbeat(self, lid_open: bool = False, jam: bool = False, sensor_dirty: bool = False) -> None:
        self._emit(lambda now: self.device.status(lid_open, jam, sensor_dirty))

    def wait_idle(self, timeout: float) -> bool:
        """Wait until everything sent was acknowledged."""
        deadline = time.monotonic() + timeout
        while not self.device.idle:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def _answer(self, data: bytes, now: float) -> bytes:
        """What the device says to the host's ``data``, and what it had to say anyway."""
        return self.device.receive(data, now) + self.device.poll(now)

    def _emit(self, produce: Callable[[float], bytes]) -> None:
        with self._lock:
            data = produce(time.monotonic())
            if data and self.port.plugged:
                with contextlib.suppress(OSError):
                    self.port.write(data)

    def _run(self) -> None:
        while not self._stop.is_set():
            data = self.port.read(0.02)
            if not self.port.plugged:
                time.sleep(0.02)
                continue
            self._emit(partial(self._answer, data))
