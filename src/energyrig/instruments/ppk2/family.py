"""The PPK2 family record (:data:`FAMILY`): Nordic's Power Profiler Kit II on USB serial.

Cheap to import: the driver (pyserial, numpy) is imported when an acquisition is opened.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from energyrig.instruments.family import STREAM_FAULTS, Family, FileKind, Found
from energyrig.instruments.ppk2.config import Ppk2Config

if TYPE_CHECKING:
    from serial.tools.list_ports_common import ListPortInfo

    from energyrig.instruments.base import Acquisition

#: Nordic Semiconductor's USB ids of the PPK2.
PPK2_VID_PID = (0x1915, 0xC00A)


def open_ppk2(config: Ppk2Config, port: str | None) -> Acquisition:
    """The PPK2 at ``port`` (``None``: the fixture's, else the one on USB)."""
    from energyrig.instruments.ppk2.driver import Ppk2

    return Ppk2(port or config.port, config)


def _ports() -> list[ListPortInfo]:
    """Serial ports that look like a PPK2 (USB product ``PPK2`` or Nordic's VID:PID), as
    ``ppk2-api``'s ``list_devices`` matches them."""
    from serial.tools import list_ports

    return [port for port in list_ports.comports()
            if port.product == "PPK2" or (port.vid, port.pid) == PPK2_VID_PID]


def scan() -> list[Found]:
    """The PPK2s on USB, each with its serial number."""
    return [Found("ppk2", port.device,
                  f"{port.product or port.description} serial {port.serial_number}",
                  f'kind = "ppk2"\nport = "{port.device}"')
            for port in _ports()]


def usb_serial(device: str) -> str:
    """The USB serial number of the PPK2 at serial port ``device`` (``""``: none there, or
    not on USB: an emulator's pty)."""
    resolved = os.path.realpath(device)
    return next((port.serial_number or "" for port in _ports()
                 if os.path.realpath(port.device) == resolved), "")


def _is_ppk2_raw(head: bytes) -> bool:
    """PPK2 metadata through ``END``, then the raw-stream header line (docs/formats.md)."""
    from energyrig.instruments.ppk2.rawfile import is_ppk2_raw

    return is_ppk2_raw(head)


FAMILY = Family(
    kind="ppk2",
    config=Ppk2Config,
    open=open_ppk2,
    scan=scan,
    emulator="energyrig.instruments.sim.ppk2",
    emulator_faults=frozenset(STREAM_FAULTS),
    file_kinds=(FileKind("raw PPK2 stream", (".ppk2",), _is_ppk2_raw,
                         "energyrig.instruments.ppk2.rawfile:open_ppk2_capture"),),
)
