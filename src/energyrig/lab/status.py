"""What ``rig lab status`` shows: each place, its board, who holds it, whether its resources
are there, and the last calibration of its bench.

The last calibration is found without opening the instrument (a held place cannot be, and
opening a free one would take it from whoever acquires it next): in the calibration store of
the fixture of the place's board (the fixture whose ``[dut] board`` is the place's ``board``
tag, as :func:`energyrig.rig.sweep.lanes.place_slots` pairs them), the newest record measured on
that board with that instrument kind. The instrument's serial number is not known until it
is opened, so two benches of one board and one instrument kind sharing a store show the same
record; give each bench its own fixture (and store) to tell them apart.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime

from energyrig.calibration.store import CalibrationStore, calibration_dir
from energyrig.fixtures.schema import Fixture
from energyrig.lab.place import LabClient


@dataclass(frozen=True)
class LastCalibration:
    """The newest calibration record of a place's bench (:mod:`energyrig.calibration.store`)."""

    id: str
    created_utc: datetime
    instrument: str
    quantities: tuple[str, ...]


@dataclass(frozen=True)
class PlaceStatus:
    """One place as ``rig lab status`` shows it.

    Attributes
    ----------
    name, board, host:
        The place, its ``board`` tag and the exporter host serving its DUT port.
    holder:
        Who holds it (``host/user``), or ``None`` when it is free.
    available:
        Its ``dut`` and ``instrument`` resources are both there (their exporter is up).
    resources:
        Names of its resources.
    calibration:
        The last calibration of its bench, or ``None`` (no fixture for its board, no record).
    """

    name: str
    board: str
    host: str
    holder: str | None
    available: bool
    resources: tuple[str, ...]
    calibration: LastCalibration | None

    def as_dict(self) -> dict[str, object]:
        d = asdict(self)
        if self.calibration is not None:
            d["calibration"]["created_utc"] = self.calibration.created_utc.isoformat()
        return d


def last_calibration(fixture: Fixture, board: str) -> LastCalibration | None:
    """The newest record of ``fixture``'s store measured on ``board`` with the fixture's
    instrument kind (the module docstring says why not by serial number)."""
    kind = fixture.instrument.kind
    for _, record in reversed(CalibrationStore(calibration_dir(fixture)).records()):
        if record.board == board and record.instrument.kind == kind:
            return LastCalibration(id=record.id, created_utc=record.created_utc,
                                   instrument=record.instrument.label,
                                   quantities=tuple(sorted(record.values)))
    return None


def lab_status(coordinator: str | None, fixtures: Sequence[Fixture] = ()) -> list[PlaceStatus]:
    """Every place of the lab at ``coordinator`` (``None``: ``$LG_COORDINATOR``), with the
    last calibration found through ``fixtures`` (paired with the places by board)."""
    client = LabClient(coordinator)
    by_board: dict[str, Fixture] = {}
    for fx in fixtures:
        by_board.setdefault(fx.dut.board, fx)
    rows = []
    for name in client.places():
        info = client.show(name)
        fixture = by_board.get(info.board)
        rows.append(PlaceStatus(
            name=name, board=info.board, host=info.host, holder=info.acquired,
            available=info.available, resources=tuple(sorted(info.resources)),
            calibration=None if fixture is None else last_calibration(fixture, info.board)))
    return rows
