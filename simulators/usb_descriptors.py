"""USB descriptors of the simulated devices, as pyusb reads them and as bytes on the wire.

The fields carry the USB 2.0 names because pyusb copies them by name onto its
``Device``/``Configuration``/``Interface``/``Endpoint`` objects; the ``to_bytes``
forms answer GET_DESCRIPTOR control requests, so a driver that parses raw
descriptors sees the same device as one that walks pyusb's objects.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum

DESC_DEVICE = 0x01
DESC_CONFIGURATION = 0x02
DESC_STRING = 0x03
DESC_INTERFACE = 0x04
DESC_ENDPOINT = 0x05
DESC_HID = 0x21
DESC_HID_REPORT = 0x22

EP_IN = 0x80
EP_BULK = 0x02
EP_INTERRUPT = 0x03

LANGID_EN_US = 0x0409


class Request(IntEnum):
    """Standard requests (USB 2.0, 9.4)."""

    GET_STATUS = 0x00
    CLEAR_FEATURE = 0x01
    GET_DESCRIPTOR = 0x06
    GET_CONFIGURATION = 0x08
    SET_CONFIGURATION = 0x09


class HidRequest(IntEnum):
    """HID class requests (HID 1.11, 7.2)."""

    GET_REPORT = 0x01
    GET_IDLE = 0x02
    GET_PROTOCOL = 0x03
    SET_REPORT = 0x09
    SET_IDLE = 0x0A
    SET_PROTOCOL = 0x0B


@dataclass(frozen=True)
class EndpointDescriptor:
    bEndpointAddress: int
    bmAttributes: int
    wMaxPacketSize: int
    bInterval: int = 0
    bLength: int = 7
    bDescriptorType: int = DESC_ENDPOINT
    bRefresh: int = 0
    bSynchAddress: int = 0

    @property
    def extra_descriptors(self) -> list[int]:
        return []

    @property
    def is_in(self) -> bool:
        return bool(self.bEndpointAddress & EP_IN)

    def to_bytes(self) -> bytes:
        return struct.pack(
            "<BBBBHB",
            self.bLength,
            self.bDescriptorType,
            self.bEndpointAddress,
            self.bmAttributes,
            self.wMaxPacketSize,
            self.bInterval,
        )


@dataclass(frozen=True)
class InterfaceDescriptor:
    bInterfaceNumber: int
    bInterfaceClass: int
    bInterfaceSubClass: int
    bInterfaceProtocol: int
    endpoints: tuple[EndpointDescriptor, ...]
    bAlternateSetting: int = 0
    iInterface: int = 0
    extra: bytes = b""  # class-specific descriptors that follow the interface (e.g. HID)
    bLength: int = 9
    bDescriptorType: int = DESC_INTERFACE

    @property
    def bNumEndpoints(self) -> int:
        return len(self.endpoints)

    @property
    def extra_descriptors(self) -> list[int]:
        return list(self.extra)

    def to_bytes(self) -> bytes:
        head = struct.pack(
            "<9B",
            self.bLength,
            self.bDescriptorType,
            self.bInterfaceNumber,
            self.bAlternateSetting,
            self.bNumEndpoints,
            self.bInterfaceClass,
            self.bInterfaceSubClass,
            self.bInterfaceProtocol,
            self.iInterface,
        )
        return head + self.extra + b"".join(ep.to_bytes() for ep in self.endpoints)


@dataclass(frozen=True)
class ConfigurationDescriptor:
    interfaces: tuple[InterfaceDescriptor, ...]  # one per interface number: no alternate settings here
    bConfigurationValue: int = 1
    iConfiguration: int = 0
    bmAttributes: int = 0x80  # bus powered
    bMaxPower: int = 50  # in 2 mA units
    bLength: int = 9
    bDescriptorType: int = DESC_CONFIGURATION

    @property
    def bNumInterfaces(self) -> int:
        return len(self.interfaces)

    @property
    def wTotalLength(self) -> int:
        return self.bLength + sum(len(i.to_bytes()) for i in self.interfaces)

    @property
    def extra_descriptors(self) -> list[int]:
        return []

    def to_bytes(self) -> bytes:
        head = struct.pack(
            "<BBHBBBBB",
            self.bLength,
            self.bDescriptorType,
            self.wTotalLength,
            self.bNumInterfaces,
            self.bConfigurationValue,
            self.iConfiguration,
            self.bmAttributes,
            self.bMaxPower,
        )
        return head + b"".join(i.to_bytes() for i in self.interfaces)


@dataclass(frozen=True)
class DeviceDescriptor:
    idVendor: int
    idProduct: int
    configurations: tuple[ConfigurationDescriptor, ...]
    bcdDevice: int = 0x0100
    bcdUSB: int = 0x0200
    bDeviceClass: int = 0  # class given per interface
    bDeviceSubClass: int = 0
    bDeviceProtocol: int = 0
    bMaxPacketSize0: int = 64
    iManufacturer: int = 1
    iProduct: int = 2
    iSerialNumber: int = 3
    strings: dict[int, str] = field(default_factory=dict)  # string index -> text (en-US)
    bLength: int = 18
    bDescriptorType: int = DESC_DEVICE

    @property
    def bNumConfigurations(self) -> int:
        return len(self.configurations)

    def to_bytes(self) -> bytes:
        return struct.pack(
            "<BBHBBBBHHHBBBB",
            self.bLength,
            self.bDescriptorType,
            self.bcdUSB,
            self.bDeviceClass,
            self.bDeviceSubClass,
            self.bDeviceProtocol,
            self.bMaxPacketSize0,
            self.idVendor,
            self.idProduct,
            self.bcdDevice,
            self.iManufacturer,
            self.iProduct,
            self.iSerialNumber,
            self.bNumConfigurations,
        )

    def string_descriptor(self, index: int) -> bytes | None:
        """String descriptor ``index`` (0 lists the language IDs), or None if there is none."""
        if index == 0:
            body = struct.pack("<H", LANGID_EN_US)
        elif index in self.strings:
            body = self.strings[index].encode("utf-16-le")
        else:
            return None
        return bytes([2 + len(body), DESC_STRING]) + body


def single_interface_device(
    vid: int, pid: int, interface: InterfaceDescriptor, manufacturer: str, product: str, serial: str | None
) -> DeviceDescriptor:
    """A device with one configuration of one interface, and its strings (serial optional)."""
    strings = {1: manufacturer, 2: product} | ({3: serial} if serial is not None else {})
    return DeviceDescriptor(
        idVendor=vid,
        idProduct=pid,
        configurations=(ConfigurationDescriptor(interfaces=(interface,)),),
        iSerialNumber=3 if serial is not None else 0,
        strings=strings,
    )


# The boot keyboard report descriptor from the HID 1.11 specification, appendix B.1:
# 8 modifier bits, a reserved byte, 5 LED output bits (+3 padding), 6 key slots.
BOOT_KEYBOARD_REPORT_DESCRIPTOR = bytes.fromhex(
    "05010906a101"  # Usage Page (Generic Desktop), Usage (Keyboard), Collection (Application)
    "050719e029e71500250175019508810295017508810195057501050819012905910295017503910195067508"
    "150025650507190029658100"
    "c0"  # End Collection
)


def hid_descriptor(report_descriptor_length: int) -> bytes:
    """The HID class descriptor that follows a HID interface descriptor (HID 1.11, 6.2.1)."""
    return struct.pack("<BBHBBBH", 9, DESC_HID, 0x0111, 0, 1, DESC_HID_REPORT, report_descriptor_length)
