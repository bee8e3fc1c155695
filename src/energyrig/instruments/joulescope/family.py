"""The Joulescope family record (:data:`FAMILY`): JS220/JS110 through
``pyjoulescope_driver``, and Joulescope recordings (``.jls``).

Cheap to import: pyjls and the driver are imported when used.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from energyrig.instruments.family import Family, FileKind, Found

if TYPE_CHECKING:
    from energyrig.instruments.base import Acquisition
    from energyrig.instruments.joulescope.config import JoulescopeConfig


def open_joulescope(config: JoulescopeConfig, device: str | None) -> Acquisition:
    """The Joulescope at driver device path ``device`` (``None``: the fixture's, else the one
    attached), unstarted."""
    from energyrig.instruments.joulescope.device import Joulescope

    return Joulescope(config, device)


def scan() -> list[Found]:
    """The Joulescopes ``pyjoulescope_driver`` finds attached (its ``device_paths()``)."""
    from pyjoulescope_driver import Driver

    driver = Driver()
    try:
        paths = driver.device_paths()
    finally:
        driver.finalize()
    return [Found("joulescope", path, path.split("/")[1].upper() + " serial "
                  + path.split("/")[-1], f'kind = "joulescope"\ndevice = "{path}"')
            for path in paths]


#: The first bytes of every JLS file (jls ``include/jls/format.h``: ``JLS_HEADER_IDENTIFIER``).
JLS_MAGIC = b"jlsfmt\r\n \n \x1a  \xb2\x1c"


def is_jls(head: bytes) -> bool:
    """The first bytes of a file are a JLS file's (v2; v1 shares the magic and is refused
    when opened)."""
    return head.startswith(JLS_MAGIC)


FAMILY = Family(
    kind="joulescope",
    config_model="energyrig.instruments.joulescope.config:JoulescopeConfig",
    open=open_joulescope,
    scan=scan,
    address_field="device",
    file_kinds=(FileKind("Joulescope JLS", (".jls",), is_jls,
                         "energyrig.instruments.joulescope.jlsfile:open_jls"),),
)
