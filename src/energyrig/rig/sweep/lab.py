"""A sweep on a labgrid lab: the lab it holds, and the benches of its places."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from energyrig.errors import ConfigError
from energyrig.fixtures.schema import Fixture
from energyrig.rig.sweep.boards import BenchFactory
from energyrig.rig.sweep.lanes import Slot, place_slots


@dataclass(frozen=True)
class Lab:
    """A labgrid lab to sweep on (:func:`energyrig.rig.sweep.lanes.place_slots`).

    Attributes
    ----------
    coordinator:
        The coordinator's ``HOST:PORT``.
    places:
        The places to measure on; each carries a ``board`` tag naming a plan fixture's board.
    calibration:
        As :class:`energyrig.rig.bench.Bench`'s, for every place's bench.
    """

    coordinator: str
    places: tuple[str, ...]
    calibration: str | None = "latest"

    @classmethod
    def from_record(cls, record: Mapping[str, Any], calibration: str | None) -> Lab:
        """The lab a run's manifest recorded (``lab``)."""
        return cls(str(record["coordinator"]), tuple(p["place"] for p in record["places"]),
                   calibration)


@contextlib.contextmanager
def lab_benches(lab: Lab, fixtures: Sequence[Fixture]
                ) -> Iterator[tuple[BenchFactory, dict[str, list[Slot]]]]:
    """Hold ``lab``'s places for the ``with`` block: yields a bench factory that opens each
    fixture's board on one of its places (for :func:`survey`) and the places of each
    fixture's board (by ``[dut] board``).

    Raises
    ------
    ConfigError
        A fixture's board is carried by none of the places.
    LabError
        A place cannot be acquired or carries a board no fixture has.
    """
    with place_slots(lab.coordinator, lab.places, fixtures, lab.calibration) as slots:
        by_board: dict[str, list[Slot]] = {}
        for slot in slots:
            by_board.setdefault(slot.board, []).append(slot)
        for fx in fixtures:
            if fx.dut.board not in by_board:
                raise ConfigError(fx.path, "dut.board",
                                  f"no place of {', '.join(lab.places)} carries board "
                                  f"{fx.dut.board!r} (tag one: labgrid-client -p PLACE "
                                  f"set-tags board={fx.dut.board})")
        yield (lambda fx: by_board[fx.dut.board][0].open()), by_board


def lab_record(lab: Lab, slots: Mapping[str, Sequence[Slot]]) -> dict[str, Any]:
    """The manifest's record of ``lab`` and the places of each board (``lab``)."""
    return {"coordinator": lab.coordinator,
            "places": [{"place": s.name, "board": s.board, "host": s.host}
                       for group in slots.values() for s in group]}
