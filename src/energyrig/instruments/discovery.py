"""Find the power instruments attached to this host: :func:`find_instruments`.

Each family searches in its own way (``Family.scan``): PPK2s on USB serial (what
``ppk2-api``'s ``list_devices`` matches: USB product ``PPK2``, Nordic's VID:PID
``1915:C00A``), VISA resources the pure-Python pyvisa-py backend can see, each asked
``*IDN?`` for its dialect (``scope``), and sigrok devices (``sigrok-cli --scan``). A family
that cannot be searched (no sigrok-cli, no USB permission) is reported as a problem, not an
exception.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable

from energyrig.errors import EnergyrigError
from energyrig.instruments.family import Found
from energyrig.instruments.registry import FAMILIES

log = logging.getLogger(__name__)


def find_instruments(kinds: Iterable[str] = tuple(FAMILIES)) -> tuple[list[Found],
                                                                        dict[str, str]]:
    """Search the families of ``kinds``; returns what was found and ``kind -> problem`` for
    those that could not be searched."""
    found: list[Found] = []
    problems: dict[str, str] = {}
    for kind in kinds:
        try:
            found += FAMILIES[kind].scan()
        except (EnergyrigError, OSError, ValueError, ImportError) as exc:
            problems[kind] = str(exc)
            log.info("instrument search %s failed: %s", kind, exc)
    return found, problems
