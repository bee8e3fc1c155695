"""The oscilloscope family record (:data:`FAMILY`): scopes over PyVISA, shunt method.

Cheap to import: PyVISA and the driver are imported when a scope is opened or searched for.
"""
from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING

from energyrig.errors import EnergyrigError
from energyrig.instruments.family import Family, Found
from energyrig.instruments.scope.filekinds import FILE_KINDS
from energyrig.instruments.scope.flags import SCOPE_FLAGS

if TYPE_CHECKING:
    from energyrig.instruments.base import Acquisition
    from energyrig.instruments.scope.config import ScopeConfig

log = logging.getLogger(__name__)

#: The backend ``rig instruments`` searches with (pyvisa-py, pure Python).
VISA_LIBRARY = "@py"
#: How long a found resource may take to answer ``*IDN?``, s.
IDN_TIMEOUT_S = 2.0


def open_scope(config: ScopeConfig, resource: str | None) -> Acquisition:
    """The scope at ``resource`` (``None``: the fixture's)."""
    from energyrig.instruments.scope.driver import Scope

    return Scope(config, resource)


def scan() -> list[Found]:
    """VISA resources the backend lists (pyvisa-py: USBTMC with pyusb, VXI-11/HiSLIP on the
    LAN with its optional discovery packages), each asked ``*IDN?`` to name its dialect.
    Serial ports are left out (a PPK2 or a DUT must not receive ``*IDN?``)."""
    import pyvisa

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rm = pyvisa.ResourceManager(VISA_LIBRARY)
        try:
            resources = rm.list_resources()
        finally:
            rm.close()
    for w in caught:
        log.info("pyvisa-py: %s", w.message)
    return [identify(r, VISA_LIBRARY, IDN_TIMEOUT_S) for r in resources
            if not r.startswith("ASRL")]


def identify(resource: str, visa_library: str, timeout_s: float) -> Found:
    """A scope's identity and dialect from ``*IDN?`` (or why it did not answer), waiting at
    most ``timeout_s`` s."""
    import pyvisa.errors

    from energyrig.instruments.scope.dialects import dialect_for_idn
    from energyrig.instruments.visa import open_session

    dialect = "auto"
    try:
        session = open_session(resource, visa_library, timeout_s, product="scope")
        try:
            idn = str(session.inst.query("*IDN?")).strip()
        finally:
            session.close()
        found = dialect_for_idn(idn)
        dialect = found.name if found is not None else "auto"
        description = idn + ("" if found else " (no dialect for it yet)")
    except (EnergyrigError, OSError, ValueError, pyvisa.errors.Error) as exc:
        description = f"does not answer *IDN? ({exc})"
    return Found("scope", resource, description,
                 f'kind = "scope"\nresource = "{resource}"\ndialect = "{dialect}"')


def emulator_args(config: ScopeConfig) -> list[str]:
    """The emulator's dialect (a Rigol DS1000Z for ``auto``) and shunt."""
    dialect = "rigol-ds1000z" if config.dialect == "auto" else config.dialect
    return ["--dialect", dialect, "--shunt-ohms", str(config.shunt_ohms or 1.0)]


FAMILY = Family(
    kind="scope",
    config_model="energyrig.instruments.scope.config:ScopeConfig",
    open=open_scope,
    scan=scan,
    address_field="resource",
    labgrid_resource="PyVISADevice",
    emulator="energyrig.instruments.scope.emulator",
    emulator_args=emulator_args,
    program_fields=("visa_library",),  # a path loads that library, "@name" imports pyvisa_name
    flags=SCOPE_FLAGS,
    file_kinds=FILE_KINDS,
)
