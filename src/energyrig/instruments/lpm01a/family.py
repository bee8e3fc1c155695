"""The STM32 Power Shield family record (:data:`FAMILY`): ST's X-NUCLEO-LPM01A on its USB
virtual COM port.

Cheap to import: the driver (pyserial, numpy) is imported when an acquisition is opened.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from energyrig.instruments.family import Family, Found

if TYPE_CHECKING:
    from energyrig.instruments.base import Acquisition
    from energyrig.instruments.lpm01a.config import Lpm01aConfig

#: The USB ids of the board's virtual COM port: ST's vendor id and the STM32 Virtual COM
#: Port product id (shared by every STM32 CDC device, so a found port is a candidate).
USB_VID, USB_PID = 0x0483, 0x5740


def open_lpm01a(config: Lpm01aConfig, port: str | None) -> Acquisition:
    """The Power Shield at ``port`` (``None``: the fixture's)."""
    from energyrig.instruments.lpm01a.driver import Lpm01a

    return Lpm01a(port or config.port, config)


def scan() -> list[Found]:
    """The serial ports with the board's USB ids (any STM32 virtual COM port has them: the
    description says so)."""
    from serial.tools import list_ports

    return [Found("lpm01a", p.device,
                  f"{p.product or p.description} (an STM32 virtual COM port: a Power Shield?)",
                  f'kind = "lpm01a"\nport = "{p.device}"')
            for p in list_ports.comports() if (p.vid, p.pid) == (USB_VID, USB_PID)]


FAMILY = Family(
    kind="lpm01a",
    config_model="energyrig.instruments.lpm01a.config:Lpm01aConfig",
    open=open_lpm01a,
    scan=scan,
    address_field="port",
    labgrid_resource="NetworkSerialPort",
    emulator="energyrig.instruments.lpm01a.emulator",
)
