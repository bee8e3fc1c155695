"""The sigrok family record (:data:`FAMILY`): libsigrok devices through ``sigrok-cli``, and
sigrok session files (``.sr``).

Cheap to import: the driver and the reader (numpy) are imported when used. There is no
emulator; a simulated bench cannot use this family.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from energyrig.instruments.family import Family, FileKind, Found
from energyrig.instruments.sigrok.flags import SIGROK_FLAGS

if TYPE_CHECKING:
    from energyrig.instruments.base import Acquisition
    from energyrig.instruments.sigrok.config import SigrokConfig


def open_device(config: SigrokConfig, conn: str | None) -> Acquisition:
    """The device of ``config``, at ``conn`` if given (else the fixture's ``conn``)."""
    from energyrig.instruments.sigrok.device import SigrokDevice

    return SigrokDevice(config if conn is None else config.model_copy(update={"conn": conn}))


def scan() -> list[Found]:
    """Devices ``sigrok-cli --scan`` finds (the ``demo`` driver is always there)."""
    from energyrig.instruments.sigrok.device import list_devices

    return [Found("sigrok", d.spec, f"{d.description} ({', '.join(d.channels)})",
                  f'kind = "sigrok"\ndriver = "{d.driver}"'
                  + (f'\nconn = "{d.conn}"' if d.conn else ""))
            for d in list_devices()]


def _is_zip(head: bytes) -> bool:
    """A zip archive (sigrok session files are)."""
    return head.startswith(b"PK\x03\x04")


FAMILY = Family(
    kind="sigrok",
    config_model="energyrig.instruments.sigrok.config:SigrokConfig",
    open=open_device,
    scan=scan,
    address_field="conn",
    file_kinds=(FileKind("sigrok session", (".sr",), _is_zip,
                         "energyrig.instruments.sigrok.srfile:open_sr"),),
    program_fields=("sigrok_cli",),
    flags=SIGROK_FLAGS,
)
