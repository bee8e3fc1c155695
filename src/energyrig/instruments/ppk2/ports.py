"""The PPK2s on USB: their serial ports and serial numbers (pyserial's port list).

Cheap to import: pyserial is imported when the ports are listed.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from serial.tools.list_ports_common import ListPortInfo

#: Nordic Semiconductor's USB ids of the PPK2.
PPK2_VID_PID = (0x1915, 0xC00A)


def ppk2_ports() -> list[ListPortInfo]:
    """Serial ports that look like a PPK2 (USB product ``PPK2`` or Nordic's VID:PID), as
    ``ppk2-api``'s ``list_devices`` matches them."""
    from serial.tools import list_ports

    return [port for port in list_ports.comports()
            if port.product == "PPK2" or (port.vid, port.pid) == PPK2_VID_PID]


def usb_serial(device: str) -> str:
    """The USB serial number of the PPK2 at serial port ``device`` (``""``: none there, or
    not on USB: an emulator's pty, a pyserial URL such as ``rfc2217://host:port``)."""
    if "://" in device:
        return ""
    resolved = os.path.realpath(device)
    return next((port.serial_number or "" for port in ppk2_ports()
                 if os.path.realpath(port.device) == resolved), "")
