"""Does a fixture answer? :func:`check_fixture` opens every part of it.

The instrument is opened and identified (its :class:`~energyrig.instruments.family.
InstrumentInfo`: what it calls itself and where it was reached); a DUT on a serial port must
answer ``hello``; on a simulated fixture the whole bench with its emulator and host DUT is
opened. One :class:`Check` per part says what does not answer and why.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from energyrig.errors import EnergyrigError
from energyrig.fixtures import Fixture, load_fixture
from energyrig.instruments.base import InstrumentInfo
from energyrig.instruments.registry import family
from energyrig.rig.bench import open_bench
from energyrig.rig.dut import open_dut

if TYPE_CHECKING:
    from energyrig.instruments.base import Acquisition

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Check:
    """The outcome of opening one part of a fixture.

    Attributes
    ----------
    part:
        ``"instrument"``, ``"dut"`` or ``"bench"`` (a simulated fixture, opened whole).
    target:
        What was opened (``ppk2 /dev/ttyACM0``).
    ok:
        Whether it answered.
    detail:
        Who answered (name and address), or why it did not.
    """

    part: str
    target: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_fixture(path: str | None) -> list[Check]:
    """Open each part of the fixture at ``path`` (the default fixture if ``None``).

    Raises
    ------
    ConfigError
        The fixture itself is malformed (nothing can be checked).
    """
    fixture = load_fixture(path)
    kind = fixture.instrument.kind
    if fixture.simulated:
        return [_try("bench", f"simulated {kind} + host DUT", lambda: _open_bench(fixture))]
    checks = [_check_instrument(fixture)]
    if fixture.dut.link == "serial":
        checks.append(_try("dut", str(fixture.dut.port), lambda: _hello(fixture)))
    return checks


def _try(part: str, target: str, action: Callable[[], str]) -> Check:
    try:
        return Check(part, target, True, action())
    except (EnergyrigError, OSError) as exc:
        return Check(part, target, False, str(exc))


def _named(info: InstrumentInfo) -> str:
    """``name at address`` (the kind when the instrument gave no name)."""
    return f"{info.name or info.kind} at {info.address}"


def _check_instrument(fixture: Fixture) -> Check:
    kind = fixture.instrument.kind
    try:
        instrument = family(kind).open(fixture.instrument, None)
    except (EnergyrigError, OSError) as exc:  # e.g. no PPK2 on USB to pick
        return Check("instrument", kind, False, str(exc))
    return _try("instrument", f"{kind} {instrument.describe().address}",
                lambda: _identify(instrument))


def _identify(instrument: Acquisition) -> str:
    with instrument:
        return _named(instrument.describe())


def _hello(fixture: Fixture) -> str:
    with open_dut(fixture) as dut:
        hello = dut.hello()
    return f"firmware {hello.get('firmware')} on {hello.get('board')}"


def _open_bench(fixture: Fixture) -> str:
    with open_bench(fixture) as bench:
        info = bench.instrument.describe()
        firmware = bench.hello.get("firmware")
    return f"firmware {firmware}; instrument {_named(info)}"
