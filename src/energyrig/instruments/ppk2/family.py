"""The PPK2 family record (:data:`FAMILY`): Nordic's Power Profiler Kit II on USB serial.

Cheap to import: the driver (pyserial, numpy) is imported when an acquisition is opened.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from energyrig.instruments.family import STREAM_FAULTS, Family, FileKind, Found
from energyrig.instruments.ppk2.appformat import is_app_csv, is_app_session
from energyrig.instruments.ppk2.ports import ppk2_ports

if TYPE_CHECKING:
    from energyrig.instruments.base import Acquisition
    from energyrig.instruments.ppk2.config import Ppk2Config


def open_ppk2(config: Ppk2Config, port: str | None) -> Acquisition:
    """The PPK2 at ``port`` (``None``: the fixture's, else the one on USB)."""
    from energyrig.instruments.ppk2.driver import Ppk2

    return Ppk2(port or config.port, config)


def scan() -> list[Found]:
    """The PPK2s on USB (:func:`~energyrig.instruments.ppk2.ports.ppk2_ports`), each with its
    serial number."""
    return [Found("ppk2", port.device,
                  f"{port.product or port.description} serial {port.serial_number}",
                  f'kind = "ppk2"\nport = "{port.device}"')
            for port in ppk2_ports()]


def _is_ppk2_raw(head: bytes) -> bool:
    """PPK2 metadata through ``END``, then the raw-stream header line (docs/formats.md)."""
    from energyrig.instruments.ppk2.rawfile import is_ppk2_raw

    return is_ppk2_raw(head)


FAMILY = Family(
    kind="ppk2",
    config_model="energyrig.instruments.ppk2.config:Ppk2Config",
    open=open_ppk2,
    scan=scan,
    address_field="port",
    labgrid_resource="NetworkSerialPort",
    emulator="energyrig.instruments.ppk2.emulator",
    emulator_faults=frozenset(STREAM_FAULTS),
    # The rig's raw streams were named .ppk2 before the app's sessions were read: both
    # kinds claim it, and the content tells them apart.
    file_kinds=(FileKind("Power Profiler session", (".ppk2",), is_app_session,
                         "energyrig.instruments.ppk2.appfile:open_app_session"),
                FileKind("raw PPK2 stream", (".ppk2raw", ".ppk2"), _is_ppk2_raw,
                         "energyrig.instruments.ppk2.rawfile:open_ppk2_capture"),
                FileKind("Power Profiler CSV export", (".csv",), is_app_csv,
                         "energyrig.instruments.ppk2.appfile:open_app_csv")),
)
