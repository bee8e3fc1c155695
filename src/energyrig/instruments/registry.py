"""Every instrument family the rig knows: :data:`FAMILIES`, :func:`family` and the fixture's
:data:`InstrumentConfig`.

Adding a family is a folder (docs/ARCHITECTURE.md, "A new instrument family") and one line
below, importing its record; the fixture's table, the search, the capture files and the lab
all follow from the records, and nothing else branches on the kind. Imports only the family
records; their config models (pydantic) only when :data:`InstrumentConfig` or a family's
``config`` is first used, so the table of capture files stays cheap.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Union

from energyrig.errors import InstrumentError
from energyrig.instruments.family import Family
from energyrig.instruments.joulescope.family import FAMILY as JOULESCOPE
from energyrig.instruments.lpm01a.family import FAMILY as LPM01A
from energyrig.instruments.otii.family import FAMILY as OTII
from energyrig.instruments.ppk2.family import FAMILY as PPK2
from energyrig.instruments.scope.family import FAMILY as SCOPE
from energyrig.instruments.sigrok.family import FAMILY as SIGROK

#: ``kind -> family``, in the order ``rig instruments`` searches them.
FAMILIES: Mapping[str, Family] = {f.kind: f for f in (PPK2, SCOPE, SIGROK, JOULESCOPE,
                                                            LPM01A, OTII)}


def __getattr__(name: str) -> Any:
    """``InstrumentConfig``, a fixture's ``[instrument]`` table: the config model of the
    family its ``kind`` names (a union built from :data:`FAMILIES`, told apart by ``kind``).
    Built on first use (it imports every family's pydantic model): the capture files'
    table, which ``rig analyze`` reads, needs only the records."""
    if name != "InstrumentConfig":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from pydantic import Field

    union = Annotated[Union[tuple(f.config for f in FAMILIES.values())],  # noqa: UP007 (built at run time)
                      Field(discriminator="kind")]
    globals()["InstrumentConfig"] = union
    return union


def family(kind: str) -> Family:
    """The family of fixture ``kind``.

    Raises
    ------
    InstrumentError
        No family has that kind (the message lists those that do).
    """
    try:
        return FAMILIES[kind]
    except KeyError:
        raise InstrumentError(f"unknown instrument kind {kind!r} "
                              f"(known: {', '.join(FAMILIES)})") from None
