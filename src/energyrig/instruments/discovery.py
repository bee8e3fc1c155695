"""Find the power instruments attached to this host, and check a fixture's instruments answer.

:func:`find_instruments` lists PPK2s on USB serial (what ``ppk2-api``'s ``list_devices``
matches: USB product ``PPK2``, Nordic's VID:PID ``1915:C00A``), VISA resources the pure-Python
pyvisa-py backend can see, and sigrok devices (``sigrok-cli --scan``). Each source that cannot
be searched (no sigrok-cli, no USB permission) is reported as a problem, not an exception.

:func:`check_fixture` opens every part of a fixture (the instrument; the DUT's serial port
when the DUT is on one; on a simulated fixture the whole bench with its emulator) and returns
one :class:`Check` per part, saying what does not answer and why.
"""
from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from energyrig.errors import EnergyrigError

log = logging.getLogger(__name__)

#: Nordic Semiconductor's USB ids of the PPK2.
PPK2_VID_PID = (0x1915, 0xC00A)


@dataclass(frozen=True, slots=True)
class Found:
    """One instrument found: its kind (fixture ``kind``), address and a description."""

    kind: str
    address: str
    description: str
    fixture: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Check:
    """The outcome of opening one part of a fixture."""

    part: str
    target: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_ppk2() -> list[Found]:
    """Serial ports that look like a PPK2 (USB product ``PPK2`` or Nordic's VID:PID)."""
    from serial.tools import list_ports

    out = []
    for port in list_ports.comports():
        if port.product == "PPK2" or (port.vid, port.pid) == PPK2_VID_PID:
            out.append(Found("ppk2", port.device,
                             f"{port.product or port.description} serial {port.serial_number}",
                             f'kind = "ppk2"\nport = "{port.device}"'))
    return out


def find_visa(visa_library: str = "@py", idn_timeout_s: float = 2.0) -> list[Found]:
    """VISA resources the backend lists (pyvisa-py: USBTMC with pyusb, VXI-11/HiSLIP on the
    LAN with its optional discovery packages), each asked ``*IDN?`` to name its dialect.
    Serial ports are left out (a PPK2 or a DUT must not receive ``*IDN?``)."""
    import pyvisa

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rm = pyvisa.ResourceManager(visa_library)
        try:
            resources = rm.list_resources()
        finally:
            rm.close()
    for w in caught:
        log.info("pyvisa-py: %s", w.message)
    return [_identify(r, visa_library, idn_timeout_s) for r in resources
            if not r.startswith("ASRL")]


def _identify(resource: str, visa_library: str, timeout_s: float) -> Found:
    """A scope's identity and dialect from ``*IDN?`` (or why it did not answer)."""
    import pyvisa.errors

    from energyrig.instruments.scope.dialects import dialect_for_idn
    from energyrig.instruments.scope.driver import open_session
    from energyrig.instruments.scope.protocol import ScopeSettings

    settings = ScopeSettings(resource, timeout_s=timeout_s, visa_library=visa_library)
    dialect = "auto"
    try:
        rm, inst = open_session(settings)
        try:
            idn = str(inst.query("*IDN?")).strip()
        finally:
            inst.close()
            rm.close()
        found = dialect_for_idn(idn)
        dialect = found.name if found is not None else "auto"
        description = idn + ("" if found else " (no dialect for it yet)")
    except (EnergyrigError, OSError, ValueError, pyvisa.errors.Error) as exc:
        description = f"does not answer *IDN? ({exc})"
    return Found("scope", resource, description,
                 f'kind = "scope"\nresource = "{resource}"\ndialect = "{dialect}"')


def find_sigrok() -> list[Found]:
    """Devices ``sigrok-cli --scan`` finds (the ``demo`` driver is always there)."""
    from energyrig.instruments.sigrok import list_devices

    return [Found("sigrok", d.spec, f"{d.description} ({', '.join(d.channels)})",
                  f'kind = "sigrok"\ndriver = "{d.driver}"'
                  + (f'\nconn = "{d.conn}"' if d.conn else ""))
            for d in list_devices()]


SOURCES: dict[str, Callable[[], list[Found]]] = {
    "ppk2": find_ppk2, "visa": find_visa, "sigrok": find_sigrok}


def find_instruments(sources: tuple[str, ...] = tuple(SOURCES)) -> tuple[list[Found],
                                                                          dict[str, str]]:
    """Search each source; returns what was found and ``source -> problem`` for those that
    could not be searched."""
    found: list[Found] = []
    problems: dict[str, str] = {}
    for name in sources:
        try:
            found += SOURCES[name]()
        except (EnergyrigError, OSError, ValueError, ImportError) as exc:
            problems[name] = str(exc)
            log.info("instrument search %s failed: %s", name, exc)
    return found, problems


def check_fixture(path: str | None) -> list[Check]:
    """Open each part of the fixture at ``path`` (the default fixture if ``None``).

    Raises
    ------
    ConfigError
        The fixture itself is malformed (nothing can be checked).
    """
    from energyrig.fixtures import instrument_kind, load_fixture

    fixture = load_fixture(path)
    kind, settings = instrument_kind(fixture)
    name = fixture.instrument["kind"]
    if fixture.simulated:
        return [_try("bench", f"simulated {name} + host DUT", lambda: _open_bench(fixture))]
    checks = [_try("instrument", _target(name, settings), lambda: _open(kind.factory(settings,
                                                                                      None)))]
    if fixture.dut.link == "serial":
        checks.append(_try("dut", str(fixture.dut.port), lambda: _hello(fixture)))
    return checks


def _target(name: str, settings: Any) -> str:
    for attr in ("resource", "port", "conn", "driver"):
        value = getattr(settings, attr, None)
        if value:
            return f"{name} {value}"
    return name


def _try(part: str, target: str, action: Callable[[], str]) -> Check:
    try:
        return Check(part, target, True, action())
    except (EnergyrigError, OSError) as exc:
        return Check(part, target, False, str(exc))


def _open(instrument: Any) -> str:
    with instrument:
        info = instrument.describe()
    return str(info.get("idn") or info.get("device") or info.get("kind") or "answers")


def _hello(fixture: Any) -> str:
    from energyrig.rig.dut import Dut, SerialTransport

    transport = SerialTransport(fixture.dut.port, fixture.dut.baudrate)
    try:
        hello = Dut(transport, fixture.dut.timeout_s).hello()
    finally:
        transport.close()
    return f"firmware {hello.get('firmware')} on {hello.get('board')}"


def _open_bench(fixture: Any) -> str:
    from energyrig.rig.bench import Bench

    with Bench(fixture) as bench:
        info = bench.describe()
    return (f"firmware {info['firmware'].get('firmware')}; instrument "
            f"{info['instrument'].get('idn') or info['instrument'].get('kind', '')}")
