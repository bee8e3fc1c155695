"""Every instrument family the rig knows: :data:`FAMILIES`, :func:`family` and the fixture's
:data:`InstrumentConfig`.

Adding a family is a folder with its ``config.py`` and ``family.py`` and one entry in each of
the two tables below; nothing else branches on the kind. Imports only the family records and
their config models (pydantic), so loading a fixture stays cheap.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import Field

from energyrig.errors import InstrumentError
from energyrig.instruments.family import Family
from energyrig.instruments.joulescope.config import JoulescopeConfig
from energyrig.instruments.joulescope.family import FAMILY as JOULESCOPE
from energyrig.instruments.ppk2.config import Ppk2Config
from energyrig.instruments.ppk2.family import FAMILY as PPK2
from energyrig.instruments.scope.config import ScopeConfig
from energyrig.instruments.scope.family import FAMILY as SCOPE
from energyrig.instruments.sigrok.config import SigrokConfig
from energyrig.instruments.sigrok.family import FAMILY as SIGROK

#: ``kind -> family``, in the order ``rig instruments`` searches them.
FAMILIES: Mapping[str, Family] = {f.kind: f for f in (PPK2, SCOPE, SIGROK, JOULESCOPE)}

#: A fixture's ``[instrument]`` table: the config model of the family its ``kind`` names.
InstrumentConfig = Annotated[Ppk2Config | ScopeConfig | SigrokConfig | JoulescopeConfig,
                             Field(discriminator="kind")]


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
